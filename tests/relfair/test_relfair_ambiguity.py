"""Lambda_phi(Delta_alpha, Delta_beta) = P(w) (specs/relfair.md §1.6), its constants and errors."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from repro.core.metrics import bottom_cvar, top_cvar
from repro.relfair.problem import RelativeAmbiguitySet


def test_paper_setting_w():
    amb = RelativeAmbiguitySet(100, 0.2, 0.2, 0.2)
    w = amb.w
    assert np.allclose(w[:20], 0.05 / 0.8, atol=1e-15) and np.all(w[20:80] == 0)
    assert np.allclose(w[80:], -0.05 * 0.2 / 0.8, atol=1e-15)
    assert abs(w.sum() - 1) <= 1e-14
    for phi in (0.05, 0.1, 0.2):
        assert abs(RelativeAmbiguitySet(100, 0.2, 0.2, phi).l1_norm
                   - (1 + phi) / (1 - phi)) <= 1e-14
    assert abs(amb.skewness - 8.125) <= 1e-12


@pytest.mark.parametrize("n,alpha,beta,phi", [(10, 0.2, 0.2, 0.3), (9, 0.25, 0.4, 0.5),
                                              (12, 0.1, 0.4, 0.2)])
def test_support_function_equals_lp_over_a_and_b(n, alpha, beta, phi):
    """Max over (a, b) in A x B of <(a - phi b)/(1 - phi), s> by HiGHS = sum_i w_i s_(i)."""
    amb = RelativeAmbiguitySet(n, alpha, beta, phi)
    rng = np.random.default_rng(7)
    for _ in range(10):
        s = rng.normal(size=n)
        c = -np.concatenate([s, -phi * s]) / (1 - phi)
        A_eq = np.zeros((2, 2 * n))
        A_eq[0, :n] = A_eq[1, n:] = 1
        bounds = [(0, 1 / (alpha * n))] * n + [(0, 1 / (beta * n))] * n
        res = linprog(c, A_eq=A_eq, b_eq=[1, 1], bounds=bounds, method="highs")
        assert res.status == 0
        assert abs(-res.fun - amb.support(s)) <= 1e-9
        assert abs(amb.support(s) - (top_cvar(s, alpha) - phi * bottom_cvar(s, beta))
                   / (1 - phi)) <= 1e-12


def test_nested_in_phi_and_contains():
    small, big = (RelativeAmbiguitySet(20, 0.2, 0.2, p) for p in (0.1, 0.3))
    for k in range(20):
        v = np.roll(small.w, k)
        assert small.contains(v) and big.contains(v)
    assert not small.contains(big.w)
    assert RelativeAmbiguitySet(20, 0.2, 0.2, 0.0).contains(np.full(20, 0.05))


@pytest.mark.parametrize("kw,msg", [({"alpha": 0.0}, "alpha"), ({"beta": 1.5}, "beta"),
                                    ({"phi": 1.0}, "phi"), ({"phi": -0.1}, "phi"),
                                    ({"n": 0}, "n must")])
def test_validation(kw, msg):
    args = {"n": 10, "alpha": 0.2, "beta": 0.2, "phi": 0.2, **kw}
    with pytest.raises(ValueError, match=msg):
        RelativeAmbiguitySet(**args)
