"""The package's own Algorithm 2 on the PEP checks' instances, and what the claims measure on it.

* :func:`admm_subproblem`: one subproblem (12) of the QP-ball instance the constrfl rate check
  uses (d = 6, n = 3, beta = 2, ``mu^k = mu* + 0.5``, a random centre ``w^k``), with
  ``w~*`` and ``lambda_i* = -grad P_i(w~*)`` computed in :mod:`theory.constrfl.pep_reference`.
* :func:`quadratic_problem`: a quadratic instance of the class, ``P_i = h_i/2 ||x||^2 + b_iᵀx
  + const`` (data ``A_i = (h_i - prox) I``, no constraint), for the replay of a worst case.
* :func:`run_admm`: the package's ``InexactADMM`` with exact inner solves (tolerance at the
  float floor), every round kept.
* :func:`potentials`: (63) ``S_t`` along the run, from the package's iterates and the
  references; ``S_0`` from line 1's state ``(w~0, -grad P_i(w~0))``.
* :func:`in_class_margin`: the interpolation conditions of ``F_{sigma, L}`` on each round's
  points (``w~*``, ``u_i^t``, ``u_i^{t+1}`` for P_i; ``w~*``, ``w^{t+1}`` for P_0), the hypothesis
  of the tight value measured on what the package did.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from repro.constrfl.admm import ClientSide, InexactADMM, ServerSide
from repro.constrfl.blocks import QuadraticBlock
from repro.constrfl.config import ProxALConfig, ReferenceFlags
from repro.constrfl.instances import qp_ball
from repro.constrfl.merit import Merit
from repro.constrfl.problem import Problem
from theory.constrfl.pep_reference import Party, kkt_pair, minimise, parties_of

__all__ = ["Subproblem", "admm_subproblem", "build_admm", "in_class_margin", "potentials",
           "quadratic_problem", "replay", "run_admm", "run_until"]


@dataclass
class Subproblem:
    """One subproblem (12): the package's problem and multipliers, the theory-side parties
    ``[P_0, ..., P_n]``, ``w~*`` and ``lambda*``.
    """

    problem: Problem
    mu0: np.ndarray
    mus: np.ndarray
    center: np.ndarray
    beta: float
    parties: list[Party]
    w_star: np.ndarray
    lam_star: np.ndarray      # (n, d)

    @property
    def n(self) -> int:
        return self.problem.n

    @property
    def sigma(self) -> float:
        return 1.0 / ((self.n + 1) * self.beta)


def _finish(problem, mu0, mus, center, beta) -> Subproblem:
    n = problem.n
    parties = parties_of(problem, mu0, mus, center, beta, 1.0 / ((n + 1) * beta))
    w_star, _ = minimise(parties, center)
    lam = np.stack([-p.grad(w_star) for p in parties[1:]])
    return Subproblem(problem, np.asarray(mu0, float), np.asarray(mus, float), center, beta,
                      parties, w_star, lam)


def admm_subproblem(rng: np.random.Generator, beta: float = 2.0) -> tuple[Subproblem, str]:
    """The QP-ball subproblem; returns it and the KKT solve's status."""
    problem = qp_ball(rng)
    _, mu_star, status = kkt_pair(problem)
    mu_k = [np.maximum(m, 0.0) + 0.5 for m in mu_star]
    center = rng.standard_normal(problem.d)
    return _finish(problem, mu_k[0], np.stack(mu_k[1:]), center, beta), status


def quadratic_problem(h: np.ndarray, rng: np.random.Generator, beta: float,
                      d: int = 1) -> Subproblem:
    """``P_i(x) = h_i/2 ||x||^2 + b_iᵀx + const`` (i = 0..n, ``n = len(h) - 1``) as an instance
    of problem (5) without constraints: ``A_i = (h_i - prox) I`` with the prox weight
    ``1/((n+1) beta)``, which ``h_i >= sigma`` keeps PSD, and a zero equality constraint.
    """
    h = np.asarray(h, dtype=float)
    n = h.size - 1
    prox = 1.0 / ((n + 1) * beta)
    if np.any(h < prox * (1 - 1e-12)):
        raise ValueError(f"every h_i must be >= sigma = {prox}, got {h}")
    eye = np.eye(d)
    A = np.stack([max(hi - prox, 0.0) * eye for hi in h])
    b = rng.standard_normal((n + 1, d))
    server = QuadraticBlock(d, A[:1], b[:1], None, np.zeros((1, 1, d)), np.zeros((1, 1)),
                            equality=True)
    clients = QuadraticBlock(d, A[1:], b[1:], None, np.zeros((n, 1, d)), np.zeros((n, 1)),
                             equality=True)
    problem = Problem(server, (clients,))
    center = rng.standard_normal(d)
    return _finish(problem, np.zeros(1), np.zeros((n, 1)), center, beta)


