"""The clients' local solver of paper 004: M steps of simultaneous stochastic GDA on the local
objective, with FedMM's prox and dual terms (eqs. (11)-(12)) or without (Algorithm 2, lines
9-12).

In the player form (:mod:`repro.fedmm.problem`) one step of block b is::

    theta <- theta - eta_b [ s_b G_i(theta) + mu_b (theta - theta0^t) + d_i^t ]     (11)/(12)

On psi, ``-[ -grad f + mu2 (psi - psi0) + beta ]`` is exactly the bracket of (12). Clients are
vectorized: the ``vectorized`` backend updates an ``(N, D)`` tensor at once; the ``loop``
backend calls the per-client oracle one client at a time (the equality oracle of the tests and
the baseline of ``bench/fedmm.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from repro.core.validation import check_choice, check_range
from repro.fedmm.problem import PlayerGradient

Tensor = torch.Tensor
BACKENDS = ("vectorized", "loop")


@dataclass(frozen=True)
class LocalGDA:
    """The M-step simultaneous local GDA of (11)-(12) (FedMM), Alg. 2 lines 9-12 (baselines).

    ``prox`` adds ``mu (theta - theta0)``; ``duals`` (N, D) adds ``d_i``; both ``None`` gives
    FedAvgGDA's plain local GDA. One minibatch per step, shared by the omega and psi updates.
    """

    oracle: PlayerGradient
    local_steps: int
    backend: str = "vectorized"

    def __post_init__(self) -> None:
        check_range("local_steps", self.local_steps, low=1)
        check_choice("backend", self.backend, BACKENDS)

    def __call__(self, theta0: Tensor, t: int, eta: Tensor, scale: Tensor,
                 mu: Tensor | None, duals: Tensor | None) -> Tensor:
        n = self.oracle.n_clients
        if self.backend == "loop":
            return torch.stack([self._one(i, theta0, t, eta, scale, mu,
                                          None if duals is None else duals[i])
                                for i in range(n)])
        theta = theta0.expand(n, -1).clone()
        for m in range(self.local_steps):
            direction = scale * self.oracle.batched(theta, t, m)
            if mu is not None:
                direction = direction + mu * (theta - theta0)
            if duals is not None:
                direction = direction + duals
            theta = theta - eta * direction
        return theta

    def _one(self, i, theta0, t, eta, scale, mu, dual):
        theta = theta0.clone()
        for m in range(self.local_steps):
            direction = scale * self.oracle.client(i, theta, t, m)
            if mu is not None:
                direction = direction + mu * (theta - theta0)
            if dual is not None:
                direction = direction + dual
            theta = theta - eta * direction
        return theta


LocalSolver = Callable[[Tensor, int, Tensor, Tensor, Tensor | None, Tensor | None], Tensor]
