"""repro.core.metrics against hand computations, closed forms and LPs."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
from scipy.optimize import linprog

from repro.core import metrics as M

# ------------------------------------------------------------------------- accuracy / Fair VFL


def test_accuracy():
    assert M.accuracy([1, -1, 1, -1, 1], [1, 1, 1, -1, -1]) == 3 / 5
    assert M.accuracy(np.ones(4), np.ones(4)) == 1.0
    with pytest.raises(ValueError, match="same length"):
        M.accuracy([1, 2], [1])
    with pytest.raises(ValueError, match="empty"):
        M.accuracy([], [])


# Six samples, y in {-1, +1}, group a = True. Logistic losses log(1 + e^{-z}):
#   z = 0 -> ln 2,  z = ln 3 -> ln(4/3),  z = -ln 3 -> ln 4.
# Positives of a: z = 0, ln 3  -> mean (ln 2 + ln 4/3)/2 = ln(8/3)/2
# Positives of b: z = 0, -ln 3 -> mean (ln 2 + ln 4)/2   = ln(8)/2
# D = l^a - l^b = (ln(8/3) - ln 8)/2 = -ln(3)/2, DEO = ln(3)/2. The two negatives must not count.
Y6 = np.array([1, 1, 1, 1, -1, -1])
G6 = np.array([True, True, False, False, True, False])
Z6 = np.array([0.0, math.log(3), 0.0, -math.log(3), 50.0, -50.0])


def test_deo_six_samples_by_hand():
    assert M.deo(Y6, G6, logits=Z6) == pytest.approx(math.log(3) / 2, rel=1e-14)
    assert M.deo(Y6, G6, logits=Z6, signed=True) == pytest.approx(-math.log(3) / 2, rel=1e-14)
    losses = np.log1p(np.exp(-Z6))
    assert M.deo(Y6, G6.astype(int), losses=losses) == pytest.approx(math.log(3) / 2, rel=1e-14)
    # {0,1} labels with a different positive class give the same numbers.
    assert M.deo((Y6 + 1) // 2, G6, logits=Z6) == pytest.approx(math.log(3) / 2, rel=1e-14)


def test_deo_at_theta_zero_is_zero():
    # fairvfl.md §1.2: D(0) = log 2 - log 2 = 0 exactly.
    rng = np.random.default_rng(0)
    y = rng.choice([-1, 1], 40)
    y[:2] = 1
    g = rng.random(40) < 0.5
    g[0], g[1] = True, False
    assert M.deo(y, g, logits=np.zeros(40)) == 0.0


def test_deo_is_stable_for_large_logits():
    y, g = np.array([1, 1]), np.array([True, False])
    assert M.deo(y, g, logits=np.array([-800.0, 0.0])) == pytest.approx(800.0 - math.log(2))


def test_deo_errors():
    with pytest.raises(ValueError, match="group b"):
        M.deo([1, 1, -1], [True, True, False], logits=[0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="exactly one"):
        M.deo([1], [True], logits=[0.0], losses=[0.0])
    with pytest.raises(ValueError, match="exactly one"):
        M.deo([1], [True])
    with pytest.raises(ValueError, match="group must be boolean or 0/1"):
        M.deo([1, 1], [2, 0], logits=[0.0, 0.0])


# Eight samples. Group a = first four, b = last four.
#   y     = +  +  -  -  |  +  +  +  -
#   y_hat = +  -  +  -  |  -  -  +  +
# FPR_a = 1/2, FPR_b = 1/1 -> DFP = 1/2;  FNR_a = 1/2, FNR_b = 2/3 -> DFN = 1/6.
Y8 = np.array([1, 1, -1, -1, 1, 1, 1, -1])
P8 = np.array([1, -1, 1, -1, -1, -1, 1, 1])
G8 = np.array([1, 1, 1, 1, 0, 0, 0, 0])


def test_dfp_dfn_by_hand():
    assert M.dfp(Y8, P8, G8) == 0.5
    assert M.dfn(Y8, P8, G8) == pytest.approx(1 / 6, rel=1e-15)
    # TPR = 1 - FNR: the decision-based equal-opportunity gap equals DFN.
    assert M.tpr_gap(Y8, P8, G8) == pytest.approx(1 / 6, rel=1e-15)
    with pytest.raises(ValueError, match="group b among y != positive"):
        M.dfp([1, -1, 1], [1, 1, 1], [0, 1, 0])


def test_fairness_rate_and_harmonic_mean():
    assert M.fairness_rate(0.25) == 0.75
    np.testing.assert_array_equal(M.fairness_rate([0.0, 0.5]), [1.0, 0.5])
    assert M.harmonic_mean(0.8, 0.6) == pytest.approx(2 * 0.48 / 1.4, rel=1e-15)
    assert M.harmonic_mean(0.0, 0.0) == 0.0
    assert M.harmonic_mean(1.0, 0.0) == 0.0
    np.testing.assert_allclose(M.harmonic_mean([0.5, 1.0], [1.0, 1.0]), [2 / 3, 1.0])
    with pytest.raises(ValueError, match=r"\[0, inf\)"):
        M.harmonic_mean(-0.1, 0.5)


# ------------------------------------------------------------------------- Gini / Lorenz


def test_gini_exact_values():
    assert M.gini([1.0, 1.0, 1.0]) == 0.0
    assert M.gini([0.0, 0.0, 1.0]) == 2 / 3
    # sum_{i,j}|x_i - x_j| = 2 (1+2+3+1+2+1) = 20, 2 n^2 mean = 2 * 16 * 2.5 = 80.
    assert M.gini([4.0, 1.0, 3.0, 2.0]) == 0.25
    # One nonzero among n: the maximum 1 - 1/n.
    assert M.gini(np.r_[np.zeros(9), 5.0]) == pytest.approx(0.9, rel=1e-15)


def test_gini_identities():
    rng = np.random.default_rng(1)
    for n in (1, 2, 5, 100):
        x = rng.gamma(2.0, 1.0, n)
        pairwise = np.abs(x[:, None] - x[None, :]).sum() / (2 * n * n * x.mean())
        assert M.gini(x) == pytest.approx(pairwise, rel=1e-12, abs=1e-15)
        # relfair.md §5: G = 1 - 2 * integral of the Lorenz curve (trapezoid, exact here).
        _, L = M.lorenz_curve(x)
        assert M.gini(x) == pytest.approx(1 - np.sum(L[:-1] + L[1:]) / n, rel=1e-12, abs=1e-15)
    batch = rng.gamma(2.0, 1.0, (3, 7))
    np.testing.assert_allclose(M.gini(batch), [M.gini(row) for row in batch], rtol=1e-15)


def test_lorenz_curve():
    x, L = M.lorenz_curve([2.0, 6.0, 0.0, 2.0])
    assert x.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert L.tolist() == [0.0, 0.0, 0.2, 0.4, 1.0]
    rng = np.random.default_rng(2)
    x, L = M.lorenz_curve(rng.exponential(size=37))
    assert (x[0], L[0], x[-1], L[-1]) == (0.0, 0.0, 1.0, 1.0)
    assert np.all(np.diff(L) >= 0) and np.all(np.diff(L, 2) >= -1e-15)  # increasing, convex
    assert np.all(L <= x + 1e-15)  # below the equality line


def test_gini_lorenz_errors():
    with pytest.raises(ValueError, match="all values are zero"):
        M.gini([0.0, 0.0])
    with pytest.raises(ValueError, match=">= 0"):
        M.gini([1.0, -1.0])
    with pytest.raises(ValueError, match="at least one"):
        M.gini([])
    with pytest.raises(ValueError, match="all values are zero"):
        M.lorenz_curve([0.0])


# ------------------------------------------------------------------------- R_{A,B}


def test_relative_fairness_ratio_by_hand():
    losses = np.arange(1.0, 11.0)
    # 20:20 ratio, n = 10: (10 + 9)/2 over (1 + 2)/2.
    assert M.relative_fairness_ratio(losses, 0.2) == pytest.approx(19 / 3, rel=1e-15)
    # Palma ratio A = Delta_0.1, B = Delta_0.4: top 1 over mean of bottom 4 = 10 / 2.5.
    assert M.relative_fairness_ratio(losses, alpha=0.1, beta=0.4) == pytest.approx(4.0, rel=1e-15)
    # Non-integer alpha n (n = 7, alpha = 0.2): v = (5/7, 2/7, 0, ...), relfair.md §1.6.
    seven = np.arange(1.0, 8.0)
    assert M.top_cvar(seven, 0.2) == pytest.approx(47 / 7, rel=1e-15)
    assert M.bottom_cvar(seven, 0.2) == pytest.approx(9 / 7, rel=1e-15)
    assert M.relative_fairness_ratio(seven, 0.2) == pytest.approx(47 / 9, rel=1e-15)
    # alpha = 1: Delta_1 = {1/n}, so R = 1.
    assert M.relative_fairness_ratio(seven, 1.0) == pytest.approx(1.0, rel=1e-15)


def test_cvar_matches_linear_programs():
    rng = np.random.default_rng(3)
    for n, alpha in [(10, 0.2), (7, 0.2), (13, 0.37), (5, 1.0), (6, 0.1)]:
        f = rng.gamma(2.0, 1.0, n)
        bounds = [(0.0, 1.0 / (alpha * n))] * n
        top = linprog(-f, A_eq=np.ones((1, n)), b_eq=[1.0], bounds=bounds, method="highs")
        bottom = linprog(f, A_eq=np.ones((1, n)), b_eq=[1.0], bounds=bounds, method="highs")
        assert top.status == 0 and bottom.status == 0
        assert M.top_cvar(f, alpha) == pytest.approx(-top.fun, rel=1e-9)
        assert M.bottom_cvar(f, alpha) == pytest.approx(bottom.fun, rel=1e-9)
        assert M.relative_fairness_ratio(f, alpha) == pytest.approx(-top.fun / bottom.fun,
                                                                    rel=1e-9)


def test_capped_simplex_vertex():
    assert M.capped_simplex_vertex(100, 0.2).tolist() == [0.05] * 20 + [0.0] * 80
    v = M.capped_simplex_vertex(7, 0.2)
    np.testing.assert_allclose(v, [5 / 7, 2 / 7, 0, 0, 0, 0, 0], rtol=1e-15)
    assert M.capped_simplex_vertex(3, 1.0).tolist() == [1 / 3] * 3
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\]"):
        M.capped_simplex_vertex(3, 1.5)


def test_relative_fairness_ratio_errors_and_batch():
    with pytest.raises(ValueError, match="F_B > 0"):
        M.relative_fairness_ratio([0.0, 0.0, 3.0, 4.0, 5.0], 0.4)
    with pytest.raises(ValueError, match="alpha"):
        M.relative_fairness_ratio([1.0, 2.0], 0.0)
    batch = np.array([np.arange(1.0, 11.0), np.full(10, 2.0)])
    np.testing.assert_allclose(M.relative_fairness_ratio(batch, 0.2), [19 / 3, 1.0], rtol=1e-15)


# ------------------------------------------------------------------------- feasibility


def test_constraint_feasibility():
    assert M.constraint_feasibility([-1.0, 0.5, 0.25]) == 0.5
    assert M.constraint_feasibility([-1.0, -0.5]) == 0.0
    assert M.constraint_feasibility([-1.0, 0.5], kind="eq") == 1.0
    per_client = M.constraint_feasibility([[0.1, -0.3], [-0.2, -0.1]], axis=1)
    np.testing.assert_array_equal(per_client, [0.1, 0.0])
    with pytest.raises(ValueError, match="kind must be one of"):
        M.constraint_feasibility([0.0], kind="le")
    with pytest.raises(ValueError, match="empty"):
        M.constraint_feasibility([])


def test_docstring_examples():
    import repro.core.inequality as inequality

    failures, tried = doctest.testmod(M, verbose=False)
    failures2, tried2 = doctest.testmod(inequality, verbose=False)
    assert tried + tried2 >= 15 and failures == failures2 == 0
