"""Exact solves of quadratic subproblems (the LCQP (86)): ``(Q + rho I) u = rho ctr - lin - p``
with ``Q + rho I`` Cholesky-factorized once per Algorithm-1 run (:class:`FactorCache`) and
reused in every ADMM round (docs/decisions.md#constrfl-subproblem-solvers,
docs/decisions.md#constrfl-cost).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg.blas
import scipy.linalg.lapack

from repro.constrfl.merit import Merit

__all__ = ["ExactQuadratic", "FactorCache", "cholesky_factors"]


class ExactQuadratic:
    """Exact minimiser of ``½uᵀQu + pᵀu + <lin,u> + (rho/2)||u - ctr||^2`` for a batch.

    ``factorize=True`` uses one Cholesky factor of ``Q_j + rho I`` per party and reuses it in
    every round (two triangular solves, O(d^2), BLAS ``trsv`` called directly: at d = 300
    scipy's ``cho_solve`` checks and copies cost as much as the solve). ``Q`` does not depend
    on the outer iteration (``A + beta CᵀC + prox I``, docs/decisions.md#constrfl-lcqp-experiment;
    only ``p`` moves with ``mu^k, w^k``), so ``factors`` may pass the factors of an earlier outer
    iteration (see :class:`FactorCache`); the factor, hence every number, is the same as a fresh
    one. ``factorize=False`` is the reference script's fresh dense solve per round, kept as the loop
    oracle.
    """

    def __init__(self, Q: np.ndarray, p: np.ndarray, rho: float, factorize: bool = True,
                 factors: list[np.ndarray] | None = None):
        self.Q, self.p, self.rho, self.factorize = Q, p, rho, factorize
        if factorize:
            self._chol = factors if factors is not None else cholesky_factors(Q, rho)
        else:
            self._M = Q + rho * np.eye(Q.shape[-1])

    def solve(self, lin: np.ndarray, ctr: np.ndarray) -> np.ndarray:
        rhs = self.rho * ctr - lin - self.p
        if self.factorize:
            out = np.empty_like(rhs)
            for j, c in enumerate(self._chol):
                # ``Rᵀ y = v`` then ``R u = y`` (R upper): two BLAS-2 triangular solves, about
                # half the time of LAPACK potrs with a single right-hand side.
                out[j] = _trsv(c, _trsv(c, rhs[j], trans=1), trans=0)
            return out
        return np.stack([np.linalg.solve(M, v) for M, v in zip(self._M, rhs, strict=True)])

    def residual(self, U, lin, ctr) -> np.ndarray:
        g = np.einsum("bij,bj->bi", self.Q, U) + self.p + lin + self.rho * (U - ctr)
        return np.max(np.abs(g), axis=1)


_trsv = scipy.linalg.blas.get_blas_funcs("trsv", (np.empty(1),))
_potrf = scipy.linalg.lapack.get_lapack_funcs("potrf", (np.empty(1),))


def cholesky_factors(Q: np.ndarray, rho: float) -> list[np.ndarray]:
    """Upper Cholesky factors of ``Q_j + rho I`` (what ``scipy.linalg.cho_factor`` computes,
    without its finiteness scan); a non-positive-definite matrix raises ``LinAlgError``.
    """
    d = Q.shape[-1]
    out = []
    for j, Qj in enumerate(Q):
        # Q_j + rho I built in the Fortran order LAPACK reads (the copy f2py would make) and
        # factorized in place: the same entries (off the diagonal q + 0 = q), one copy fewer
        M = np.array(Qj, order="F")
        M.reshape(-1, order="F")[::d + 1] += rho
        c, info = _potrf(M, lower=False, clean=False, overwrite_a=True)
        if info != 0:
            raise np.linalg.LinAlgError(f"Q_{j} + rho I is not positive definite (potrf {info})")
        out.append(c)
    return out


class FactorCache:
    """``Q`` and the Cholesky factors of ``Q + rho I`` kept for one Algorithm-1 run.

    Keyed by the block object and ``(beta, prox, rho)``, which determine Q exactly
    (:meth:`Merit.quadratic_matrix`); the run holds its problem, so the blocks outlive the cache.
    """

    def __init__(self) -> None:
        self._store: dict[tuple, tuple[np.ndarray, list[np.ndarray]]] = {}
        self.hits = self.misses = 0

    def get(self, merit: Merit, rho: float) -> tuple[np.ndarray, list[np.ndarray]]:
        key = (id(merit.block), float(merit.beta), float(merit.prox), float(rho))
        if key in self._store:
            self.hits += 1
        else:
            self.misses += 1
            Q = merit.quadratic_matrix()
            self._store[key] = (Q, cholesky_factors(Q, rho))
        return self._store[key]
