"""The clients' local solver of paper 004: M steps of simultaneous stochastic GDA on the local
objective, with FedMM's prox and dual terms (eqs. (11)-(12)) or without (Algorithm 2, lines
9-12).

In the player form (:mod:`repro.fedmm.problem`) one step of block b is::

    theta <- theta - eta_b [ s_b G_i(theta) + mu_b (theta - theta0^t) + d_i^t ]     (11)/(12)

On psi, ``-[ -grad f + mu2 (psi - psi0) + beta ]`` is exactly the bracket of (12). Clients are
vectorized: the ``vectorized`` backend updates an ``(N, D)`` tensor at once; the ``loop``
backend calls the per-client oracle one client at a time (the equality oracle of the tests and
the baseline of ``bench/fedmm.py``); the ``graphed`` backend (:mod:`repro.fedmm.graphed`) runs the
``vectorized`` update on a whole round's minibatches drawn up front, replayed from a CUDA graph
on a GPU (an oracle with ``round_inputs``, i.e. :class:`repro.fedmm.problem.DAProblem`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from repro.core.validation import check_choice
from repro.fedmm.graphed import GraphedRound
from repro.fedmm.problem import PlayerGradient

Tensor = torch.Tensor
BACKENDS = ("vectorized", "loop", "graphed")


@dataclass(frozen=True)
class LocalGDA:
    """The M-step simultaneous local GDA of (11)-(12) (FedMM), Alg. 2 lines 9-12 (baselines).

    ``prox`` adds ``mu (theta - theta0)``; ``duals`` (N, D) adds ``d_i``; both ``None`` gives
    FedAvgGDA's plain local GDA. One minibatch per step, shared by the omega and psi updates.
    """

    oracle: PlayerGradient
    local_steps: int
    backend: str = "vectorized"
    # the graphed backend's round, built at the first call (its buffers match that call)
    _graphed: list = field(default_factory=list, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_local_steps(self.local_steps)
        check_choice("backend", self.backend, BACKENDS)
        if self.backend == "graphed" and not hasattr(self.oracle, "round_inputs"):
            raise ValueError(f"backend 'graphed' needs an oracle that draws a whole round's "
                             f"minibatches (round_inputs/round_gradient, as DAProblem has); "
                             f"{type(self.oracle).__name__} has not: use 'vectorized' or "
                             f"'loop'")

    def __call__(self, theta0: Tensor, t: int, eta: Tensor, scale: Tensor,
                 mu: Tensor | None, duals: Tensor | None) -> Tensor:
        n = self.oracle.n_clients
        if self.backend == "graphed":
            if not self._graphed:
                self._graphed.append(GraphedRound(self.oracle, self.local_steps,
                                                  mu is not None, duals is not None, theta0))
            return self._graphed[0](theta0, eta, scale, mu, duals)
        if self.backend == "loop":
            return torch.stack([self._one(i, theta0, t, eta, scale, mu,
                                          None if duals is None else duals[i])
                                for i in range(n)])
        theta = theta0.expand(n, -1).clone()
        for m in range(self.local_steps):
            grad = self.oracle.batched(theta, t, m)
            if m == 0:
                _check_gradient("batched", grad, tuple(theta.shape), self.oracle)
            direction = scale * grad
            if mu is not None:
                direction = direction + mu * (theta - theta0)
            if duals is not None:
                direction = direction + duals
            theta = theta - eta * direction
        return theta

    def _one(self, i, theta0, t, eta, scale, mu, dual):
        theta = theta0.clone()
        for m in range(self.local_steps):
            grad = self.oracle.client(i, theta, t, m)
            if m == 0:
                _check_gradient(f"client({i}, ...)", grad, tuple(theta.shape), self.oracle)
            direction = scale * grad
            if mu is not None:
                direction = direction + mu * (theta - theta0)
            if dual is not None:
                direction = direction + dual
            theta = theta - eta * direction
        return theta


def check_local_steps(value: object) -> None:
    """M, the number of local GDA steps: an int >= 1, else a ValueError naming
    ``local_steps``.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"local_steps must be an int >= 1, got {value!r}")


def _check_gradient(call: str, grad: object, shape: tuple, oracle: object) -> None:
    """The oracle's gradient has the parameters' shape, else a ValueError naming the call (a
    wrong width used to surface as a raw torch broadcast RuntimeError).
    """
    got = tuple(getattr(grad, "shape", ()))
    if got != shape:
        raise ValueError(f"{type(oracle).__name__}.{call} returned a gradient of shape {got}; "
                         f"expected {shape}, the shape of the theta it was given (clients x "
                         "the blocks' total dimension): one entry per parameter")


LocalSolver = Callable[[Tensor, int, Tensor, Tensor, Tensor | None, Tensor | None], Tensor]
