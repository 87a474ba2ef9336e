"""EO / CEO post-processing (specs/fairvfl.md §4.2-4.3): the LP against cvxpy/Clarabel, closed
forms.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from scipy.special import expit

from repro.fairvfl.ceo import ceo_mixing, ceo_postprocess
from repro.fairvfl.eo import eo_postprocess, eo_program, solve_eo_program

CLARABEL = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}


def _scores(seed, n=400):
    rng = np.random.default_rng(seed)
    s = rng.random(n) < 0.4
    y = np.where(rng.random(n) < np.where(s, 0.3, 0.6), 1, -1)
    z = 1.2 * y + rng.standard_normal(n) + 0.8 * s
    return z, y, s


def _cvxpy_eo(yhat, Y, a, constraint):
    """The Hardt et al. LP written directly in the derived rates (independent of eo_program)."""
    p = cp.Variable(4)  # p_1a, p_0a, p_1b, p_0b
    n = len(Y)
    err, tprs, fprs = 0, [], []
    for j, mask in enumerate((a, ~a)):
        P, N = np.sum(mask & (Y == 1)), np.sum(mask & (Y == 0))
        tpr = yhat[mask & (Y == 1)].mean()
        fpr = yhat[mask & (Y == 0)].mean()
        t = p[2 * j] * tpr + p[2 * j + 1] * (1 - tpr)
        f = p[2 * j] * fpr + p[2 * j + 1] * (1 - fpr)
        err = err + (P * (1 - t) + N * f) / n
        tprs.append(t)
        fprs.append(f)
    cons = [p >= 0, p <= 1, tprs[0] == tprs[1]]
    if constraint == "odds":
        cons.append(fprs[0] == fprs[1])
    prob = cp.Problem(cp.Minimize(err), cons)
    prob.solve(solver=cp.CLARABEL, **CLARABEL)
    return prob, p.value


@pytest.mark.parametrize("constraint", ["odds", "opportunity"])
@pytest.mark.parametrize("seed", range(6))
def test_eo_lp_matches_cvxpy(constraint, seed):
    z, y, s = _scores(seed)
    yhat, Y = (z >= 0).astype(int), (y == 1).astype(int)
    prog = eo_program(yhat, Y, s, constraint)
    p, err = solve_eo_program(prog)
    prob, p_cvx = _cvxpy_eo(yhat, Y, s, constraint)
    assert prob.status == "optimal"
    assert abs(err - prob.value) <= 1e-7 * (1 + abs(prob.value))
    assert np.all(p >= -1e-12) and np.all(p <= 1 + 1e-12)
    # our LP solution satisfies the fairness equalities to 1e-9
    assert np.max(np.abs(prog.A_eq @ p)) <= 1e-9
    # the error of the derived predictor evaluated from its definition equals the LP value
    n = len(Y)
    direct = 0.0
    for j, mask in enumerate((s, ~s)):
        pos, neg = mask & (Y == 1), mask & (Y == 0)
        q = np.where(yhat == 1, p[2 * j], p[2 * j + 1])
        direct += (np.sum(1 - q[pos]) + np.sum(q[neg])) / n
    assert abs(direct - err) <= 1e-12
    # p = (1, 0, 1, 0) reproduces the base predictor's error exactly
    assert abs(prog.constant + prog.c @ np.array([1.0, 0, 1, 0]) - np.mean(yhat != Y)) <= 1e-12


def test_eo_postprocess_score_flip_convention_and_seed():
    z, y, s = _scores(1)
    zt, yt, st = _scores(2)
    yhat1, p1 = eo_postprocess(z, y, s, zt, st, seed=3)
    yhat2, p2 = eo_postprocess(z, y, s, zt, st, seed=3)
    assert np.array_equal(yhat1, yhat2) and np.array_equal(p1, p2)
    base = np.where(zt >= 0, 1, -1)
    kept = yhat1 == base
    np.testing.assert_array_equal(p1[kept], expit(zt[kept]))
    np.testing.assert_allclose(p1[~kept], 1 - expit(zt[~kept]), rtol=0, atol=1e-15)
    assert (~kept).sum() > 0


@pytest.mark.parametrize("cost", ["fnr", "fpr", "weighted"])
def test_ceo_mixing_equalizes_the_generalized_cost(cost):
    """Pleiss et al.: (1 - alpha) C(g_lo) + alpha C^mu(g_lo) = C(g_hi) when 0 < alpha < 1."""
    rng = np.random.default_rng(5)
    n = 2000
    s = rng.random(n) < 0.5
    Y = (rng.random(n) < np.where(s, 0.35, 0.55)).astype(int)
    h = expit(2.0 * (2 * Y - 1) * np.where(s, 1.5, 0.6) + 0.3 * rng.standard_normal(n))
    mix = ceo_mixing(h, Y, s, cost)
    lo = mix["groups"][mix["lo"]]
    hi = mix["groups"]["b" if mix["lo"] == "a" else "a"]
    assert 0 < mix["alpha"] < 1
    assert abs((1 - mix["alpha"]) * lo["C"] + mix["alpha"] * lo["C_mu"] - hi["C"]) <= 1e-12
    # the 'fnr' cost is the mean of 1 - h over the positives of the group
    if cost == "fnr":
        assert abs(mix["groups"]["a"]["C"] - np.mean(1 - h[s & (Y == 1)])) <= 1e-15


def test_ceo_postprocess_moves_floor_alpha_lo_samples_to_base_rate():
    z, y, s = _scores(7)
    zt, yt, st = _scores(8)
    mix = ceo_mixing(expit(z), (y == 1).astype(int), s, "fnr")
    yhat, h_tilde = ceo_postprocess(z, y, s, zt, st, seed=0)
    lo_mask = st if mix["lo"] == "a" else ~st
    changed = h_tilde != expit(zt)
    assert changed.sum() == int(np.floor(mix["alpha"] * lo_mask.sum()))
    assert np.all(lo_mask[changed])
    assert np.all(h_tilde[changed] == mix["groups"][mix["lo"]]["mu"])
    assert np.array_equal(yhat, np.where(h_tilde >= 0.5, 1, -1))
