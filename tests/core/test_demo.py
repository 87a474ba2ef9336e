"""The demo's model against closed forms, finite differences and cvxpy (Clarabel)."""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np

from repro.core.data.libsvm import load_a8a
from repro.demo.experiments import LogRegConfig, fit, logistic_loss_grad


def test_loss_at_zero_is_log2_and_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 4))
    y = np.where(rng.random(50) < 0.5, -1.0, 1.0)
    loss, _ = logistic_loss_grad(np.zeros(5), X, y, 0.3)
    assert abs(loss - math.log(2)) < 1e-15
    w = rng.normal(size=5)
    _, g = logistic_loss_grad(w, X, y, 0.3)
    h = 1e-6
    fd = np.array([(logistic_loss_grad(w + h * e, X, y, 0.3)[0]
                    - logistic_loss_grad(w - h * e, X, y, 0.3)[0]) / (2 * h) for e in np.eye(5)])
    assert np.max(np.abs(fd - g)) < 1e-8


def test_lbfgs_reaches_the_cvxpy_optimum_on_a8a_subsample():
    data = load_a8a("train")
    X, y, lam = data.X[:1500], data.y[:1500].astype(float), 1e-2
    w, b = cp.Variable(X.shape[1]), cp.Variable()
    obj = cp.sum(cp.logistic(-cp.multiply(y, X @ w + b))) / len(y) + lam / 2 * cp.sum_squares(w)
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver=cp.CLARABEL)
    assert prob.status == "optimal"
    res = fit(X, y, LogRegConfig(l2=lam, max_iter=1000), np.zeros(X.shape[1] + 1))
    assert res.fun <= prob.value + 1e-7
    assert abs(res.fun - prob.value) < 1e-6
    assert np.max(np.abs(res.x[:-1] - w.value)) < 1e-4
