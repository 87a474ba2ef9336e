"""Algorithm 3 (Appendix D): the centralized proximal AL method cProx-AL.

    w^{k+1} ≈ argmin ell_k(w) = f(w) + (1/(2 beta)) (||[mu^k + beta c(w)]_+||^2 - ||mu^k||^2)
                                + (1/(2 beta)) ||w - w^k||^2,   dist_inf(0, ∂ell_k) <= tau_k
    mu^{k+1} = [mu^k + beta c(w^{k+1})]_+
    stop if ||w^{k+1} - w^k||_inf + beta tau_k <= beta eps1 and ||mu^{k+1} - mu^k||_inf <= beta eps2

``ell_k`` is the sum of the parties' merits P_{i,k} (their prox weights add to 1/(2 beta) in
the paper; (n+1)/(2(n+2) beta) in the reference LCQP script,
docs/decisions.md#constrfl-lcqp-prox-weight). tau_k is the same
``s_bar/(k+1)^2`` as Algorithm 1 (the paper's "nondecreasing" is a typo,
docs/decisions.md#constrfl-paper-errata).

It follows :mod:`repro.core.algorithm`: ``CentralProxAL(problem, config, init=...)``, ``step()``
is one outer iteration k (round k + 1), ``run()`` iterates to its stop test or
``cprox_k_max``. Centralised: the pooled data sit in one place, so its rounds exchange no
messages (empty ``downlink`` and ``uplink``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np

from repro.constrfl.config import ProxALConfig
from repro.constrfl.feasibility import check_feasible
from repro.constrfl.merit import Merit, multiplier_update
from repro.constrfl.problem import Problem
from repro.constrfl.progress import ending, with_progress
from repro.constrfl.start import ProxALInit, paper_start
from repro.constrfl.subsolvers import solve
from repro.core.algorithm import Callback, RoundMessages, Stop, run_rounds

__all__ = ["CentralProxAL", "CentralState", "SumMerit"]


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
    """Algorithm 3's iterates ``(w^k, mu^k)``, whether its stop test held, and the residual
    of each subproblem solve.
    """

    k: int
    w: np.ndarray
    mu0: np.ndarray
    mus: list[np.ndarray]
    stopped: bool = False
    residuals: list[float] = field(default_factory=list)
    k_max: int | None = None

    @property
    def message(self) -> str:
        """How the run ended, in a sentence (the cap it exhausted, if it did)."""
        return ending(self.k, self.stopped, self.k_max, "its stop test", "cprox_k_max")


class CentralProxAL:
    """Algorithm 3 on the pooled data of a :class:`Problem`.

    ``init``: a :class:`~repro.constrfl.start.ProxALInit` ((w^0, mu^0), Algorithm 3's inputs);
    ``None`` is :func:`~repro.constrfl.start.paper_start`. ``rng`` is accepted for the protocol
    and unused (Algorithm 3 draws no random numbers); there is no backend (no clients). Its
    ``step()`` returns an empty :class:`~repro.core.algorithm.RoundMessages`: nothing crosses
    a wire in a centralised method.
    """

    def __init__(self, problem: Problem, config: ProxALConfig, *,
                 init: ProxALInit | None = None, rng: object = None):
        if not isinstance(config, ProxALConfig):
            raise ValueError(f"config must be a ProxALConfig, got {type(config).__name__}")
        if init is not None and not isinstance(init, ProxALInit):
            raise ValueError(f"init must be a ProxALInit or None, got {type(init).__name__}")
        self.problem, self.config = problem, config
        w0, m0, ms = (paper_start(problem) if init is None else init).resolve(problem)
        self.state = CentralState(0, w0, m0, ms, k_max=config.cprox_k_max)
        self.feasibility = None  # what the check before the first round found
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
        return 1.0 / ((self.problem.n + c.reference.prox_den_offset) * c.beta)

    def ell(self) -> SumMerit:
        s, c = self.state, self.config
        ms = [Merit(self.problem.server, s.mu0, s.w, c.beta, self.prox)]
        ms += [Merit(b, mu, s.w, c.beta, self.prox)
               for b, mu in zip(self.problem.clients, s.mus, strict=True)]
        return SumMerit(tuple(ms))

    def step(self) -> RoundMessages:
        """Outer iteration k of Algorithm 3 (round k + 1); no messages (centralised)."""
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
                            c.reference.cprox_tol_factor * tau)
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
        tau_term = c.beta * tau if c.reference.cprox_tau_in_stop else 0.0
        s.w, s.mu0, s.mus, s.k = w_new, mu0_new, new, s.k + 1
        s.stopped = dw + tau_term <= c.beta * c.eps1 and dmu <= c.beta * c.eps2
        return RoundMessages(s.k)

    def run(self, rounds: int | None = None, *, stop: Stop | None = None,
            callback: Callback | None = None, verbose: bool = False) -> CentralState:
        """With neither ``rounds`` nor ``stop``: Algorithm 3's own rule (its stop test, or
        ``cprox_k_max`` iterations, 10,001 by default; ``state.message`` says which). Otherwise
        the generic driver (:func:`repro.core.algorithm.run_rounds`), the stop test not
        consulted. ``callback(round, state, messages)`` after every iteration; ``verbose``: a
        line per iteration on stderr, and the ending. An empty convex constraint set is raised
        before the first round (``config.check_feasibility``), as for Algorithm 1.
        """
        if self.state.k == 0 and self.config.check_feasibility:
            self.feasibility = check_feasible(self.problem, "cProx-AL (Algorithm 3)")
        callback = with_progress(callback, verbose, "cProx-AL")
        if rounds is not None or stop is not None:
            state = run_rounds(self, rounds, stop=stop, callback=callback)
        else:
            while not self.state.stopped and self.state.k < self.config.cprox_k_max:
                messages = self.step()
                if callback is not None:
                    callback(self.state.k, self.state, messages)
            state = self.state
        if verbose:
            print(f"cProx-AL: {state.message}", file=sys.stderr, flush=True)
        return state


