"""Dense float64 kernels of the hot paths, shared by the papers' batched solvers.

:func:`weighted_gram` forms ``X_bᵀ diag(v_b) X_b`` for a stack of row matrices (the Hessian of
a row-weighted sum of losses of ``Xw``) with one batched matrix product of torch's BLAS (MKL
on the x86 wheels): on tall-skinny stacks (thousands of rows, tens of columns) it runs 1.5-2x
as fast as numpy's ``matmul`` through OpenBLAS (figures/bench.md, ``core.kernels``). The
scaled rows are written into a scratch buffer kept per shape, so no call faults in fresh pages.

Numbers: the sums run in BLAS's order, not in the order of a plain ``(Xᵀ * v) @ X``; the
results agree with that form to the round-off bound of a dot product of length M,
``|error| <= gamma_M · (|X|ᵀ |diag(v)| |X|)`` (:mod:`repro.core.roundoff`), and each call is
deterministic on one machine and thread count (MKL's packed kernels do not depend on the
operands' alignment; a test checks both).
"""

from __future__ import annotations

import weakref

import numpy as np
import torch

from repro.core.roundoff import gamma

__all__ = ["gram_error_bound", "rows_transposed", "weighted_gram"]

# per (rows, columns): one flat float64 buffer, grown to the largest stack asked for
_SCRATCH: dict[tuple[int, int], torch.Tensor] = {}
_SCRATCH_MAX = 16
# per row stack X (by identity, while it lives): its transpose (b, d, M), contiguous
_TRANSPOSED: dict[int, tuple[weakref.ref, torch.Tensor]] = {}
_TRANSPOSED_MAX = 32


def _scratch(b: int, rows: int, cols: int) -> torch.Tensor:
    key = (rows, cols)
    buf = _SCRATCH.get(key)
    if buf is None or buf.numel() < b * rows * cols:
        if buf is None and len(_SCRATCH) >= _SCRATCH_MAX:
            _SCRATCH.pop(next(iter(_SCRATCH)))
        buf = torch.empty(b * rows * cols, dtype=torch.float64)
        _SCRATCH[key] = buf
    return buf[:b * rows * cols].view(b, rows, cols)


def _transposed(X: np.ndarray) -> torch.Tensor:
    """``Xᵀ`` per party as a contiguous (b, d, M) tensor, made once per row stack: the blocks'
    ``X`` never change (a solver's sub-batch is a new array, with its own entry). A dead or
    replaced array's entry is dropped.
    """
    hit = _TRANSPOSED.get(id(X))
    if hit is not None and hit[0]() is X:
        return hit[1]
    for key in [k for k, (ref, _) in _TRANSPOSED.items() if ref() is None]:
        del _TRANSPOSED[key]
    if len(_TRANSPOSED) >= _TRANSPOSED_MAX:
        _TRANSPOSED.pop(next(iter(_TRANSPOSED)))
    XT = torch.from_numpy(np.ascontiguousarray(X.transpose(0, 2, 1)))
    _TRANSPOSED[id(X)] = (weakref.ref(X), XT)
    return XT


def rows_transposed(X: np.ndarray) -> np.ndarray:
    """``Xᵀ`` per party, (b, d, M) contiguous, kept while ``X`` lives (the array the scaled
    rows of :func:`weighted_gram` are formed from): a product ``P Xᵀ`` of a few points ``P``
    (k, d) reads the rows once for all of them.
    """
    return _transposed(X).numpy()


def weighted_gram(X: np.ndarray, v: np.ndarray, extra: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray | None]:
    """``(G, J)`` with ``G[j] = X_jᵀ diag(v_j) X_j`` (b, d, d) and, when ``extra`` (b, k, M)
    is given, ``J[j] = extra_j X_j`` (b, k, d): both from ONE batched product
    ``[X_jᵀ diag(v_j) ; extra_j] X_j`` (one pass over the rows for both). The scaled rows are
    formed from the kept transpose of ``X`` (:func:`_transposed`), so the scaling runs along
    contiguous rows.

    ``X`` (b, M, d) and ``v`` (b, M) float64. The outputs are views of one fresh array.
    """
    b, M, d = X.shape
    k = 0 if extra is None else extra.shape[1]
    buf = _scratch(b, d + k, M)
    Xt = torch.from_numpy(np.ascontiguousarray(X))
    torch.mul(_transposed(X), torch.from_numpy(np.ascontiguousarray(v)).unsqueeze(1),
              out=buf[:, :d])
    if k:
        buf[:, d:].copy_(torch.from_numpy(np.asarray(extra)))
    R = torch.bmm(buf, Xt).numpy()
    return R[:, :d], (R[:, d:] if k else None)


def gram_error_bound(X: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Entrywise bound on the round-off of any summation order of ``X_jᵀ diag(v_j) X_j``:
    ``gamma_{M+1} · |X_j|ᵀ diag(|v_j|) |X_j|`` (M products, one more rounding for the
    scaling; :mod:`repro.core.roundoff`), the tolerance the tests hold :func:`weighted_gram`
    to against the plain form (twice it: both sides round).
    """
    A = np.abs(X)
    return gamma(X.shape[1] + 1) * np.matmul(A.transpose(0, 2, 1) * np.abs(v)[:, None, :], A)
