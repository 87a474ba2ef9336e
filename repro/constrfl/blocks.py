"""Local functions of a batch of parties: f_i, c_i with gradients and Hessians.

A block holds ``b`` parties of identical structure (clients of equal size are stored as
``(b, M, d)`` arrays, docs/decisions.md#constrfl-cost); every method takes points ``W`` of shape
``(b, d)`` (party j is evaluated at ``W[j]``) and is vectorized over parties and rows.
``block.take(j)`` is the single-party block the loop oracle of the tests and benchmarks iterates
over.

Notation (docs/decisions.md#constrfl-problem): ``f_i : R^d -> R``, ``c_i : R^d -> R^{m_i}``; the
Jacobian is returned as ``(b, m, d)`` (rows = gradients of the constraint components).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import scipy.special
import torch

from repro.core.kernels import rows_transposed, weighted_gram
from repro.core.validation import check_shape

__all__ = ["PAIRED_MIN_ROWS", "FlopCount", "LogisticBlock", "QuadraticBlock", "count_flops",
           "log1pexp", "sigmoid"]


class FlopCount:
    """Floating-point operations of the logistic blocks' matrix products (``Xw``, ``Xᵀv``,
    ``Xᵀ diag(v) X``, the constraint Jacobian): 2 per multiply-add, elementwise work not
    counted. The bench's flop count of a run (:func:`count_flops`).
    """

    def __init__(self) -> None:
        self.flops = 0


_COUNTERS: list[FlopCount] = []


@contextmanager
def count_flops():
    """``with count_flops() as fc: ...`` counts the matrix-product flops run inside."""
    fc = FlopCount()
    _COUNTERS.append(fc)
    try:
        yield fc
    finally:
        _COUNTERS.remove(fc)


def _count(flops: int) -> None:
    for fc in _COUNTERS:
        fc.flops += flops


# rows per party from which a logistic block's row products are torch's two-row products
# (LogisticBlock.paired); the same threshold as the kept per-row parts of the Newton solver
PAIRED_MIN_ROWS = 256


def log1pexp(z: np.ndarray) -> np.ndarray:
    """``log(1 + e^z)`` without overflow (docs/decisions.md#constrfl-subproblem-solvers)."""
    return np.logaddexp(0.0, z)


def sigmoid(z: np.ndarray) -> np.ndarray:
    """``1/(1+e^-z)``: scipy's ``expit`` (stable for large |z|, relative accuracy also for
    tiny values, and ~3x faster than the tanh form of
    docs/decisions.md#constrfl-subproblem-solvers).
    """
    return scipy.special.expit(z)


@dataclass(frozen=True)
class QuadraticBlock:
    """``f(w) = ½ wᵀA w + bᵀw`` and ``c_k(w) = ½ wᵀH_k w + g_kᵀw + r_k``.

    ``A``: (b, d, d) or None (f ≡ 0); ``bvec``: (b, d) or None; ``H``: (b, m, d, d) or None
    (linear constraints, as in the LCQP (86)); ``G``: (b, m, d); ``r``: (b, m).
    ``equality`` marks ``c(w) = 0`` constraints (LCQP) instead of ``c(w) <= 0``.
    """

    d: int
    A: np.ndarray | None
    bvec: np.ndarray | None
    H: np.ndarray | None
    G: np.ndarray
    r: np.ndarray
    equality: bool = False

    def __post_init__(self) -> None:
        # shapes checked here, naming the argument, not deep inside numpy (docs/usage.md)
        d = self.d
        if not isinstance(d, (int, np.integer)) or d < 1:
            raise ValueError(f"d must be a positive integer (the model's dimension), got {d!r}")
        G = check_shape("G", self.G, (None, None, d), "(clients, constraints, d)")
        b, m = G.shape[:2]
        check_shape("r", self.r, (b, m), "(clients, constraints), as G")
        if self.A is not None:
            check_shape("A", self.A, (b, d, d), "(clients, d, d), one matrix per client of G")
        if self.bvec is not None:
            check_shape("bvec", self.bvec, (b, d), "(clients, d), one row per client of G")
        if self.H is not None:
            check_shape("H", self.H, (b, m, d, d), "(clients, constraints, d, d), as G")

    @property
    def size(self) -> int:
        return self.G.shape[0]

    @property
    def m(self) -> int:
        return self.G.shape[1]

    @property
    def quadratic_merit(self) -> bool:
        """P_{i,k} is quadratic (exact subproblem solves): linear equality constraints."""
        return self.H is None and self.equality

    @property
    def convex_constraints(self) -> bool:
        return True

    def take(self, j: int) -> QuadraticBlock:
        s = slice(j, j + 1)
        return QuadraticBlock(self.d, None if self.A is None else self.A[s],
                              None if self.bvec is None else self.bvec[s],
                              None if self.H is None else self.H[s], self.G[s], self.r[s],
                              self.equality)

    def f(self, W: np.ndarray) -> np.ndarray:
        out = np.zeros(W.shape[0])
        if self.A is not None:
            out += 0.5 * np.einsum("bi,bij,bj->b", W, self.A, W)
        if self.bvec is not None:
            out += np.einsum("bi,bi->b", self.bvec, W)
        return out

    def grad_f(self, W: np.ndarray) -> np.ndarray:
        out = np.zeros_like(W)
        if self.A is not None:
            out += np.einsum("bij,bj->bi", self.A, W)
        if self.bvec is not None:
            out += self.bvec
        return out

    def hess_f(self, W: np.ndarray) -> np.ndarray:
        if self.A is None:
            return np.zeros((W.shape[0], self.d, self.d))
        return self.A.copy()

    def c(self, W: np.ndarray) -> np.ndarray:
        out = np.einsum("bkd,bd->bk", self.G, W) + self.r
        if self.H is not None:
            out += 0.5 * np.einsum("bi,bkij,bj->bk", W, self.H, W)
        return out

    def jac_c(self, W: np.ndarray) -> np.ndarray:
        out = self.G.copy()
        if self.H is not None:
            out = out + np.einsum("bkij,bj->bki", self.H, W)
        return out

    def hess_c_weighted(self, W: np.ndarray, a: np.ndarray) -> np.ndarray:
        """``sum_k a_k ∇²c_k(W)``, shape (b, d, d)."""
        if self.H is None:
            return np.zeros((W.shape[0], self.d, self.d))
        return np.einsum("bk,bkij->bij", a, self.H)


@dataclass(frozen=True)
class LogisticBlock:
    """Weighted logistic losses: ``f(w) = sum_j fw_j phi_j(w)``, ``c(w) = G phi(w) - r``.

    ``phi_j(w) = -y_j wᵀx_j + log(1 + e^{wᵀx_j})`` (31). Rows ``X``: (b, M, d), labels ``y``:
    (b, M) in {0, 1}, objective weights ``fw``: (b, M), constraint weights ``Gw``: (b, m, M),
    thresholds ``r``: (b, m). Neyman-Pearson (30): ``fw = 1/(n m_i0)`` on class-0 rows and one
    constraint with weights ``1/m_i1`` on class-1 rows. Fairness (32): ``fw = 1/N_tot`` and two
    constraints ``±(L_0 - L_1) - r`` (a difference of convex functions).
    """

    d: int
    X: np.ndarray
    y: np.ndarray
    fw: np.ndarray
    Gw: np.ndarray
    r: np.ndarray
    equality: bool = False

    def __post_init__(self) -> None:
        X = check_shape("X", self.X, (None, None, self.d), "(clients, rows, d)")
        b, M = X.shape[:2]
        check_shape("y", self.y, (b, M), "(clients, rows), as X")
        check_shape("fw", self.fw, (b, M), "(clients, rows), as X")
        Gw = check_shape("Gw", self.Gw, (b, None, M), "(clients, constraints, rows), as X")
        check_shape("r", self.r, (b, Gw.shape[1]), "(clients, constraints), as Gw")

    @property
    def size(self) -> int:
        return self.X.shape[0]

    @property
    def m(self) -> int:
        return self.Gw.shape[1]

    @property
    def quadratic_merit(self) -> bool:
        return False

    @property
    def convex_constraints(self) -> bool:
        """Nonnegative constraint weights make each c_k a positive sum of convex losses."""
        return bool(np.all(self.Gw >= 0))

    def take(self, j: int) -> LogisticBlock:
        s = slice(j, j + 1)
        return LogisticBlock(self.d, self.X[s], self.y[s], self.fw[s], self.Gw[s], self.r[s])

    # The row products run as batched matrix products of torch's BLAS (MKL on the x86 wheels;
    # as fast as numpy's gemv for one point and without OpenBLAS's packing of X for two).
    # z = Xw is taken two points at a time, one alone with a zero second row: the BLAS picks
    # its kernel by the operands' shapes, so a point's z is the same bits whether it is
    # evaluated alone or with another point (the clients' trial point and the broadcast w of
    # (22) share one pass over the rows, Merit.value_grad_and_grad_at), and the per-row parts
    # kept from a paired pass are those a later pass at that point computes
    # (tests/constrfl/test_constrfl_pairs.py).
    # Blocks of fewer rows per party than PAIRED_MIN_ROWS (monks-1, breast-cancer-wisc: tens
    # of rows) keep numpy's matrix-vector products and are never paired: there a product
    # costs less than the Python work around the torch call.
    @property
    def paired(self) -> bool:
        """Whether z and the row sums run as the two-row products (and a solve pairs the
        broadcast w of (22) with its first trial point).
        """
        return self.X.shape[1] >= PAIRED_MIN_ROWS

    def _z(self, W: np.ndarray) -> np.ndarray:
        if not self.paired:
            if _COUNTERS:
                _count(2 * self.X.size)
            return np.matmul(self.X, W[:, :, None])[:, :, 0]
        return self._z_pair(W, np.zeros_like(W), points=1)[:, 0]

    def _rows_t(self, v: np.ndarray) -> np.ndarray:
        """``sum_m v[b, m] x_{b,m}``: (b, M) row weights -> (b, d)."""
        if _COUNTERS:
            _count(2 * self.X.size)
        if not self.paired:
            return np.matmul(v[:, None, :], self.X)[:, 0, :]
        return torch.bmm(torch.from_numpy(np.ascontiguousarray(v)).unsqueeze(1),
                         torch.from_numpy(self.X)).numpy()[:, 0, :]

    def _z_pair(self, W: np.ndarray, V: np.ndarray, points: int = 2) -> np.ndarray:
        """``z`` at two points per party, (b, 2, M) with ``[:, 0]`` at ``W`` and ``[:, 1]`` at
        ``V``, from ONE pass over the rows: the (2, d) points times the kept transpose of
        ``X`` (:func:`repro.core.kernels.rows_transposed`). ``points``: how many of the two
        are wanted (the flop count's).
        """
        if _COUNTERS:
            _count(2 * points * self.X.size)
        P = torch.from_numpy(np.stack((W, V), axis=1))
        return torch.bmm(P, torch.from_numpy(rows_transposed(self.X))).numpy()

    def _rows_t_pair(self, v: np.ndarray) -> np.ndarray:
        """:meth:`_rows_t` of two row weightings per party, (b, 2, M) -> (b, 2, d), from one
        pass over the rows (another kernel than one row's: the sums agree with
        :meth:`_rows_t`'s to the round-off bound of a dot product of length M).
        """
        if _COUNTERS:
            _count(4 * self.X.size)
        return torch.bmm(torch.from_numpy(np.ascontiguousarray(v)),
                         torch.from_numpy(self.X)).numpy()

    def _gram(self, v: np.ndarray) -> np.ndarray:
        """``sum_m v[b, m] x_{b,m} x_{b,m}ᵀ``: (b, M) row weights -> (b, d, d)."""
        if _COUNTERS:
            _count(2 * self.X.size * self.d + self.X.size)
        return weighted_gram(self.X, v)[0]

    def _gram_jac(self, v: np.ndarray, dphi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(_gram(v), _jac(dphi))`` from one batched product over the rows
        (:func:`repro.core.kernels.weighted_gram` with the Jacobian's row weights as extra
        columns): the Newton Hessian's two row sums in one pass.
        """
        if _COUNTERS:
            _count(2 * self.X.size * (self.d + self.m) + self.X.size)
        return weighted_gram(self.X, v, self.Gw * dphi[:, None, :])

    def _jac(self, dphi: np.ndarray) -> np.ndarray:
        """The constraint Jacobian ``(b, m, d)`` from the rows' ``phi'``."""
        if _COUNTERS:
            _count(2 * self.X.size * self.m)
        return np.matmul(self.Gw * dphi[:, None, :], self.X)

    def phi(self, W: np.ndarray) -> np.ndarray:
        z = self._z(W)
        return log1pexp(z) - self.y * z

    def _dphi(self, z: np.ndarray) -> np.ndarray:
        return sigmoid(z) - self.y

    @staticmethod
    def _d2phi(z: np.ndarray) -> np.ndarray:
        s = sigmoid(z)
        return s * (1.0 - s)

    def f(self, W: np.ndarray) -> np.ndarray:
        return np.einsum("bm,bm->b", self.fw, self.phi(W))

    def grad_f(self, W: np.ndarray) -> np.ndarray:
        return self._rows_t(self.fw * self._dphi(self._z(W)))

    def hess_f(self, W: np.ndarray) -> np.ndarray:
        return self._gram(self.fw * self._d2phi(self._z(W)))

    def c(self, W: np.ndarray) -> np.ndarray:
        return np.matmul(self.Gw, self.phi(W)[:, :, None])[:, :, 0] - self.r

    def jac_c(self, W: np.ndarray) -> np.ndarray:
        return self._jac(self._dphi(self._z(W)))

    def hess_c_weighted(self, W: np.ndarray, a: np.ndarray) -> np.ndarray:
        return self._gram(self._mixed_weights(a) * self._d2phi(self._z(W)))

    def _mixed_weights(self, a: np.ndarray) -> np.ndarray:
        """``sum_k a_k Gw_k``: (b, m) -> (b, M). One constraint (Neyman-Pearson): the
        elementwise product, which is what the matmul's single term is (bitwise: a sum of one
        product with no rounding in between; tests/constrfl/test_blocks.py holds it to the
        matmul).
        """
        if self.Gw.shape[1] == 1:
            return a[:, :1] * self.Gw[:, 0, :]
        return np.matmul(a[:, None, :], self.Gw)[:, 0, :]

    def lagrangian_grad(self, W: np.ndarray, a: np.ndarray) -> np.ndarray:
        """``grad f + grad c · a`` in one pass over the rows (both are row-weighted sums of
        ``phi'(z_m) x_m``).
        """
        return self._rows_t((self.fw + self._mixed_weights(a)) * self._dphi(self._z(W)))

    def loss_parts(self, W: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(phi, phi', phi'')`` of every row at ``W`` from ONE pass over the rows: one
        ``z = Xw`` and one ``e = exp(-|z|)`` give ``log(1+e^z) = max(z,0) + log1p(e)``, the
        sigmoid ``1/(1+e)`` (z >= 0) or ``e/(1+e)`` (z < 0) and ``sigma(1-sigma) = e/(1+e)^2``
        (the batched solver's kernel; :meth:`phi` / :meth:`_dphi` are the oracle's).
        """
        return self._loss_parts(W, True)

    def _loss_parts(self, W: np.ndarray, second: bool | None):
        """:meth:`loss_parts` (``phi''`` only when ``second``; None when False: the value and
        gradient of :meth:`Merit.value_grad` do not use it; with ``second=None`` the pair
        ``(e/(1+e), 1/(1+e))`` from which :meth:`d2phi_from` makes it later). The same
        elementwise operations in the same order as the formulas of :meth:`loss_parts`, written
        in place (fewer temporaries), hence bitwise the same numbers.
        """
        return self._parts_of(self._z(W), self.y, second)

    def _parts_of(self, z: np.ndarray, y: np.ndarray, second: bool | None):
        """The elementwise half of :meth:`_loss_parts` on given ``z`` (any shape ``y``
        broadcasts to: (b, M), or (b, 2, M) for :meth:`_z_pair`'s two points per party).
        """
        e = np.abs(z)
        np.negative(e, out=e)
        np.exp(e, out=e)                       # e = exp(-|z|)
        inv = np.add(e, 1.0)
        np.divide(1.0, inv, out=inv)           # 1 / (1 + e)
        phi = np.maximum(z, 0.0)
        phi += np.log1p(e)
        phi -= y * z
        ei = e * inv
        # sigma(z) = 1/(1+e) where z >= 0, e/(1+e) else: max(e, [z >= 0]) is 1.0 where z >= 0
        # (e <= 1) and e else (e > 0), so its product with 1/(1+e) gives exactly those two
        # values (1.0 * inv = inv; e * inv = ei, the same product), without np.where's
        # data-dependent select (2-3x the time)
        dphi = np.maximum(e, z >= 0)
        dphi *= inv
        dphi -= y
        if second is None:                     # keep e/(1+e) and 1/(1+e) for a later phi''
            return phi, dphi, (ei, inv)
        if not second:
            return phi, dphi, None
        ei *= inv                              # e * inv * inv, left to right
        return phi, dphi, ei

    @staticmethod
    def d2phi_from(pending: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """``phi''`` from the ``(e/(1+e), 1/(1+e))`` that :meth:`_loss_parts` with
        ``second=None`` kept: ``e * inv * inv`` left to right, the same product as
        :meth:`loss_parts` (bitwise), without a second pass over the rows.
        """
        ei, inv = pending
        return ei * inv

    def lagrangian_hess(self, W: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(∇²f + sum_k a_k ∇²c_k, jac_c)`` from one evaluation of ``z = Xw``."""
        z = self._z(W)
        H = self._gram((self.fw + self._mixed_weights(a)) * self._d2phi(z))
        J = self._jac(self._dphi(z))
        return H, J