def build_admm(sub: Subproblem, rho: float, w0: np.ndarray, rounds: int, q: float = 0.5,
               tau: float | None = None) -> InexactADMM:
    """The package's Algorithm 2 on ``sub`` from ``w~0 = w0`` (line 1 done, no round run).

    ``tau=None``: exact inner solves (tolerance ``1e-300 q^t`` floored at 1e-13, float
    precision) and no stop. Otherwise the paper's algorithm with inputs ``(tau, q, rho)``: inner
    tolerance ``q^t`` (floored at 1e-13, which no solver beats in float64), stop test (23) with
    its printed server term ``eps_{t+1}``.
    """
    if tau is None:
        ref = ReferenceFlags(solver_tol_factor=1e-300)
        cfg = ProxALConfig(beta=sub.beta, rho=rho, q=q, t_max=rounds, solver_tol_floor=1e-13,
                           reference=ref)
        tau = 1e-300
    else:
        cfg = ProxALConfig(beta=sub.beta, rho=rho, q=q, t_max=rounds, solver_tol_floor=1e-13,
                           reference=ReferenceFlags(stop_server_term="bound"))
    sm = Merit(sub.problem.server, sub.mu0[None], sub.center, sub.beta, sub.sigma)
    cm = Merit(sub.problem.clients[0], sub.mus, sub.center, sub.beta, sub.sigma)
    clients = ClientSide([cm], rho, cfg, "vectorized")
    server = ServerSide(sm, rho, clients.n, cfg, "vectorized")
    return InexactADMM(server, clients, tau, w0, q=q, t_max=rounds, keep_history=True)


def run_admm(sub: Subproblem, rho: float, w0: np.ndarray, rounds: int, q: float = 0.5,
             tau: float | None = None) -> InexactADMM:
    """:func:`build_admm`, then run (every round kept in ``history``)."""
    admm = build_admm(sub, rho, w0, rounds, q, tau)
    admm.run()
    return admm


def run_until(sub: Subproblem, rho: float, w0: np.ndarray, floor: float,
              cap: int) -> InexactADMM:
    """The package's exact Algorithm 2 from ``w0``, round by round, until ``S_t < floor S_0``
    (float precision has nothing left to measure below) or ``cap`` rounds.
    """
    admm = build_admm(sub, rho, w0, cap)
    S0 = potentials(sub, admm, rho, w0)[0]
    while admm.t < cap:
        admm.step()
        h = admm.history[-1]
        S = (rho / 2 * np.sum((sub.w_star - h["U"][0]) ** 2)
             + np.sum((sub.lam_star - h["Lam"][0]) ** 2) / (2 * rho))
        if S < floor * S0:
            break
    return admm


def potentials(sub: Subproblem, admm: InexactADMM, rho: float, w0: np.ndarray) -> np.ndarray:
    """``S_t``, t = 0..T, of (63) on the package's iterates (``S_0`` from line 1)."""
    U0 = np.broadcast_to(w0, sub.lam_star.shape)
    Lam0 = np.stack([-p.grad(w0) for p in sub.parties[1:]])
    states = [(U0, Lam0)] + [(h["U"][0], h["Lam"][0]) for h in admm.history]
    return np.array([rho / 2 * np.sum((sub.w_star - U) ** 2)
                     + np.sum((sub.lam_star - Lam) ** 2) / (2 * rho) for U, Lam in states])


INTERP_TOL = 1e-9   # relative slack granted to the interpolation conditions (float round-off)


