"""FedAvgGDA, Algorithm 2 of paper 004 with L_i = f_i (specs/fedmm.md §2): the local GDA of
:mod:`repro.fedmm.local_gda` with no prox and no duals, followed by plain averaging.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from repro.fedmm.blocks import Block
from repro.fedmm.federated import Federated, FedState
from repro.fedmm.local_gda import LocalSolver
from repro.fedmm.messages import Broadcast, RoundMessages, Upload

Tensor = torch.Tensor


@dataclass(frozen=True)
class BaselineConfig:
    """FedAvgGDA / FedProxGDA / FedSGDA hyperparameters: the blocks and ``prox`` on/off.

    With ``prox`` each block's ``mu`` is the FedProx coefficient of Alg. 2 line 6.
    """

    blocks: tuple[Block, ...]
    prox: bool = False

    def __post_init__(self) -> None:
        if not self.blocks:
            raise ValueError("blocks must be non-empty, got ()")


class FedAvgGDA(Federated):
    """Algorithm 2 with L_i = f_i (or, with ``prox``, FedProxGDA's L_i of line 6)."""

    def __init__(self, config: BaselineConfig, theta0: Tensor, n_clients: int,
                 local_solver: LocalSolver) -> None:
        super().__init__(config.blocks, theta0, n_clients, local_solver)
        self.config = config

    def step(self) -> RoundMessages:
        s = self.state
        down = Broadcast(s.round, s.theta0.clone())
        mu = self.mu if self.config.prox else None
        local = self.local_solver(down.theta0, s.round, self.eta, self.scale, mu, None)
        uploads = tuple(Upload(i, local[i]) for i in range(self.n_clients))
        self.state = FedState(s.round + 1, self.aggregate(uploads), local, None)
        return RoundMessages(down, uploads)
