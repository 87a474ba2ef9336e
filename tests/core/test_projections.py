"""Invariants of repro.core.projections: KKT, batch == loop, idempotence, exact small cases."""

from __future__ import annotations

import doctest
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from repro.core import projections as P
from theory.core.projections import (
    kkt_ball,
    kkt_box,
    kkt_capped_simplex,
    kkt_orthant,
    kkt_simplex,
    max_kkt_error,
)

TOL = 1e-10


def _batch(rng, B=64, d=17, scale=3.0, ties=False):
    y = rng.normal(0.0, scale, (B, d))
    if ties:
        y = np.round(y)
    return y


@pytest.fixture
def rng():
    return np.random.default_rng(20240601)


# ------------------------------------------------------------------------- KKT on random batches

@pytest.mark.parametrize("ties", [False, True])
def test_kkt_random_batches(rng, ties):
    for d in (1, 2, 7, 50):
        y = _batch(rng, d=d, ties=ties)
        assert max_kkt_error(kkt_orthant(P.nonneg_projection(y), y)).max() <= TOL
        lower = rng.normal(size=d) - 1.0
        upper = lower + rng.exponential(size=d) * (rng.random(d) > 0.3)
        assert max_kkt_error(kkt_box(P.box_projection(y, lower, upper), y, lower, upper)
                             ).max() <= TOL
        center = rng.normal(size=d)
        assert max_kkt_error(kkt_ball(P.ball_projection(y, 2.5, center), y, 2.5, center)
                             ).max() <= TOL
        for z in (1.0, 0.3, 7.0):
            assert max_kkt_error(kkt_simplex(P.simplex_projection(y, z), y, z)).max() <= TOL
            for cap in (z / d, 1.5 * z / d, max(0.5 * z, z / d), z, 2.0 * z):
                x = P.capped_simplex_projection(y, cap, z)
                assert max_kkt_error(kkt_capped_simplex(x, y, cap, z)).max() <= TOL