def _interp_gap(p: Party, xs: list[np.ndarray], sigma: float, L: float) -> float:
    """Min over ordered pairs of the F_{sigma,L} interpolation inequality's slack, relative to
    the pair's scale (>= 0: interpolable by a function of the class; a party whose curvature
    is exactly sigma or L along a segment meets it with equality).
    """
    fs = [p.value(x) for x in xs]
    gs = [p.grad(x) for x in xs]
    worst = np.inf
    for i in range(len(xs)):
        for j in range(len(xs)):
            if i == j:
                continue
            dx, dg = xs[i] - xs[j], gs[i] - gs[j]
            rhs = (fs[j] + gs[j] @ (xs[i] - xs[j])
                   + (dg @ dg / L + sigma * dx @ dx - 2 * sigma / L * dg @ dx)
                   / (2 * (1 - sigma / L)))
            scale = L * dx @ dx + dg @ dg / L + 1e-300
            # the values' own float round-off (a few ulps of |f|) is granted: late rounds'
            # points differ by 1e-6, where it is the largest term
            ulps = 1e-15 * (abs(fs[i]) + abs(fs[j]) + abs(gs[j] @ dx))
            worst = min(worst, (fs[i] - rhs + ulps) / scale)
    return float(worst)


def in_class_margin(sub: Subproblem, admm: InexactADMM, w0: np.ndarray, L: float,
                    rounds: list[int]) -> float:
    """``1 + s / INTERP_TOL`` with ``s`` the smallest relative slack of the ``F_{sigma, L}``
    interpolation conditions over the listed rounds t (points of round t -> t+1). ``>= 0``:
    the run's instance is in the class on every point the one-round PEP involves.
    """
    hist = admm.history
    U_prev = np.broadcast_to(w0, sub.lam_star.shape)
    worst = np.inf
    for t in rounds:
        U_t = U_prev if t == 0 else hist[t - 1]["U"][0]
        U_t1, w_t1 = hist[t]["U"][0], hist[t]["w"]
        worst = min(worst, _interp_gap(sub.parties[0], [sub.w_star, w_t1], sub.sigma, L))
        for i, p in enumerate(sub.parties[1:]):
            worst = min(worst, _interp_gap(p, [sub.w_star, U_t[i], U_t1[i]], sub.sigma, L))
    return min(1.0, 1.0 + worst / INTERP_TOL)


def replay(sub: Subproblem, rho: float, du: np.ndarray, rounds: int) -> dict:
    """The package's Algorithm 2 (exact solves) started from the state ``u_i = w~* + du_i``,
    ``lambda_i = -grad P_i(u_i)`` (a state of the one-round PEP's class: the worst direction of
    a quadratic instance), for ``rounds`` rounds: ``S`` (t = 0..rounds) and the server's
    ``||w^{t+1} - w~*||^2`` and client 1's ``||u_1^{t+1} - w~*||^2``.

    The package's line 1 starts every client at the same point; the worst direction (clients
    that disagree while the server does not move) is not reached from there on an instance
    whose worst clients are identical, so the state is set after line 1, through the same
    fields line 1 fills (the clients' ``U``, ``Lam`` and the server's ``u~``).
    """
    U = sub.w_star + np.asarray(du, dtype=float).reshape(sub.lam_star.shape)
    Lam = np.stack([-p.grad(u) for p, u in zip(sub.parties[1:], U, strict=True)])
    admm = build_admm(sub, rho, sub.w_star, rounds)
    admm.clients.U, admm.clients.Lam = [U.copy()], [Lam.copy()]
    admm.clients._merit_cache = [{}]
    admm.server.u_tilde = U + Lam / rho
    admm.run()
    S = [rho / 2 * np.sum((sub.w_star - U) ** 2) + np.sum((sub.lam_star - Lam) ** 2) / (2 * rho)]
    for h in admm.history:
        S.append(rho / 2 * np.sum((sub.w_star - h["U"][0]) ** 2)
                 + np.sum((sub.lam_star - h["Lam"][0]) ** 2) / (2 * rho))
    return {"S": np.array(S),
            "w": np.array([np.sum((h["w"] - sub.w_star) ** 2) for h in admm.history]),
            "u": np.array([np.sum((h["U"][0][0] - sub.w_star) ** 2) for h in admm.history])}
