"""The permutohedron projection (repro.core.projections) and the dual step of Alg. 1."""

from __future__ import annotations

import doctest
import itertools
import warnings

import numpy as np
import pytest

from repro.core import projections as P
from repro.relfair.instances import cvxpy_dual_step
from repro.relfair.problem import RelativeAmbiguitySet, dual_step
from theory.relfair.projection import permutohedron_certificate

TOL = 1e-10


@pytest.fixture
def rng():
    return np.random.default_rng(20021)


def test_doctests():
    assert doctest.testmod(P, raise_on_error=False).failed == 0


@pytest.mark.parametrize("n,alpha,beta,phi", [(100, 0.2, 0.2, 0.2), (100, 0.2, 0.2, 0.0),
                                              (7, 0.3, 0.5, 0.4), (20, 0.1, 0.4, 0.9)])
def test_equals_cvxpy_qp_and_certificate(rng, n, alpha, beta, phi):
    amb = RelativeAmbiguitySet(n, alpha, beta, phi)
    for _ in range(3):
        z = 1.0 / n + rng.gamma(2.0, 1.0, n) * 10.0 ** rng.uniform(-3, 0)
        x = P.permutohedron_projection(z, amb.w)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            ref, status, val = cvxpy_dual_step(z, amb)
        assert status == "optimal"
        assert abs(0.5 * np.sum((x - z) ** 2) - val) <= 1e-7 * (1 + val)
        assert np.abs(x - ref).max() <= 1e-4 * (1 + np.abs(z).max())
        assert max(permutohedron_certificate(x, z, amb.w).values()) <= TOL


def test_certificate_on_random_generators_with_ties(rng):
    for d in (1, 2, 5, 30, 200):
        w = rng.normal(size=d)
        w[: d // 3] = w[0]  # repeated entries
        z = np.round(rng.normal(0, 3, (8, d)))  # ties in z
        X = P.permutohedron_projection(z, w)
        for x, zz in zip(X, z, strict=True):
            assert max(permutohedron_certificate(x, zz, w).values()) <= TOL


def test_variational_inequality_against_every_vertex(rng):
    w = np.array([0.5, 0.3, 0.25, -0.05])
    z = rng.normal(size=4)
    x = P.permutohedron_projection(z, w)
    for perm in itertools.permutations(range(4)):
        assert (z - x) @ (w[list(perm)] - x) <= TOL


def test_batch_equals_rows_and_idempotent(rng):
    w = RelativeAmbiguitySet(30, 0.2, 0.1, 0.3).w
    Z = rng.normal(size=(16, 30))
    X = P.permutohedron_projection(Z, w)
    for x, z in zip(X, Z, strict=True):
        assert np.array_equal(x, P.permutohedron_projection(z, w))
    assert np.abs(P.permutohedron_projection(X, w) - X).max() <= 1e-14
    assert np.abs(P.permutohedron_projection(np.sort(w), w) - np.sort(w)).max() <= 1e-15


def test_phi_zero_is_the_capped_simplex_projection(rng):
    """Phi = 0 turns Lambda_phi into Delta_alpha, the DRO set of Scaff-PD
    (specs/relfair.md §2.3).
    """
    for n, alpha in ((100, 0.2), (13, 0.3), (5, 1.0), (8, 1 / 8)):
        amb = RelativeAmbiguitySet(n, alpha, 0.5, 0.0)
        Z = rng.normal(0, 1, (10, n))
        assert np.abs(amb.project(Z) - P.capped_simplex_projection(Z, 1 / (alpha * n))
                      ).max() <= 1e-12


def test_singleton_set_makes_the_dual_step_constant(rng):
    amb = RelativeAmbiguitySet(10, 1.0, 1.0, 0.0)
    assert amb.is_singleton
    for _ in range(5):
        lam = dual_step(np.full(10, 0.1), rng.normal(0, 100, 10), 0.7, amb)
        assert np.abs(lam - 0.1).max() <= 1e-12


def test_invalid_inputs():
    with pytest.raises(ValueError, match="w must have shape"):
        P.permutohedron_projection([1.0, 2.0], [1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="finite"):
        P.permutohedron_projection([np.nan, 1.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="sigma"):
        dual_step(np.ones(3) / 3, np.zeros(3), 0.0, RelativeAmbiguitySet(3, 0.5, 0.5, 0.1))
