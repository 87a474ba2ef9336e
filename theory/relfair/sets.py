"""The integrated ambiguity set of paper 002 and the ground truth of its quadratic instances,
written here from the paper's definitions (never read from ``repro.relfair``).

(2): the capped simplex ``Delta_alpha = {a in Delta^{n-1}: a_i <= 1/(alpha n)}``; its vertices
put ``1/(alpha n)`` on ``floor(alpha n)`` coordinates and the remainder on one more.
(7): ``Lambda_phi(A, B) = {(a - phi b)/(1 - phi): a in A, b in B}``. For capped simplices this
is the permutohedron of ``w = (v_alpha - phi v_beta^rev)/(1 - phi)`` (``v`` a vertex sorted
decreasing, ``^rev`` increasing): its support function is the sum of the two sets' support
functions, ``h(s) = sum_i w_i s_(i)`` (decreasing order), attained at a permutation of ``w``.
Hence ``||Lambda||_1 = ||w||_1`` and ``max ||lambda||^2 = ||w||^2``.

The saddle point of (8) for quadratic clients ``f_i(theta) = 0.5 (theta - c_i)' Q_i (theta -
c_i) + e_i`` is computed by its concave dual over ``(a, b) in A x B``:
``g(lambda) = min_theta sum_i lambda_i f_i(theta) = r' lambda - 0.5 x' P^{-1} x`` with
``P = sum lambda_i Q_i``, ``x = sum lambda_i Q_i c_i``, ``r_i = 0.5 c_i' Q_i c_i + e_i``
(a ``matrix_frac`` program, Clarabel), ``theta* = P^{-1} x``; its certificate is the gap
``h(L(theta*)) - g(lambda*)``.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

__all__ = ["CLARABEL", "CLARABEL_TIGHT", "capped_vertex", "dual_step_qp", "fairness_ratio",
           "l1_norm", "quadratic_losses", "random_points", "saddle", "support", "w_vector"]

CLARABEL = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, "max_iter": 200}
# 1e-11 ends "optimal_inaccurate" on some instances; 1e-10 is optimal on every one tried
CLARABEL_TIGHT = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10,
                  "max_iter": 500}


def capped_vertex(n: int, alpha: float) -> np.ndarray:
    """A vertex of ``Delta_alpha`` sorted decreasing: ``k = floor(alpha n)`` entries
    ``1/(alpha n)``, then ``1 - k/(alpha n)`` (0 when alpha n is an integer), then zeros.
    """
    cap = 1.0 / (alpha * n)
    k = min(int(np.floor(alpha * n + 1e-12)), n)
    v = np.zeros(n)
    v[:k] = cap
    if k < n:
        v[k] = max(1.0 - k * cap, 0.0)
    return v


def w_vector(n: int, alpha: float, beta: float, phi: float) -> np.ndarray:
    """The generating vector of ``Lambda_phi(Delta_alpha, Delta_beta)``, decreasing."""
    return (capped_vertex(n, alpha) - phi * capped_vertex(n, beta)[::-1]) / (1.0 - phi)


def l1_norm(n: int, alpha: float, beta: float, phi: float) -> float:
    """``||Lambda_phi||_1 = max_lambda ||lambda||_1 = ||w||_1``."""
    return float(np.abs(w_vector(n, alpha, beta, phi)).sum())


def support(w: np.ndarray, losses: np.ndarray) -> np.ndarray | float:
    """``max_{lambda in P(w)} <lambda, l> = sum_i w_(i) l_(i)`` (both decreasing), last axis."""
    ws = np.sort(np.asarray(w, dtype=float))[::-1]
    out = np.sum(ws * np.sort(np.asarray(losses, dtype=float), axis=-1)[..., ::-1], axis=-1)
    return float(out) if np.ndim(out) == 0 else out


def random_points(rng: np.random.Generator, w: np.ndarray, count: int,
                  vertices: int = 6) -> np.ndarray:
    """``count`` points of ``P(w)``: random convex combinations of random permutations of w."""
    n = w.size
    perms = np.stack([np.stack([rng.permutation(w) for _ in range(vertices)])
                      for _ in range(count)])                   # (count, vertices, n)
    coef = rng.dirichlet(np.ones(vertices), size=count)         # (count, vertices)
    return np.einsum("cv,cvn->cn", coef, perms).reshape(count, n)


def quadratic_losses(Q: np.ndarray, c: np.ndarray, e: np.ndarray, theta: np.ndarray
                     ) -> np.ndarray:
    """``f_i(theta) = 0.5 (theta - c_i)' Q_i (theta - c_i) + e_i`` for every client."""
    diff = np.asarray(theta, dtype=float)[None, :] - c
    return 0.5 * np.einsum("ni,nij,nj->n", diff, Q, diff) + e


