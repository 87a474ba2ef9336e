"""The clipped Newton Hessian (fairness, nonconvex constraints): eigenvalues floored at ``clip``,
by a Cholesky test where none is below it (the matrix itself) and an eigendecomposition where
one is, against the eigendecomposition of every matrix within the round-off of a symmetric
eigensolver (docs/design.md#tolerances-of-the-vectorized-paths).
"""

from __future__ import annotations

import numpy as np

from repro.constrfl.subsolvers import clip_spectrum
from repro.core.roundoff import gamma


def _floored(H, clip):
    ev, vec = np.linalg.eigh(H)
    return np.einsum("bij,bj,bkj->bik", vec, np.maximum(ev, clip), vec)


def test_clip_spectrum_equals_the_floored_eigendecomposition():
    rng = np.random.default_rng(0)
    d, clip = 12, 1e-8
    A = rng.standard_normal((5, d, d))
    H = A @ A.transpose(0, 2, 1) + 1e3 * np.eye(d)          # every eigenvalue >= 1e3
    H[2] -= 1e3 * np.eye(d) + 3.0 * np.eye(d)                 # party 2: some below clip
    H[4] = -np.eye(d)                                          # party 4: all below clip
    out = clip_spectrum(H, clip)
    ref = _floored(H, clip)
    norm = np.linalg.norm(H, 2, axis=(1, 2))
    err = np.abs(out - ref).max(axis=(1, 2))
    assert np.all(err <= 10 * d * gamma(d) * norm), (err, norm)   # eigensolver's backward error
    assert np.array_equal(out[[0, 1, 3]], H[[0, 1, 3]])           # no eigenvalue floored
    assert np.allclose(out[4], clip * np.eye(d), rtol=0, atol=10 * gamma(d))
    assert np.linalg.eigvalsh(out[2]).min() >= clip - 10 * d * gamma(d) * norm[2]
    assert np.linalg.eigvalsh(H[2]).min() < 0                  # the test floors something


def test_a_stack_with_every_eigenvalue_above_clip_is_returned_unchanged():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((3, 6, 6))
    H = A @ A.transpose(0, 2, 1) + np.eye(6)
    assert clip_spectrum(H, 1e-8) is H
