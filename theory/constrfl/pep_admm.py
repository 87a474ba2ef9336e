"""Algorithm 2 (exact solves) as a performance-estimation problem, and its worst quadratics.

The class of Lemma B.3 / Theorem 4.2: ``P_0, ..., P_n`` sigma-strongly convex (17) with
L-Lipschitz gradients (62) (``F_{sigma, L}``), ``h = 0``, equal penalties ``rho_i = rho``. One
round of Algorithm 2 with exact solves, from a state ``(u_i^t, lambda_i^t)`` the method can
reach (``lambda_i^t = -grad P_i(u_i^t)``, which (53) gives with ``e_i = 0`` and line 1 gives at
t = 0)::

    w^{t+1}     = prox_{P_0 / (n rho)}( mean_i (u_i^t + lambda_i^t / rho) )          (18)
    u_i^{t+1}   = prox_{P_i / rho}( w^{t+1} - lambda_i^t / rho )                     (19)
    lambda_i^{t+1} = lambda_i^t + rho (u_i^{t+1} - w^{t+1})                          (20)

The fixed point: ``w~*`` minimises ``sum_i P_i`` and ``lambda_i* = -grad P_i(w~*)`` (54). The
potential (63) ``S_t = sum_i rho/2 ||w~* - u_i^t||^2 + 1/(2 rho) ||lambda_i* - lambda_i^t||^2``.

Metrics (the PEP maximises one with ``S_t <= 1``): ``"potential"`` ``S_{t+1}`` (Lemma B.3's
factor), ``"w"`` ``||w^{t+1} - w~*||^2`` and ``"u"`` ``||u_1^{t+1} - w~*||^2`` (Lemma 4.2's
``||v - w~*||^2 <= 2 S_t / sigma`` from (58)). The SDP is solved on the class scaled by
``1/rho`` (``rho = 1`` there), which leaves the iterates and the factor unchanged and keeps
Clarabel at status ``optimal``.

Worst quadratics: on ``P_i(x) = h_i x^2 / 2`` in one dimension the round is linear, and the
factor is a generalized eigenvalue; the worst over ``h_i in [sigma, L]`` (vertices, then a local
refinement) attains the PEP's value here (to the SDP's accuracy), with the worst direction an
eigenvector of the round, so a long run on that instance meets the factor at every late round.
"""

from __future__ import annotations

import itertools

import numpy as np
import scipy.linalg
import scipy.optimize
import scipy.special

from theory.core.pep import PEPSolution, solve_pep

__all__ = ["admm_pep", "quadratic_map", "quadratic_ratio", "quadratic_worst",
           "quadratic_worst_state"]


def admm_pep(n: int, sigma: float, L: float, rho: float, metric: str = "potential",
             steps: int = 1, start: str = "reachable") -> PEPSolution:
    """The worst case of ``metric`` after ``steps`` rounds over ``F_{sigma, L}`` with
    ``S_0 <= 1``; ``start``: ``"reachable"`` (any ``u_i``, ``lambda_i = -grad P_i(u_i)``),
    ``"any"`` (any ``u_i`` and ``lambda_i``: the states the proof of (58) covers) or
    ``"consensus"`` (line 1: ``u_i = w~0``). The returned value is in the original scale.
    """
    from PEPit import PEP
    from PEPit.functions import SmoothStronglyConvexFunction
    from PEPit.primitive_steps import proximal_step

    s = rho   # the class scaled by 1/rho: (sigma/rho, L/rho), penalty 1
    pb = PEP()
    P0 = pb.declare_function(SmoothStronglyConvexFunction, mu=sigma / s, L=L / s)
    Ps = [pb.declare_function(SmoothStronglyConvexFunction, mu=sigma / s, L=L / s)
          for _ in range(n)]
    total = P0
    for P in Ps:
        total = total + P
    ws = total.stationary_point()
    lam_s = [-P.gradient(ws) for P in Ps]
    if start in ("reachable", "any"):
        U = [pb.set_initial_point() for _ in range(n)]
    elif start == "consensus":
        U = [pb.set_initial_point()] * n
    else:
        raise ValueError(f"start must be 'reachable', 'any' or 'consensus', got {start!r}")
    Lam = ([pb.set_initial_point() for _ in range(n)] if start == "any"
           else [-P.gradient(u) for P, u in zip(Ps, U, strict=True)])

    def potential(U, Lam):
        out = 0
        for u, lam, lam_star in zip(U, Lam, lam_s, strict=True):
            out = out + 0.5 * (ws - u) ** 2 + 0.5 * (lam_star - lam) ** 2
        return out

    pb.set_initial_condition(potential(U, Lam) <= 1)
    for _ in range(steps):
        ut = U[0] + Lam[0]
        for u, lam in zip(U[1:], Lam[1:], strict=True):
            ut = ut + u + lam
        w, _, _ = proximal_step(ut / n, P0, 1.0 / n)
        U = [proximal_step(w - lam, P, 1.0)[0] for P, lam in zip(Ps, Lam, strict=True)]
        Lam = [lam + (u - w) for u, lam in zip(U, Lam, strict=True)]
    if metric == "potential":
        pb.set_performance_metric(potential(U, Lam))
        scale = 1.0
    elif metric in ("w", "u"):
        pb.set_performance_metric((w - ws) ** 2 if metric == "w" else (U[0] - ws) ** 2)
        scale = 1.0 / s   # ||v - w~*||^2 / S: S is scaled by 1/s, distances are not
    else:
        raise ValueError(f"metric must be 'potential', 'w' or 'u', got {metric!r}")
    sol = solve_pep(pb)
    return PEPSolution(sol.value * scale, sol.primal * scale, sol.gap, sol.status, sol.seconds,
                       sol.gram)


