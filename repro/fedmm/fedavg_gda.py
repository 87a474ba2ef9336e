"""FedAvgGDA, Algorithm 2 of paper 004 with L_i = f_i (docs/decisions.md#fedmm-baselines): the local
GDA of :mod:`repro.fedmm.local_gda` with no prox and no duals, followed by plain averaging. Also the
round of FedProxGDA (:mod:`repro.fedmm.fedprox_gda`, the prox term on) and FedSGDA
(:mod:`repro.fedmm.fedsgda`, one local step).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from repro.fedmm.blocks import Block, check_blocks
from repro.fedmm.federated import Federated, FedState
from repro.fedmm.local_gda import check_local_steps
from repro.fedmm.messages import Broadcast, RoundMessages, Upload

Tensor = torch.Tensor


@dataclass(frozen=True)
class FedAvgGDAConfig:
    """FedAvgGDA hyperparameters: the blocks (each block's ``mu`` unused) and the local GDA
    steps M of Alg. 2 lines 9-12 (20 in Sec. 6's experiments).
    """

    blocks: tuple[Block, ...]
    local_steps: int = 20

    def __post_init__(self) -> None:
        object.__setattr__(self, "blocks", check_blocks(self.blocks))
        check_local_steps(self.local_steps)


class FedAvgGDA(Federated):
    """Algorithm 2 with L_i = f_i: ``FedAvgGDA(problem, config, *, init=None, rng=None,
    backend="vectorized", local_solver=None)`` (:class:`repro.fedmm.federated.Federated`).
    """

    PROX = False  # Alg. 2 line 6's prox term (FedProxGDA's L_i)

    def step(self) -> RoundMessages:
        s = self.state
        down = Broadcast(s.round, s.theta0.clone())
        mu = self.mu if self.PROX else None
        local = self.local_solver(down.theta0, s.round, self.eta, self.scale, mu, None)
        uploads = tuple(Upload(i, local[i]) for i in range(self.n_clients))
        self.state = FedState(s.round + 1, self.aggregate(uploads), local, None)
        return RoundMessages(s.round + 1, (down,), uploads)
