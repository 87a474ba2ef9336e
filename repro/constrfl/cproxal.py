"""Algorithm 3 (Appendix D): the centralized proximal AL method cProx-AL.

    w^{k+1} ≈ argmin ell_k(w) = f(w) + (1/(2 beta)) (||[mu^k + beta c(w)]_+||^2 - ||mu^k||^2)
                                + (1/(2 beta)) ||w - w^k||^2,   dist_inf(0, ∂ell_k) <= tau_k
    mu^{k+1} = [mu^k + beta c(w^{k+1})]_+
    stop if ||w^{k+1} - w^k||_inf + beta tau_k <= beta eps1 and ||mu^{k+1} - mu^k||_inf <= beta eps2

``ell_k`` is the sum of the parties' merits P_{i,k} (their prox weights add to 1/(2 beta) in
the paper; (n+1)/(2(n+2) beta) in the reference LCQP script, D11). tau_k is the same
``s_bar/(k+1)^2`` as Algorithm 1 (the paper's "nondecreasing" is a typo, specs/constrfl.md §8.7
item 6).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from repro.constrfl.config import ProxALConfig
from repro.constrfl.merit import Merit, multiplier_update
from repro.constrfl.problem import Problem
from repro.constrfl.subsolvers import solve

__all__ = ["CentralProxAL", "SumMerit"]


@dataclass(frozen=True)
class SumMerit:
    """``ell_k(w) = sum_i P_{i,k}(w)`` as a one-party merit (points of shape (1, d))."""

    merits: tuple[Merit, ...]

    def _each(self, W, name):
        out = 0.0
        for m in self.merits:
            Wb = np.broadcast_to(W[0], (m.block.size, W.shape[1]))
            out = out + getattr(m, name)(Wb).sum(axis=0)
        return out[None]

    def value(self, W):
        return self._each(W, "value")

    def grad(self, W):
        return self._each(W, "grad")

    def hess(self, W):
        return self._each(W, "hess")

    def value_grad(self, W):
        v, g = 0.0, 0.0
        for m in self.merits:
            vm, gm = m.value_grad(np.broadcast_to(W[0], (m.block.size, W.shape[1])))
            v, g = v + vm.sum(axis=0), g + gm.sum(axis=0)
        return np.atleast_1d(v), g[None]


@dataclass
class CentralState:
    k: int
    w: np.ndarray
    mu0: np.ndarray
    mus: list[np.ndarray]
    stopped: bool = False
    residuals: list[float] = field(default_factory=list)


class CentralProxAL:
    """Algorithm 3 on the pooled data of a :class:`Problem`."""

    def __init__(self, problem: Problem, config: ProxALConfig, w0: np.ndarray):
        self.problem, self.config = problem, config
        self.state = CentralState(0, problem.check_w("w0", w0).copy(),
                                  np.zeros((1, problem.server.m)),
                                  [np.zeros((b.size, b.m)) for b in problem.clients])
        blocks = [problem.server, *problem.clients]
        if all(b.quadratic_merit for b in blocks):
            self.method = "exact"
        elif all(b.convex_constraints for b in blocks) and config.solver in ("auto", "newton"):
            self.method = "newton"
        elif config.solver == "newton_clip":
            self.method = "newton_clip"
        else:
            self.method = "lbfgsb"

    @property
    def prox(self) -> float:
        c = self.config
        return 1.0 / ((self.problem.n + c.prox_den_offset) * c.beta)

    def ell(self) -> SumMerit:
        s, c = self.state, self.config
        ms = [Merit(self.problem.server, s.mu0, s.w, c.beta, self.prox)]
        ms += [Merit(b, mu, s.w, c.beta, self.prox)
               for b, mu in zip(self.problem.clients, s.mus, strict=True)]
        return SumMerit(tuple(ms))

    def step(self) -> None:
        s, c = self.state, self.config
        tau = c.tau(s.k)
        ell = self.ell()
        if self.method == "exact":
            Q = sum(m.quadratic_form()[0].sum(axis=0) for m in ell.merits)
            p = sum(m.quadratic_form()[1].sum(axis=0) for m in ell.merits)
            w_new = np.linalg.solve(Q, -p)
            res = float(np.max(np.abs(Q @ w_new + p)))
        else:
            W, info = solve(self.method, ell, s.w[None], np.zeros((1, s.w.size)), 0.0, s.w,
                            c.cprox_tol_factor * tau)
            w_new, res = W[0], float(info.residual[0])
        s.residuals.append(res)
        mu0_new = multiplier_update(self.problem.server, s.mu0, w_new[None], c.beta)
        dmu = float(np.max(np.abs(mu0_new - s.mu0), initial=0.0))
        new = []
        for b, mu in zip(self.problem.clients, s.mus, strict=True):
            mu_new = multiplier_update(b, mu, np.broadcast_to(w_new, (b.size, w_new.size)),
                                       c.beta)
            dmu = max(dmu, float(np.max(np.abs(mu_new - mu), initial=0.0)))
            new.append(mu_new)
        dw = float(np.max(np.abs(w_new - s.w)))
        tau_term = c.beta * tau if c.cprox_tau_in_stop else 0.0
        s.w, s.mu0, s.mus, s.k = w_new, mu0_new, new, s.k + 1
        s.stopped = dw + tau_term <= c.beta * c.eps1 and dmu <= c.beta * c.eps2

    def run(self) -> CentralState:
        while not self.state.stopped and self.state.k < self.config.cprox_k_max:
            self.step()
        return self.state


