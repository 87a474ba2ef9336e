"""The round every algorithm of paper 004 shares: broadcast theta0^t, local solve, upload,
equal-weight average ((16) / Algorithm 2 line 16), and the state carried between rounds.

All algorithms act on one flat vector ``theta = [omega; psi]`` per party
(:mod:`repro.fedmm.blocks`) and on the clients' player gradients ``G_i``
(:class:`repro.fedmm.problem.PlayerGradient`). The algorithms: :mod:`repro.fedmm.fedmm`
(Algorithm 3), :mod:`repro.fedmm.fedavg_gda` and :mod:`repro.fedmm.fedprox_gda` (Algorithm 2),
:mod:`repro.fedmm.fedsgda`; by name: :mod:`repro.fedmm.methods`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from repro.core.validation import check_range
from repro.fedmm.blocks import Block, as_parameter_vector, block_vectors
from repro.fedmm.local_gda import LocalSolver
from repro.fedmm.messages import RoundMessages, Upload

Tensor = torch.Tensor


@dataclass
class FedState:
    """Everything an algorithm carries between rounds.

    ``theta0``: global (omega0, psi0), shape (D,); ``local``: the clients' last local iterates
    theta_i^{t} (N, D); ``duals``: (lambda_i, beta_i) stacked as (N, D), ``None`` for the
    baselines; ``round``: number of completed rounds t.
    """

    round: int
    theta0: Tensor
    local: Tensor
    duals: Tensor | None


class Federated:
    """Shared round loop: broadcast, local solve, upload, equal-weight average."""

    def __init__(self, blocks: Sequence[Block], theta0: Tensor | np.ndarray, n_clients: int,
                 local_solver: LocalSolver) -> None:
        theta0 = as_parameter_vector(theta0)
        eta, mu, scale = block_vectors(blocks, theta0.dtype, theta0.device)
        if theta0.ndim != 1 or theta0.numel() != eta.numel():
            raise ValueError(f"theta0 must be a vector of length {eta.numel()} (sum of block "
                             f"sizes), got shape {tuple(theta0.shape)}")
        check_range("n_clients", n_clients, low=1)
        self.eta, self.mu, self.scale = eta, mu, scale
        self.n_clients = n_clients
        self.local_solver = local_solver
        self.state = FedState(0, theta0.clone(), theta0.expand(n_clients, -1).clone(), None)

    @staticmethod
    def aggregate(uploads: Sequence[Upload]) -> Tensor:
        """(16) / Alg. 2 line 16: the unweighted mean of the uploaded vectors."""
        return torch.stack([u.theta for u in uploads]).mean(dim=0)

    def run(self, rounds: int, callback: Callable[[int, RoundMessages], None] | None = None):
        for _ in range(rounds):
            msgs = self.step()
            if callback is not None:
                callback(self.state.round, msgs)
        return self.state
