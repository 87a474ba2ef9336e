"""The shared dense kernels against their plain forms, within the round-off bound of
:mod:`repro.core.roundoff` (docs/design.md#tolerances-of-the-vectorized-paths), and bitwise
deterministic across calls and operand alignments.
"""

from __future__ import annotations

import numpy as np
import pytest

from repro.core.kernels import gram_error_bound, weighted_gram
from repro.core.roundoff import gamma, unit_roundoff


def _plain(X, v, E=None):
    G = np.matmul(X.transpose(0, 2, 1) * v[:, None, :], X)
    return G, (None if E is None else np.matmul(E, X))


def test_gamma_is_k_u_over_one_minus_k_u():
    assert unit_roundoff("float64") == 2.0 ** -53
    assert unit_roundoff("torch.float32") == 2.0 ** -24
    assert gamma(10) == pytest.approx(10 * 2.0 ** -53 / (1 - 10 * 2.0 ** -53), rel=1e-15)
    with pytest.raises(ValueError, match="k u < 1"):
        gamma(2 ** 24, "float32")


@pytest.mark.parametrize(("b", "M", "d", "k"), [(1, 3000, 7, 0), (4, 1500, 12, 2),
                                                (3, 20, 38, 1)])
def test_weighted_gram_is_the_plain_form_within_twice_the_dot_product_bound(b, M, d, k):
    rng = np.random.default_rng(M + d)
    # one-hot-like columns and mixed-sign weights (the fairness constraints' rows), and a
    # badly scaled column: the bound follows |X|ᵀ|v||X|, not the entries' size
    X = rng.standard_normal((b, M, d)) * (rng.random((b, M, d)) < 0.4)
    X[..., 0] *= 1e4
    v = rng.standard_normal((b, M))
    E = rng.standard_normal((b, k, M)) if k else None
    G, C = weighted_gram(X, v, E)
    Gp, Cp = _plain(X, v, E)
    bound = 2 * gram_error_bound(X, v)
    assert np.all(np.abs(G - Gp) <= bound)
    assert np.abs(G - Gp).max() > 0 or M < 100   # really summed in another order
    if k:
        cb = 2 * gamma(M) * np.matmul(np.abs(E), np.abs(X))
        assert C.shape == (b, k, d) and np.all(np.abs(C - Cp) <= cb)
    else:
        assert C is None


def test_weighted_gram_is_bitwise_deterministic_across_calls_and_alignments():
    rng = np.random.default_rng(5)
    X0, v0 = rng.standard_normal((2, 5000, 38)), rng.standard_normal((2, 5000))
    E0 = rng.standard_normal((2, 2, 5000))
    ref = [a.copy() for a in weighted_gram(X0, v0, E0)]

    def shifted(a, off):      # the same values at another address (8-byte steps)
        raw = np.empty(a.size * 8 + 128, dtype=np.uint8)
        base = (-raw.ctypes.data) % 64 + off
        out = raw[base:base + a.size * 8].view(np.float64).reshape(a.shape)
        out[...] = a
        return out

    for off in (0, 8, 24, 40, 56):
        got = weighted_gram(shifted(X0, off), shifted(v0, 64 - off - 8), shifted(E0, off))
        assert all(np.array_equal(g, r) for g, r in zip(got, ref, strict=True))
