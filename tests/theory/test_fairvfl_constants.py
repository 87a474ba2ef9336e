"""The package's Fair VFL analysis constants (repro/fairvfl/analysis.py) equal the formulas
written independently in theory/fairvfl/constants.py: the theory checks take them
from theory/, the package keeps its own copy for its diagnostics.
"""

from __future__ import annotations

import numpy as np
import pytest

from repro.fairvfl import analysis
from repro.fairvfl.instances import synthetic_instance
from repro.fairvfl.problem import FairnessGroups
from theory.fairvfl import constants as th


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_assumption2_constants_equal(seed):
    X, y, s, _ = synthetic_instance(np.random.default_rng(seed), n=150, m=5, K=2)
    mu = 2 / len(y)
    pkg = analysis.smoothness_constants(X, FairnessGroups.from_labels(y, s), mu)
    ref = th.assumption2(X, y, s, mu)
    for k in ("L_L", "L_D", "G_D", "L_12"):
        assert abs(getattr(pkg, k) - ref[k]) <= 1e-12 * ref[k], k


def test_iota_and_min_eta_equal():
    for eta, L, K, Q in [(100.0, 0.6, 6, 1), (3.0, 1.2, 3, 4), (1e4, 2.5, 6, 7)]:
        assert analysis.iota(eta, L, K, Q) == pytest.approx(th.iota(eta, L, K, Q), rel=1e-14)
        assert analysis.lemma1_min_eta(L, K, Q) == pytest.approx(th.iota_zero_eta(L, K, Q),
                                                                rel=1e-14)
        assert th.iota(th.iota_zero_eta(L, K, Q), L, K, Q) == pytest.approx(0.0, abs=1e-9)


def test_gradients_equal():
    X, y, s, _ = synthetic_instance(np.random.default_rng(3), n=120, m=4, K=2)
    groups = FairnessGroups.from_labels(y, s)
    rng = np.random.default_rng(4)
    for _ in range(3):
        theta = rng.standard_normal(4)
        np.testing.assert_allclose(analysis.grad_L(X, groups, theta, 0.01),
                                   th.grad_L(X, y, theta, 0.01), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(analysis.grad_D(X, groups, theta),
                                   th.grad_D(X, y, s, theta), rtol=1e-12, atol=1e-14)


def test_theorem2_eta_formula():
    """[C] Thm 2: eta_t >= [L^2 (KQ+2)(KQ-1) + 2(L+1)]/4 + L12^2 KQ (1 + 32 tau sqrt t)/(2 beta);
    the spec's example L12 = 3, K = 6, Q = 1, tau = 9, beta = 10 gives ~ 780 sqrt(t) for large t.
    """
    e = th.theorem2_eta(10_000, 0.0, 3.0, 6, 1, 9, 10.0)
    assert e == pytest.approx(0.5 + 9 * 6 * (1 + 32 * 9 * 100) / 20, rel=1e-14)
    assert e / 100 == pytest.approx(777.6, rel=1e-3)