def quadratic_map(H0: np.ndarray, Hs: list[np.ndarray], rho: float):
    """One exact round on quadratics ``P_i = ½ xᵀH_i x`` (deviations from the fixed point), on
    the state ``du = (du_1, ..., du_n)`` (``dlambda_i = -H_i du_i``): returns ``(M, B, D)``
    with ``du' = M du``, ``dw' = B du`` and ``S = duᵀ D du``.
    """
    n, d = len(Hs), H0.shape[0]
    eye = np.eye(d)
    A0 = np.linalg.inv(H0 + n * rho * eye)
    Ai = [np.linalg.inv(H + rho * eye) for H in Hs]
    # dw = A0 sum_i (rho du_i + dlambda_i) = A0 sum_i (rho I - H_i) du_i
    B = np.hstack([A0 @ (rho * eye - H) for H in Hs])
    rows = []
    for Ainv in Ai:
        row = rho * Ainv @ B
        blocks = [row[:, j * d:(j + 1) * d] for j in range(n)]
        rows.append(blocks)
    M = np.block(rows)
    for i, (H, Ainv) in enumerate(zip(Hs, Ai, strict=True)):
        M[i * d:(i + 1) * d, i * d:(i + 1) * d] += Ainv @ H    # -A_i dlambda_i = A_i H_i du_i
    D = scipy.linalg.block_diag(*[0.5 * rho * eye + H @ H / (2 * rho) for H in Hs])
    return M, B, D


def quadratic_worst_state(H0, Hs, rho: float, metric: str = "potential"):
    """``(value, du)``: the worst one-round value of ``metric`` over states with ``S_t = 1`` on
    one quadratic instance (the largest generalized eigenvalue of ``(MᵀDM, D)`` for the
    potential, of ``(BᵀB, D)`` for ``"w"``, of ``(M_1ᵀM_1, D)`` for ``"u"`` with ``M_1`` the
    first client's rows) and the state ``du`` that attains it.
    """
    M, B, D = quadratic_map(np.atleast_2d(H0), [np.atleast_2d(H) for H in Hs], rho)
    d = np.atleast_2d(H0).shape[0]
    top = {"potential": lambda: M.T @ D @ M, "w": lambda: B.T @ B,
           "u": lambda: M[:d].T @ M[:d]}[metric]()
    vals, vecs = scipy.linalg.eigh(top, D)
    return float(vals[-1]), vecs[:, -1]


def quadratic_ratio(H0, Hs, rho: float, metric: str = "potential") -> float:
    """The value of :func:`quadratic_worst_state`."""
    return quadratic_worst_state(H0, Hs, rho, metric)[0]


def quadratic_worst(n: int, sigma: float, L: float, rho: float,
                    metric: str = "potential") -> tuple[float, np.ndarray]:
    """``(value, h)``: the worst one-dimensional quadratic instance ``h = (h_0, ..., h_n)`` in
    ``[sigma, L]``: every vertex of the box, then Nelder-Mead (in a logistic parametrisation)
    from the three best vertices.
    """
    def value(h):
        return quadratic_ratio(h[0], list(h[1:]), rho, metric)

    verts = sorted((np.array(v) for v in itertools.product((sigma, L), repeat=n + 1)),
                   key=value, reverse=True)

    def neg(x):
        return -value(sigma + (L - sigma) * scipy.special.expit(x))

    best_h = verts[0]
    best = value(best_h)
    for v in verts[:3]:
        x0 = np.log(np.clip((v - sigma) / (L - sigma), 1e-6, 1 - 1e-6))
        x0 = x0 - np.log1p(-np.exp(x0))
        res = scipy.optimize.minimize(neg, x0, method="Nelder-Mead",
                                      options={"xatol": 1e-10, "fatol": 1e-15, "maxiter": 4000})
        if -res.fun > best:
            best, best_h = -res.fun, sigma + (L - sigma) * scipy.special.expit(res.x)
    return float(best), np.asarray(best_h, dtype=float)
