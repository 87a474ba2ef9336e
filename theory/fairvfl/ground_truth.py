"""The exact fixed point of Fair VFL on a linear model, written here (no check).

For a fixed multiplier ``lam`` with nonnegative [J](12) weights ``w(lam)``, ``f(., lam)`` is the
strongly convex weighted logistic regression ``sum_i w_i log(1 + exp(-y_i x_i' theta)) + (mu/2)
||theta||^2`` (up to the constant ``-lam1 eps - lam2 eps``); its minimiser ``theta*(lam)`` is
computed by Newton's method (the Hessian is ``X' diag(w sigma (1 - sigma)) X + mu I``) to a
gradient of 1e-12. With ``theta_unc = theta*(0)``: if ``|D(theta_unc)| <= eps`` then ``lam* =
0``; otherwise only the multiplier of the violated side is positive and it is the root of
``phi(l) = sign D(theta*(lam(l))) - eps - c l`` (brentq), searched where every weight stays
nonnegative. With ``c = 0`` this is a saddle point of ``f``, the KKT point of (4); with ``c > 0``
the fixed point of the regularized iteration, ``|D| = eps + c lam``. The inner problem at the root
is re-solved by cvxpy (Clarabel) as a cross-check.
"""

from __future__ import annotations

from dataclasses import dataclass

import cvxpy as cp
import numpy as np
from scipy.optimize import brentq
from scipy.special import expit

from theory.fairvfl.constants import groups_masks
from theory.fairvfl.round import d_value, masked_weights

__all__ = ["CLARABEL_TOLERANCES", "FixedPoint", "NoRoot", "fixed_point", "inner_cvxpy",
           "weighted_logistic"]

CLARABEL_TOLERANCES = (1e-10, 1e-9, 1e-8)


class NoRoot(ValueError):
    """No multiplier with nonnegative weights satisfies the constraint."""


@dataclass(frozen=True)
class FixedPoint:
    theta: np.ndarray
    lam: np.ndarray
    D: float
    loss: float
    active: bool


def weighted_logistic(X, y, w, mu: float, theta0=None, tol: float = 1e-12) -> np.ndarray:
    """``argmin sum_i w_i log(1 + exp(-y_i x_i' theta)) + (mu/2)||theta||^2`` by Newton's
    method with backtracking (``w >= 0``).
    """
    theta = np.zeros(X.shape[1]) if theta0 is None else np.array(theta0, dtype=float)

    def value(th):
        return float(w @ np.logaddexp(0.0, -y * (X @ th)) + 0.5 * mu * th @ th)

    for _ in range(100):
        z = X @ theta
        p = expit(-y * z)
        g = X.T @ (-w * y * p) + mu * theta
        if np.abs(g).max() <= tol:
            break
        H = X.T @ (X * (w * p * (1 - p))[:, None]) + mu * np.eye(X.shape[1])
        step = np.linalg.solve(H, g)
        t, f0 = 1.0, value(theta)
        while value(theta - t * step) > f0 - 0.25 * t * g @ step and t > 1e-12:
            t *= 0.5
        theta = theta - t * step
    return theta


def mean_loss(X, y, theta, mu) -> float:
    """``L(theta) = mean_i log(1 + exp(-y_i x_i' theta)) + (mu/2)||theta||^2``, [C](1)."""
    return float(np.mean(np.logaddexp(0.0, -y * (X @ theta))) + 0.5 * mu * theta @ theta)


def fixed_point(X, y, s, eps: float, mu: float, c: float) -> FixedPoint:
    """The fixed point (module docstring); raises :class:`NoRoot` where no multiplier with
    nonnegative weights reaches the constraint.
    """
    n = len(y)
    th_unc = weighted_logistic(X, y, np.full(n, 1.0 / n), mu)
    D_unc = d_value(y, s, X @ th_unc)
    if abs(D_unc) <= eps:
        return FixedPoint(th_unc, np.zeros(2), D_unc, mean_loss(X, y, th_unc, mu), False)
    in_a, in_b = groups_masks(y, s)
    sign = 1.0 if D_unc > 0 else -1.0
    # lam1 > 0 lowers the weights of N^b, lam2 > 0 those of N^a: stay nonnegative
    upper = (in_b.sum() if sign > 0 else in_a.sum()) / n

    def lam_vec(v):
        return np.array([v, 0.0]) if sign > 0 else np.array([0.0, v])

    def theta_at(v):
        return weighted_logistic(X, y, masked_weights(y, s, lam_vec(v)), mu, th_unc)

    def phi(v):
        return sign * d_value(y, s, X @ theta_at(v)) - eps - c * v

    hi = upper * (1 - 1e-9)
    if phi(hi) > 0:
        raise NoRoot(f"no root of phi on [0, {hi:.4g}] (|D_unc| = {abs(D_unc):.4g})")
    root = brentq(phi, 0.0, hi, xtol=1e-12, rtol=1e-14)
    th = theta_at(root)
    return FixedPoint(th, lam_vec(root), d_value(y, s, X @ th), mean_loss(X, y, th, mu), True)


def inner_cvxpy(X, y, w, mu) -> tuple[np.ndarray | None, str, int]:
    """The weighted logistic regression in cvxpy: the first Clarabel tolerance of
    ``CLARABEL_TOLERANCES`` that ends ``optimal``; ``(theta, status, index)``.
    """
    th = cp.Variable(X.shape[1])
    obj = cp.sum(cp.multiply(w, cp.logistic(-cp.multiply(y, X @ th))))
    prob = cp.Problem(cp.Minimize(obj + 0.5 * mu * cp.sum_squares(th)))
    status = "not solved"
    for k, tol in enumerate(CLARABEL_TOLERANCES):
        try:
            prob.solve(solver=cp.CLARABEL, tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol,
                       max_iter=500)
        except cp.error.SolverError:
            status = "solver_error"
            continue
        status = prob.status
        if status == "optimal":
            return th.value, status, k
    return th.value, status, len(CLARABEL_TOLERANCES)