def _set_variables(n: int, alpha: float, beta: float, phi: float):
    a, b = cp.Variable(n), cp.Variable(n)
    cons = [cp.sum(a) == 1, cp.sum(b) == 1, a >= 0, b >= 0, a <= 1 / (alpha * n),
            b <= 1 / (beta * n)]
    return a, b, (a - phi * b) / (1 - phi), cons


def saddle(Q: np.ndarray, c: np.ndarray, e: np.ndarray, alpha: float, beta: float,
           phi: float) -> dict:
    """theta*_phi of (8) by the dual route (module docstring): ``theta``, ``lam``, ``status``,
    the dual and primal values and their ``gap``.
    """
    n = c.shape[0]
    a, b, lam, cons = _set_variables(n, alpha, beta, phi)
    q = np.einsum("nij,nj->ni", Q, c)
    r = 0.5 * np.einsum("ni,nij,nj->n", c, Q, c) + e
    P = sum(lam[i] * Q[i] for i in range(n))
    problem = cp.Problem(cp.Maximize(r @ lam - 0.5 * cp.matrix_frac(q.T @ lam, (P + P.T) / 2)),
                         cons)
    problem.solve(solver=cp.CLARABEL, **CLARABEL_TIGHT)
    if a.value is None:
        return {"theta": np.full(c.shape[1], np.nan), "lam": np.full(n, np.nan),
                "status": problem.status, "dual": np.nan, "primal": np.nan, "gap": np.inf}
    lam_v = (a.value - phi * b.value) / (1 - phi)
    theta = np.linalg.solve(np.einsum("n,nij->ij", lam_v, Q), q.T @ lam_v)
    primal = support(w_vector(n, alpha, beta, phi), quadratic_losses(Q, c, e, theta))
    return {"theta": theta, "lam": lam_v, "status": problem.status,
            "dual": float(problem.value), "primal": float(primal),
            "gap": float(primal - problem.value)}


def dual_step_qp(z: np.ndarray, n: int, alpha: float, beta: float, phi: float
                 ) -> tuple[np.ndarray | None, str, float]:
    """``argmin_{lambda in Lambda_phi} 0.5 ||lambda - z||^2`` as a QP over ``(a, b)``:
    ``(lambda, status, value)``.
    """
    a, b, lam, cons = _set_variables(n, alpha, beta, phi)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(lam - z)), cons)
    prob.solve(solver=cp.CLARABEL, **CLARABEL)
    val = None if a.value is None else (a.value - phi * b.value) / (1.0 - phi)
    return val, prob.status, float(prob.value) if prob.value is not None else np.nan


def fairness_ratio(losses: np.ndarray, alpha: float, beta: float | None = None) -> float:
    """``R_{A,B}(l) = F_A(l) / F_B(l)`` with ``F_A = max_{a in Delta_alpha} <a, l>`` (the
    alpha-fraction of the largest losses) and ``F_B = min_{b in Delta_beta} <b, l>`` (the
    beta-fraction of the smallest), (3)-(4).
    """
    beta = alpha if beta is None else beta
    loss = np.sort(np.asarray(losses, dtype=float))
    n = loss.size
    top = float(capped_vertex(n, alpha) @ loss[::-1])
    bottom = float(capped_vertex(n, beta) @ loss)
    return top / bottom
