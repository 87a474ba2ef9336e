"""Hyperparameters of Algorithms 1-3 (:class:`ProxALConfig`) and the reference code's departures
from them (:class:`ReferenceFlags`).

``ProxALConfig()`` is the paper's algorithm (docs/decisions.md#constrfl-algorithms): the
paper's inputs (beta, s_bar, rho, q, eps1, eps2), the safety caps and how the subproblems are
solved, at top level; every departure of the reference code PL97/Constr_FL
(docs/decisions.md#constrfl-reference-code) is a field of the frozen sub-config
``ProxALConfig.reference`` whose default is the paper, with one exception: the server term of
(23) (``stop_server_term``) defaults to ``"measured"``
(docs/decisions.md#constrfl-server-term-23); the printed form of (23) is ``"bound"``.
``reference_flags(problem)`` is the :class:`ReferenceFlags` the reference script of that problem
uses::

    ProxALConfig(beta=300.0, s_bar=1e-3, rho=0.01, reference=reference_flags("np"))

Both classes validate every field once, when made (a ``ValueError`` naming the field).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from repro.core.validation import check_choice, check_range

__all__ = ["ProxALConfig", "ReferenceFlags", "reference_flags"]


@dataclass(frozen=True)
class ReferenceFlags:
    """The reference code's departures from the paper (docs/deviations.md, constrfl
    reference-code flags); the defaults are the paper's algorithm except ``stop_server_term``.
    Each flag is one entry of docs/decisions.md#constrfl-reference-code and the entries after it.

    Attributes
    ----------
    admm_init : ``"wk"`` (paper, Remark 4.2a) or ``"w0"`` (reference NP script).
    epst_lambda : (22) with ``"old"`` lambda^t (paper) or ``"new"`` lambda^{t+1}.
    epst_u : (22) with ``"old"`` u^t (paper) or ``"new"`` u^{t+1} (LCQP script).
    stop_server_term : the server term of (23): ``"bound"`` eps_{t+1} = q^t (the printed form
        of (23)), ``"measured"`` (default: the recommendation of
        docs/decisions.md#constrfl-server-term-23, not the paper's text) q^t for an iterative server
        solve and the achieved residual for an exact one (the quantity App. B.2's proof bounds),
        ``"none"`` (reference NP/LCQP). On Table 2 (iterative server) ``"measured"`` and
        ``"bound"`` coincide.
    solver_tol_factor : the client/server tolerance is ``solver_tol_factor * eps_{t+1}``
        (1 = paper; the reference scripts use 1e-2 (NP) / 1e-4 (fairness)).
    eps_floor : reference scripts use ``eps_{t+1} = max(eps_floor, q^t)`` (0 = paper).
    prox_den_offset : prox weight per party is ``1/(prox_den_offset + n) / beta``; ``1`` =
        paper (n+1 parties), ``2`` = reference LCQP script ``1/((n+2) beta)``.
    mu0_from_cprox : the reference LCQP script starts Algorithm 1 from cProx-AL's final
        multipliers (the caller passes them as ``init``).
    server_as_client : the reference LCQP script also runs the server slot as an ADMM client.
    cprox_tol_factor : cProx-AL subproblem tolerance factor on tau_k (1 = paper).
    cprox_tau_in_stop : cProx-AL's stop test with the ``beta tau_k`` term (paper) or without
        it (reference LCQP).

    The start point, the NP loader, the fairness hyperparameter set and the LCQP generator
    are not algorithm settings (docs/deviations.md names where each lives).
    """

    admm_init: str = "wk"
    epst_lambda: str = "old"
    epst_u: str = "old"
    stop_server_term: str = "measured"
    solver_tol_factor: float = 1.0
    eps_floor: float = 0.0
    prox_den_offset: int = 1
    mu0_from_cprox: bool = False
    server_as_client: bool = False
    cprox_tol_factor: float = 1.0
    cprox_tau_in_stop: bool = True

    def __post_init__(self) -> None:
        check_choice("admm_init", self.admm_init, ("wk", "w0"))
        check_choice("epst_lambda", self.epst_lambda, ("old", "new"))
        check_choice("epst_u", self.epst_u, ("old", "new"))
        check_choice("stop_server_term", self.stop_server_term, ("bound", "measured", "none"))
        check_range("solver_tol_factor", self.solver_tol_factor, low=0, low_open=True)
        check_range("eps_floor", self.eps_floor, low=0, high=1, high_open=True)
        check_choice("prox_den_offset", self.prox_den_offset, (1, 2))
        check_range("cprox_tol_factor", self.cprox_tol_factor, low=0, low_open=True)
        for name in ("mu0_from_cprox", "server_as_client", "cprox_tau_in_stop"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be a bool, got {getattr(self, name)!r}")

    def changed(self) -> dict:
        """The flags that differ from their defaults, ``{name: value}``."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if getattr(self, f.name) != f.default}

    def replace(self, **changes) -> ReferenceFlags:
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class ProxALConfig:
    """Inputs of Algorithm 1 (eps1, eps2, s_bar, beta), Algorithm 2 (q, rho), the caps, the
    subproblem solver and the reference code's departures (``reference``).

    Attributes
    ----------
    beta, s_bar, rho, q, eps1, eps2 : the paper's inputs; ``tau_k = s_bar / (k+1)^2``.
    k_max, t_max, cprox_k_max : safety caps on outer / ADMM / cProx-AL iterations (not in the
        paper, docs/decisions.md#constrfl-caps; the reference scripts' caps are D6).
    solver : subproblem solver, ``"auto"`` picks exact (quadratic P), Newton (convex c) or
        L-BFGS-B (nonconvex c), docs/decisions.md#constrfl-subproblem-solvers; ``"newton_clip"`` is
        the batched Newton with the Hessian's eigenvalues floored (nonconvex c, all clients of a
        round at once) and ``"lbfgsb"`` the per-client scipy L-BFGS-B kept as its oracle.
    solver_tol_floor : the inner tolerance is at least this (theory checks use a tiny factor and
        a 1e-14 floor for "exact" inner solves; q^t falls below round-off after ~300 rounds).
    hessian_reuse : the batched Newton keeps each client's last Hessian across the rounds of
        one Algorithm-2 call while it gives full steps with a 4-fold residual cut
        (:func:`repro.constrfl.subsolvers.newton_solve`); same stopping rule, less work where a
        Hessian costs many passes over the rows (d = 38: Table 2).
    reference : :class:`ReferenceFlags`, the reference code's departures (default: none).
    check_feasibility : before the first round, ``run()`` decides whether the convex constraint
        set is empty (:mod:`repro.constrfl.feasibility`) and raises
        ``InfeasibleConstraints`` if so (default True); the paper's experiments turn it off to
        run their protocol as the paper did, infeasible instances included.

    ``solver``, ``solver_tol_floor`` and ``hessian_reuse`` choose how the package solves the
    subproblems the paper leaves to "an approximate solution"; they are not the reference
    code's departures and so not in ``reference``.
    """

    beta: float = 10.0
    s_bar: float = 0.1
    rho: float = 1.0
    q: float = 0.9
    eps1: float = 1e-3
    eps2: float = 1e-3
    k_max: int = 10_001
    t_max: int = 10_001
    cprox_k_max: int = 10_001
    solver: str = "auto"
    solver_tol_floor: float = 0.0
    hessian_reuse: bool = False
    reference: ReferenceFlags = field(default_factory=ReferenceFlags)
    check_feasibility: bool = True

    def __post_init__(self) -> None:
        check_range("beta", self.beta, low=0, low_open=True)
        check_range("s_bar", self.s_bar, low=0, low_open=True)
        check_range("rho", self.rho, low=0, low_open=True)
        check_range("q", self.q, low=0, high=1, low_open=True, high_open=True)
        check_range("eps1", self.eps1, low=0, high=1, low_open=True, high_open=True)
        check_range("eps2", self.eps2, low=0, high=1, low_open=True, high_open=True)
        for name in ("k_max", "t_max", "cprox_k_max"):
            check_range(name, getattr(self, name), low=1)
        check_choice("solver", self.solver,
                     ("auto", "exact", "newton", "newton_clip", "lbfgsb"))
        check_range("solver_tol_floor", self.solver_tol_floor, low=0)
        for name in ("hessian_reuse", "check_feasibility"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be a bool, got {getattr(self, name)!r}")
        if not isinstance(self.reference, ReferenceFlags):
            raise ValueError("reference must be a ReferenceFlags (e.g. "
                             f"reference_flags('np')), got {type(self.reference).__name__}")

    def tau(self, k: int) -> float:
        """Line 2 of Algorithm 1: ``tau_k = s_bar / (k+1)^2``."""
        return self.s_bar / (k + 1) ** 2

    def inner_tol(self, eps: float) -> float:
        """Tolerance handed to the subproblem solvers for ``eps_{t+1}``."""
        return max(self.solver_tol_floor, self.reference.solver_tol_factor * eps)

    def replace(self, **changes) -> ProxALConfig:
        return dataclasses.replace(self, **changes)


_REFERENCE = {
    # The NP script's departures (docs/decisions.md#constrfl-reference-code): ADMM start, (22)
    # with the new multiplier, no server term in (23), its solver tolerances and eps floor (its
    # start point and first-row loss are outside the algorithm).
    "np": dict(admm_init="w0", epst_lambda="new", stop_server_term="none",
               solver_tol_factor=1e-2, cprox_tol_factor=1e-3, eps_floor=1e-10),
    # The fairness script's: solver tolerances and eps floor (its hyperparameter set is chosen
    # by the experiment).
    "fairness": dict(solver_tol_factor=1e-4, cprox_tol_factor=1e-4, eps_floor=1e-10,
                     stop_server_term="bound"),
    # The LCQP script's: (22) with the new local iterate, no server term, its prox weight, the
    # server as an ADMM client, cProx-AL's multipliers as the start and cProx-AL's stop test
    # (its instance generator is chosen by the experiment).
    "lcqp": dict(epst_u="new", stop_server_term="none", prox_den_offset=2,
                 server_as_client=True, mu0_from_cprox=True, cprox_tau_in_stop=False),
}


def reference_flags(problem: str) -> ReferenceFlags:
    """The reference script's departures for ``problem`` in {"np", "fairness", "lcqp"}."""
    check_choice("problem", problem, tuple(_REFERENCE))
    return ReferenceFlags(**_REFERENCE[problem])