_vectors = hnp.arrays(np.float64, st.integers(1, 30),
                      elements=st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(y=_vectors, z=st.floats(1e-2, 1e2), factor=st.floats(0.0, 1.0))
def test_kkt_hypothesis_simplex_family(y, z, factor):
    d = y.size
    x = P.simplex_projection(y, z)
    assert max_kkt_error(kkt_simplex(x, y, z)) <= TOL
    cap = z / d * (1.0 + factor * (d - 1 + 0.5))  # from the tight cap z/d to beyond z
    x = P.capped_simplex_projection(y, cap, z)
    assert max_kkt_error(kkt_capped_simplex(x, y, cap, z)) <= TOL


@settings(max_examples=100, deadline=None, derandomize=True)
@given(y=_vectors, radius=st.floats(1e-3, 1e3), shift=st.floats(-10.0, 10.0))
def test_kkt_hypothesis_ball_box_orthant(y, radius, shift):
    c = np.full(y.size, shift)
    assert max_kkt_error(kkt_ball(P.ball_projection(y, radius, c), y, radius, c)) <= TOL
    assert max_kkt_error(kkt_orthant(P.nonneg_projection(y), y)) <= TOL
    lo, hi = shift - radius, shift + radius
    assert max_kkt_error(kkt_box(P.box_projection(y, lo, hi), y, lo, hi)) <= TOL


# ------------------------------------------------------------------------- exact small cases

def _capped_oracle(y, cap, z):
    """Exact projection by enumerating the faces (lower / free / upper) of the capped simplex.

    On a face with free set F and upper set U the equality constraint gives
    t = (sum_F y + |U| cap - z) / |F|; the candidate with the smallest objective among the
    feasible ones is the projection (the minimizer lies in the relative interior of a face).
    """
    d = y.size
    best, best_f = None, np.inf
    for labels in itertools.product((0, 1, 2), repeat=d):  # 0 lower, 1 free, 2 upper
        lab = np.array(labels)
        F, U = lab == 1, lab == 2
        w = np.where(U, cap, 0.0)
        if F.any():
            t = (y[F].sum() + U.sum() * cap - z) / F.sum()
            w[F] = y[F] - t
        if w.min() < -1e-12 or w.max() > cap + 1e-12 or abs(w.sum() - z) > 1e-12:
            continue
        f = 0.5 * np.sum((w - y) ** 2)
        if f < best_f - 1e-15:
            best, best_f = w, f
    return best


def test_capped_simplex_matches_face_enumeration(rng):
    for _ in range(40):
        d = int(rng.integers(1, 7))
        y = np.round(rng.normal(0.0, 2.0, d), 1)  # ties on purpose
        z = float(rng.choice([1.0, 0.5, 3.0]))
        cap = float(z / d * rng.uniform(1.0, d + 0.5))
        np.testing.assert_allclose(P.capped_simplex_projection(y, cap, z),
                                   _capped_oracle(y, cap, z), rtol=0, atol=1e-12)
        np.testing.assert_allclose(P.simplex_projection(y, z), _capped_oracle(y, z, z),
                                   rtol=0, atol=1e-12)


def test_hand_computed_values():
    # Delta_alpha with n = 100, alpha = 0.2: cap 1/20, the 20 largest of a strictly decreasing
    # vector with gaps >= cap saturate (relfair.md §1.6: the vertex (0.05 x20, 0 x80)).
    y = np.arange(100.0)[::-1]
    x = P.capped_simplex_projection(y, cap=1.0 / (0.2 * 100), z=1.0)
    np.testing.assert_allclose(x, np.r_[np.full(20, 0.05), np.zeros(80)], rtol=0, atol=1e-15)
    # Uniform input: the projection onto any capped simplex with cap >= 1/n is 1/n.
    np.testing.assert_allclose(P.capped_simplex_projection(np.full(5, 7.0), 0.3), 0.2,
                               rtol=0, atol=1e-15)
    # cap * d == z exactly: the set is the single point cap * 1.
    assert P.capped_simplex_projection([5.0, -3.0, 0.0, 1.0], 0.25).tolist() == [0.25] * 4
    # alpha = 1 with n = 49: cap * n = 1 - 1.1e-16 (rounding), accepted as the point 1/49.
    x = P.capped_simplex_projection(np.linspace(-1, 1, 49), 1.0 / 49.0)
    np.testing.assert_allclose(x, 1.0 / 49.0, rtol=0, atol=1e-17)
    # Simplex: y = (0.3, 0.1, -0.5) -> tau = (0.4 - 1)/2 = -0.3 (and -0.5 < tau) -> (0.6, 0.4, 0).
    np.testing.assert_allclose(P.simplex_projection([0.3, 0.1, -0.5]), [0.6, 0.4, 0.0],
                               rtol=0, atol=1e-15)
    # Ball: (6, 8) at distance 10 from 0 onto radius 5 -> (3, 4); interior points are fixed.
    assert P.ball_projection([7.0, 9.0], 5.0, center=[1.0, 1.0]).tolist() == [4.0, 5.0]
    assert P.ball_projection([0.1, -0.2], 1.0).tolist() == [0.1, -0.2]
    assert P.box_projection([-2.0, 0.5, 9.0], [-1.0, 0.0, 0.0], 1.0).tolist() == [-1.0, 0.5, 1.0]
    assert P.nonneg_projection([[-1.0, 2.0]]).tolist() == [[0.0, 2.0]]


def test_docstring_examples():
    failures, tried = doctest.testmod(P, verbose=False)
    assert tried >= 8 and failures == 0


# ----------------------------------------------------------------- batch == loop, idempotence

def _all_projections(rng, d):
    lower = rng.normal(size=d) - 0.5
    upper = lower + rng.exponential(size=d)
    center = rng.normal(size=d)
    return {
        "orthant": P.nonneg_projection,
        "box": lambda v: P.box_projection(v, lower, upper),
        "ball": lambda v: P.ball_projection(v, 1.7, center),
        "simplex": lambda v: P.simplex_projection(v, 2.0),
        "capped": lambda v: P.capped_simplex_projection(v, 1.0 / (0.3 * d)),
    }


@pytest.mark.parametrize("ties", [False, True])
def test_batch_equals_loop_bitwise(rng, ties):
    for d in (1, 3, 40):
        y = _batch(rng, B=33, d=d, ties=ties)
        for name, proj in _all_projections(rng, d).items():
            batched = proj(y)
            looped = np.stack([proj(row) for row in y])
            assert batched.shape == y.shape and batched.dtype == np.float64, name
            assert np.array_equal(batched, looped), name


def test_ball_batch_with_per_row_centers(rng):
    y, c = rng.normal(size=(9, 4)), rng.normal(size=(9, 4))
    batched = P.ball_projection(y, 0.5, c)
    looped = np.stack([P.ball_projection(a, 0.5, b) for a, b in zip(y, c, strict=True)])
    assert np.array_equal(batched, looped)


def test_idempotent(rng):
    y = _batch(rng, B=50, d=12)
    for name, proj in _all_projections(rng, 12).items():
        once = proj(y)
        np.testing.assert_allclose(proj(once), once, rtol=0, atol=1e-14, err_msg=name)


def test_inputs_not_modified(rng):
    y = _batch(rng, B=5, d=6)
    before = y.copy()
    for proj in _all_projections(rng, 6).values():
        proj(y)
    assert np.array_equal(y, before)


# ------------------------------------------------------------------------- errors

@pytest.mark.parametrize(("call", "words"), [
    (lambda: P.capped_simplex_projection(np.zeros(4), 0.2), ["cap", "0.2", "[0.25, inf)"]),
    (lambda: P.capped_simplex_projection(np.zeros(4), -1.0), ["cap", "(0, inf)", "-1.0"]),
    (lambda: P.capped_simplex_projection(np.zeros(4), 0.5, z=0.0), ["z", "(0, inf)", "0.0"]),
    (lambda: P.simplex_projection(np.zeros(3), z=-2.0), ["z", "(0, inf)", "-2.0"]),
    (lambda: P.ball_projection(np.zeros(3), 0.0), ["radius", "(0, inf)", "0.0"]),
    (lambda: P.ball_projection(np.zeros(3), 1.0, center=np.zeros(2)), ["center", "(3,)"]),
    (lambda: P.box_projection(np.zeros(3), [0.0, 2.0, 0.0], 1.0),
     ["lower", "upper", "lower[1]=", "2.0"]),
    (lambda: P.simplex_projection(np.zeros((2, 2, 2))), ["x", "(d,) or (B, d)"]),
    (lambda: P.simplex_projection([1.0, np.nan]), ["x", "finite"]),
    (lambda: P.nonneg_projection([]), ["x", "d >= 1"]),
])
def test_invalid_parameters_raise(call, words):
    with pytest.raises(ValueError) as info:
        call()
    for word in words:
        assert word in str(info.value), (word, str(info.value))
