"""Quantities of the Fair VFL analysis (docs/decisions.md#fairvfl-theory), for the theory checks.

- ``smoothness_constants``: L_L, L_D, G_D, L_12 of Assumption 2 computable from data
  (docs/decisions.md#fairvfl-theory-instances);
- ``iota``: the Lemma 1 coefficient ``iota_t = eta - (L+1)/2 - L^2 (KQ+2)(KQ-1)/4``;
- ``weighted_logistic_solution``: ``theta*(lam) = argmin_theta f(theta, lam)`` by L-BFGS;
- ``fixed_point``: the exact dual ground truth by a bracketing root of
  ``phi(lam) = D(theta*(lam)) - eps - c lam`` (docs/decisions.md#fairvfl-fixed-point).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq, minimize
from scipy.special import expit

from repro.fairvfl.problem import FairnessGroups


@dataclass(frozen=True)
class Constants:
    L_L: float
    L_D: float
    G_D: float
    L_12: float


def smoothness_constants(X: np.ndarray, groups: FairnessGroups, mu: float) -> Constants:
    """docs/decisions.md#fairvfl-theory-instances: ``L_L = ||X||^2/(4n) + mu``, ``L_D =
    ||X_a||^2/(4|N^a|) + ||X_b||^2/(4|N^b|)``, ``G_D = min(||X_a||/sqrt|N^a| + ||X_b||/sqrt|N^b|,
    mean_a ||X_i|| + mean_b ||X_i||)``, ``L_12 = sqrt(2) G_D`` (spectral norms; logistic ``|l'| <=
    1``, ``l'' <= 1/4``).
    """
    n = len(groups.y)
    Xa, Xb = X[groups.in_a], X[groups.in_b]
    na, nb = len(Xa), len(Xb)
    spec = lambda A: float(np.linalg.norm(A, 2))  # noqa: E731
    L_L = spec(X) ** 2 / (4 * n) + mu
    L_D = spec(Xa) ** 2 / (4 * na) + spec(Xb) ** 2 / (4 * nb)
    G_D = min(spec(Xa) / np.sqrt(na) + spec(Xb) / np.sqrt(nb),
              float(np.linalg.norm(Xa, axis=1).mean() + np.linalg.norm(Xb, axis=1).mean()))
    return Constants(L_L, L_D, G_D, float(np.sqrt(2) * G_D))


def iota(eta: float, L: float, K: int, Q: int) -> float:
    """Lemma 1 ([J] App. A): ``iota_t = eta_t - (L+1)/2 - L^2 (KQ+2)(KQ-1)/4``."""
    return eta - (L + 1) / 2 - L ** 2 * (K * Q + 2) * (K * Q - 1) / 4


def lemma1_min_eta(L: float, K: int, Q: int) -> float:
    """The eta at which ``iota = 0``."""
    return (L + 1) / 2 + L ** 2 * (K * Q + 2) * (K * Q - 1) / 4


def grad_D(X: np.ndarray, groups: FairnessGroups, theta: np.ndarray) -> np.ndarray:
    """``grad D = mean_a (-sigma(-z)) X_i - mean_b (-sigma(-z)) X_i``."""
    z = X @ theta
    g = -expit(-z)
    return X[groups.in_a].T @ g[groups.in_a] / groups.in_a.sum() - (
        X[groups.in_b].T @ g[groups.in_b] / groups.in_b.sum())


def grad_L(X: np.ndarray, groups: FairnessGroups, theta: np.ndarray, mu: float) -> np.ndarray:
    return X.T @ groups.loss_derivative(X @ theta) / len(groups.y) + mu * theta


def weighted_logistic_solution(X, groups: FairnessGroups, lam, mu: float,
                               theta0=None) -> np.ndarray:
    """``argmin_theta sum_i w_i(lam) l(X_i theta, y_i) + (mu/2)||theta||^2`` (= argmin f(., lam)
    when every ``w_i >= 0``), L-BFGS at gtol 1e-11.
    """
    w = groups.weights(np.asarray(lam, dtype=np.float64))
    y = groups.y

    def fun(th):
        z = X @ th
        val = w @ np.logaddexp(0.0, -y * z) + 0.5 * mu * th @ th
        grad = X.T @ (w * (-y * expit(-y * z))) + mu * th
        return val, grad

    th0 = np.zeros(X.shape[1]) if theta0 is None else theta0
    res = minimize(fun, th0, jac=True, method="L-BFGS-B",
                   options={"gtol": 1e-11, "ftol": 1e-15, "maxiter": 10_000})
    return res.x


class NoConvexRoot(ValueError):
    """No multiplier with nonnegative weights satisfies the constraint
    (docs/decisions.md#fairvfl-fixed-point).
    """


@dataclass(frozen=True)
class FixedPoint:
    theta: np.ndarray
    lam: np.ndarray
    D: float
    loss: float
    active: bool


def fixed_point(X, groups: FairnessGroups, eps: float, mu: float, c: float) -> FixedPoint:
    """The ground truth of docs/decisions.md#fairvfl-fixed-point: ``theta_unc``; if ``|D(theta_unc)|
    <= eps`` then ``lam* = 0``; else the root of ``phi(lam) = sign * D(theta*(lam)) - eps - c lam``
    on the multiplier of the violated side, within the nonnegative-weight range.
    """
    n = len(groups.y)

    def D_of(th):
        return groups.deo_signed(X @ th)

    def loss_of(th):
        return groups.mean_loss(X @ th) + 0.5 * mu * th @ th

    th_unc = weighted_logistic_solution(X, groups, np.zeros(2), mu)
    d0 = D_of(th_unc)
    if abs(d0) <= eps:
        return FixedPoint(th_unc, np.zeros(2), d0, loss_of(th_unc), False)
    side = 0 if d0 > 0 else 1
    sign = 1.0 if side == 0 else -1.0
    hi = (groups.in_b.sum() if side == 0 else groups.in_a.sum()) / n

    def lam_vec(v):
        lam = np.zeros(2)
        lam[side] = v
        return lam

    def phi(v):
        return sign * D_of(weighted_logistic_solution(X, groups, lam_vec(v), mu, th_unc)) \
            - eps - c * v

    upper = hi * (1 - 1e-9)
    if phi(upper) > 0:
        raise NoConvexRoot(f"phi > 0 on the whole nonnegative-weight range [0, {hi:.4g}]")
    root = brentq(phi, 0.0, upper, xtol=1e-12, rtol=1e-14)
    th = weighted_logistic_solution(X, groups, lam_vec(root), mu, th_unc)
    return FixedPoint(th, lam_vec(root), D_of(th), loss_of(th), True)
