"""Algorithm 1: the proximal augmented Lagrangian FL method (Sec. 3, lines 1-9).

for k = 0, 1, ...
tau_k = s_bar / (k+1)^2                                                       (line 2)
w^{k+1} = Algorithm 2 on (12) from w~0 = w^k, so dist_inf(0, ∂ell_k(w^{k+1})) <= tau_k (10)
mu_0^{k+1} = [mu_0^k + beta c_0(w^{k+1})]_+              (server, line 5)
mu_i^{k+1} = [mu_i^k + beta c_i(w^{k+1})]_+              (client i, line 7)
client i -> server: ||mu_i^{k+1} - mu_i^k||_inf           (line 8)
stop if ||w^{k+1} - w^k||_inf + beta tau_k <= beta eps1
and max_i ||mu_i^{k+1} - mu_i^k||_inf <= beta eps2                        (11)

It follows :mod:`repro.core.algorithm`: ``FedProxAL(problem, config, init=..., backend=...)``,
``step()`` is one outer iteration k (round k + 1) and returns its messages
(:class:`~repro.constrfl.messages.OuterRoundMessages`), ``run()`` iterates to (11) or
``k_max``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np

from repro.constrfl.admm import ClientSide, InexactADMM, ServerSide
from repro.constrfl.config import ProxALConfig
from repro.constrfl.feasibility import check_feasible
from repro.constrfl.merit import Merit, multiplier_update
from repro.constrfl.messages import DualChange, OuterRoundMessages
from repro.constrfl.problem import Problem
from repro.constrfl.progress import ending, with_progress
from repro.constrfl.start import ProxALInit, paper_start
from repro.constrfl.subsolvers import FactorCache, NewtonBreakdown
from repro.core.algorithm import Callback, Stop, run_rounds
from repro.core.validation import DivergenceError

__all__ = ["STOP_CAP", "STOP_CERTIFIED", "STOP_CODES", "STOP_UNCERTIFIED", "FedProxAL",
           "ProxALState"]

# How a run of Algorithm 1 ended (docs/decisions.md#constrfl-caps: record whether (11) was met and,
# per outer iteration, whether (23) was met).
STOP_CERTIFIED = "certified (11)"              # (11) held and the last ADMM call met (23)
STOP_UNCERTIFIED = "(11) on an uncertified call"   # (11) held, the last call hit the T cap
STOP_CAP = "cap"                               # k_max reached without (11)
STOP_CODES = {STOP_CERTIFIED: 0, STOP_UNCERTIFIED: 1, STOP_CAP: 2}


@dataclass
class ProxALState:
    """Everything Algorithm 1 carries between outer iterations."""

    k: int
    w: np.ndarray
    mu0: np.ndarray
    mus: list[np.ndarray]
    stopped: bool = False
    admm_rounds: list[int] = field(default_factory=list)
    admm_certified: list[bool] = field(default_factory=list)
    admm_certificates: list[float] = field(default_factory=list)
    dual_changes: list[float] = field(default_factory=list)
    floats_up: int = 0
    floats_down: int = 0
    client_solver_iterations: int = 0
    k_max: int | None = None

    @property
    def stop_status(self) -> str:
        """``certified (11)``, ``(11) on an uncertified call`` or ``cap``.

        The outer test (11) certifies w^{k+1} only through (10), dist_inf(0, ∂ell_k(w^{k+1}))
        <= tau_k, which Algorithm 2 guarantees only when it stopped by (23): a call that hit
        the T cap leaves (10) unchecked, and (11) fired on it is a small step, not a
        certificate. ``"running"`` before either end.
        """
        if self.stopped:
            certified = bool(self.admm_certified) and self.admm_certified[-1]
            return STOP_CERTIFIED if certified else STOP_UNCERTIFIED
        if self.k_max is not None and self.k >= self.k_max:
            return STOP_CAP
        return "running"

    @property
    def message(self) -> str:
        """How the run ended, in a sentence (the cap it exhausted, if it did)."""
        return ending(self.k, self.stopped, self.k_max, "(11)", "k_max",
                      self.stop_status == STOP_UNCERTIFIED)

    @property
    def certified_stop(self) -> bool:
        """True only for ``certified (11)``: the one ending the paper's guarantee covers (a
        run with any other ending is not converged and is no evidence of a noise band).
        """
        return self.stop_status == STOP_CERTIFIED


class FedProxAL:
    """Algorithm 1 on a :class:`~repro.constrfl.problem.Problem`; ``step()`` = one outer
    iteration (one call of Algorithm 2 plus the multiplier round).

    ``init``: a :class:`~repro.constrfl.start.ProxALInit` (w^0 and the mu_i^0, Algorithm 1's
    inputs); ``None`` is :func:`~repro.constrfl.start.paper_start` (the experiments' trial-0
    w^0, mu^0 = 0). ``rng`` is accepted for the protocol and unused: Algorithm 1 draws no random
    numbers. ``backend``: ``"vectorized"`` (clients of equal size solved as one batch) or
    ``"loop"`` (one client at a time, the equality oracle). ``keep_admm_history``: Algorithm 2
    keeps its per-round iterates (theory checks).
    """

    def __init__(self, problem: Problem, config: ProxALConfig, *,
                 init: ProxALInit | None = None, rng: object = None,
                 backend: str = "vectorized", keep_admm_history: bool = False):
        if backend not in ("vectorized", "loop"):
            raise ValueError(f"backend must be 'vectorized' or 'loop', got {backend!r}")
        if not isinstance(config, ProxALConfig):
            raise ValueError(f"config must be a ProxALConfig, got {type(config).__name__}")
        if init is not None and not isinstance(init, ProxALInit):
            raise ValueError(f"init must be a ProxALInit or None, got {type(init).__name__}")
        self.problem, self.config, self.backend = problem, config, backend
        self.keep_admm_history = keep_admm_history
        w0, m0, ms = (paper_start(problem) if init is None else init).resolve(problem)
        self.w_init = w0
        self.state = ProxALState(0, w0.copy(), m0, ms, k_max=config.k_max)
        self.last_admm = None
        self.feasibility = None  # what the check before the first round found
        # Exact (quadratic) subproblems: Q + rho I is the same in every outer iteration, so its
        # Cholesky factors are computed once per run (docs/decisions.md#constrfl-cost), not once per
        # Algorithm-2 call.
        self.factor_cache = FactorCache()

    @property
    def prox(self) -> float:
        """Prox weight per party: ``1/((n+1) beta)`` (paper) or ``1/((n+2) beta)``
        (docs/decisions.md#constrfl-lcqp-prox-weight).
        """
        c = self.config
        return 1.0 / ((self.problem.n + c.reference.prox_den_offset) * c.beta)

    def merits(self, w_center: np.ndarray) -> tuple[Merit, list[Merit]]:
        s, c = self.state, self.config
        server = Merit(self.problem.server, s.mu0, w_center, c.beta, self.prox)
        clients = [Merit(b, mu, w_center, c.beta, self.prox)
                   for b, mu in zip(self.problem.clients, s.mus, strict=True)]
        return server, clients

    def step(self) -> OuterRoundMessages:
        """Outer iteration k (lines 2-9), round k + 1. Its messages: Algorithm 2's (line 1's
        ``InitialUpload``s, then per ADMM round t the ``Broadcast`` of w^{t+1} and the
        ``ClientUpload``s) and line 8's ``DualChange``s. Line 6's broadcast of w^{k+1} is the
        last ``Broadcast`` of Algorithm 2 (its output is the w^{t+1} it broadcast in its final
        round), so the clients already hold it and it is not sent again (nor counted in
        ``floats_down``).
        """
        s, c = self.state, self.config
        ref = c.reference
        tau = c.tau(s.k)
        server_m, client_ms = self.merits(s.w)
        if ref.server_as_client:
            client_ms = [*client_ms, server_m]
        clients = ClientSide(client_ms, c.rho, c, self.backend, self.factor_cache)
        server = ServerSide(server_m, c.rho, clients.n, c, self.backend, self.factor_cache)
        start = self.w_init if ref.admm_init == "w0" else s.w
        admm = InexactADMM(server, clients, tau, start, q=c.q, t_max=c.t_max,
                           eps_floor=ref.eps_floor, keep_history=self.keep_admm_history)
        try:
            res = admm.run()
        except NewtonBreakdown as exc:
            # Not patched over: the paper's algorithm has no safeguard here
            # (docs/decisions.md#constrfl-caps); the multipliers and the iterate have blown up
            # (docs/deviations.md#constrfl-monks-1-with-20-clients-breakdown), so the cell
            # fails naming the outer iteration and the sizes.
            mu = max(float(np.max(s.mu0, initial=0.0)),
                     *(float(np.max(m, initial=0.0)) for m in s.mus))
            raise DivergenceError(
                s.k, f"cond of the Newton Hessian of party {exc.party} in the "
                f"{exc.where} (max mu^k = {mu:.3g}, "
                f"||w^k||_inf = {float(np.max(np.abs(s.w))):.3g}, ||H||_2 = {exc.hess_norm:.3g}; "
                f"singular in float64, Algorithm 1 outer iteration k = {s.k})", exc.cond) from exc
        self.last_admm = admm
        w_new = res.w
        s.admm_rounds.append(res.rounds)
        s.admm_certified.append(res.certified)
        s.admm_certificates.append(float(res.certificate))
        s.floats_up += res.floats_up
        s.floats_down += res.floats_down
        s.client_solver_iterations += clients.solver_iterations
        mu0_new = multiplier_update(self.problem.server, s.mu0, w_new[None], c.beta)   # line 5
        server_change = float(np.max(np.abs(mu0_new - s.mu0), initial=0.0))
        msgs, j = [], 0
        new_mus = []
        for b, mu in zip(self.problem.clients, s.mus, strict=True):                  # line 7
            W = np.broadcast_to(w_new, (b.size, w_new.size))
            mu_new = multiplier_update(b, mu, W, c.beta)
            for v in np.max(np.abs(mu_new - mu), axis=1, initial=0.0):
                msgs.append(DualChange(j, float(v)))                               # line 8
                j += 1
            new_mus.append(mu_new)
        s.floats_up += sum(m.floats() for m in msgs)
        dmu = max([server_change] + [m.value for m in msgs])
        dw = float(np.max(np.abs(w_new - s.w)))
        s.dual_changes.append(dmu)
        s.w, s.mu0, s.mus = w_new, mu0_new, new_mus
        s.k += 1
        s.stopped = (dw + c.beta * tau <= c.beta * c.eps1) and dmu <= c.beta * c.eps2  # (11)
        uplink = [*admm.initial_uploads, *(u for _, ups in admm.exchanged for u in ups), *msgs]
        return OuterRoundMessages(s.k, downlink=[b for b, _ in admm.exchanged], uplink=uplink)

    def run(self, rounds: int | None = None, *, stop: Stop | None = None,
            callback: Callback | None = None, verbose: bool = False) -> ProxALState:
        """With neither ``rounds`` nor ``stop``: Algorithm 1's own rule, iterate until (11)
        holds or ``k_max`` outer iterations were taken (default caps: ``k_max`` = ``t_max`` =
        10,001; ``state.message`` says which ended the run). Otherwise exactly the generic
        driver (:func:`repro.core.algorithm.run_rounds`): ``rounds`` outer iterations or until
        ``stop(state)``, (11) and ``k_max`` not consulted (``state.stopped`` still says whether
        (11) held at the last one). ``callback(round, state, messages)`` after every outer
        iteration (round = k + 1, ``state.w`` = w^{k+1}); ``verbose``: a line per outer
        iteration on stderr, and the ending.

        Before the first round (``config.check_feasibility``, the default), an empty convex
        constraint set is detected by a small feasibility problem and raised as
        :class:`~repro.constrfl.feasibility.InfeasibleConstraints` instead of running every
        round the caps allow (:mod:`repro.constrfl.feasibility`).
        """
        if self.state.k == 0 and self.config.check_feasibility:
            self.feasibility = check_feasible(self.problem, "Algorithm 1")
        callback = with_progress(callback, verbose, "Algorithm 1")
        if rounds is not None or stop is not None:
            state = run_rounds(self, rounds, stop=stop, callback=callback)
        else:
            while not self.state.stopped and self.state.k < self.config.k_max:
                messages = self.step()
                if callback is not None:
                    callback(self.state.k, self.state, messages)
            state = self.state
        if verbose:
            print(f"Algorithm 1: {state.message}", file=sys.stderr, flush=True)
        return state
