"""The local merit functions P_{i,k} of (13)-(14), their gradient (50) and generalized Hessian.

For party i at outer iteration k (prox centre ``w^k``, multipliers ``mu_i^k``, penalty beta)::

    P_{i,k}(w) = f_i(w) + (1/(2 beta)) (||[mu_i + beta c_i(w)]_+||^2 - ||mu_i||^2)
                 + (prox/2) ||w - w^k||^2                                            (13)-(14)
    grad P_{i,k}(w) = grad f_i(w) + grad c_i(w) [mu_i + beta c_i(w)]_+ + prox (w - w^k)     (50)

with ``prox = 1/((n+1) beta)`` in the paper (``1/((n+2) beta)`` in the reference LCQP script).
For equality constraints (the LCQP (86)) ``[.]_+`` is dropped (standard equality AL,
docs/decisions.md#constrfl-lcqp-experiment). The generalized Hessian
(docs/decisions.md#constrfl-subproblem-solvers) is ``∇²f + sum_j a_j ∇²c_j + beta sum_{j active}
∇c_j ∇c_jᵀ + prox I`` with ``a = [mu + beta c]_+``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Merit", "multiplier_update"]


def _plus(block, s: np.ndarray) -> np.ndarray:
    return s if block.equality else np.maximum(s, 0.0)


def multiplier_update(block, mu: np.ndarray, W: np.ndarray, beta: float) -> np.ndarray:
    """Lines 5 and 7 of Algorithm 1: ``mu^{k+1} = [mu^k + beta c(w^{k+1})]_+``."""
    return _plus(block, mu + beta * block.c(W))


def _add_to_diagonal(H: np.ndarray, v: float) -> None:
    """``H[:, i, i] += v`` for a stack of square matrices, through a strided view of the
    diagonals when ``H`` is contiguous (the same additions as the fancy index, without building
    its index arrays).
    """
    b, d, _ = H.shape
    if H.flags.c_contiguous:
        H.reshape(b, d * d)[:, ::d + 1] += v
    else:
        H[:, np.arange(d), np.arange(d)] += v


@dataclass(frozen=True)
class Merit:
    """P_{i,k} of the parties of ``block`` for fixed ``(mu (b, m), center (d,), beta, prox)``."""

    block: object
    mu: np.ndarray
    center: np.ndarray
    beta: float
    prox: float

    def _s(self, W: np.ndarray) -> np.ndarray:
        return self.mu + self.beta * self.block.c(W)

    def value(self, W: np.ndarray) -> np.ndarray:
        a = _plus(self.block, self._s(W))
        al = (np.sum(a * a, axis=1) - np.sum(self.mu * self.mu, axis=1)) / (2 * self.beta)
        dw = W - self.center
        return self.block.f(W) + al + 0.5 * self.prox * np.sum(dw * dw, axis=1)

    def grad(self, W: np.ndarray) -> np.ndarray:
        if hasattr(self.block, "loss_parts"):    # one pass over the rows (logistic blocks)
            return self.value_grad(W)[1]
        a = _plus(self.block, self._s(W))
        if hasattr(self.block, "lagrangian_grad"):   # one pass over the rows (logistic blocks)
            g = self.block.lagrangian_grad(W, a)
        else:
            g = self.block.grad_f(W) + np.einsum("bkd,bk->bd", self.block.jac_c(W), a)
        return g + self.prox * (W - self.center)

    def value_grad(self, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(P(W), grad P(W))`` together; a logistic block makes one pass over its rows
        (:meth:`LogisticBlock.loss_parts`), the batched solver's kernel. Other blocks: the
        separate :meth:`value` and :meth:`grad`.
        """
        blk = self.block
        if not hasattr(blk, "loss_parts"):
            return self.value(W), self.grad(W)
        return self._value_grad(W, False)[:2]

    def value_grad_parts(self, W: np.ndarray):
        """``(P(W), grad P(W), parts)``: :meth:`value_grad` of a logistic block and the
        per-row quantities ``parts = (phi, phi', e/(1+e), 1/(1+e))`` of that same pass, from
        which :meth:`hess_from_parts` gives the generalized Hessian at ``W`` without another
        pass over the rows (the batched Newton's accepted point is the next Hessian's point).
        """
        return self._value_grad(W, None)

    def _value_grad(self, W, second):
        blk = self.block
        phi, dphi, pending = blk._loss_parts(W, second)
        parts = None if pending is None else (phi, dphi, *pending)
        val, weights = self._value_and_row_weights(W, phi, dphi)
        return val, blk._rows_t(weights) + self.prox * (W - self.center), parts

    def _value_and_row_weights(self, W, phi, dphi):
        """``P(W)`` and the row weights whose sum ``Xᵀ(weights)`` is ``grad P(W)`` less its
        proximal term, from the per-row ``phi`` and ``phi'`` at ``W``.
        """
        blk = self.block
        c = np.matmul(blk.Gw, phi[:, :, None])[:, :, 0] - blk.r
        a = _plus(blk, self.mu + self.beta * c)
        dw = W - self.center
        # ndarray.sum is np.sum's reduction (np.add.reduce) without its Python wrapper
        val = (np.einsum("bm,bm->b", blk.fw, phi)
               + ((a * a).sum(axis=1) - (self.mu * self.mu).sum(axis=1)) / (2 * self.beta)
               + 0.5 * self.prox * (dw * dw).sum(axis=1))
        return val, (blk.fw + blk._mixed_weights(a)) * dphi

    def value_grad_and_grad_at(self, W: np.ndarray, V: np.ndarray, parts: bool = True):
        """``(P(W), grad P(W), parts or None, grad P(V))`` of a logistic block, both points
        from ONE pass over the rows (:meth:`LogisticBlock._z_pair`, one ``Xᵀ`` product for
        both gradients): the client solve's trial point and the broadcast ``w^{t+1}`` of
        (22) cost one read of the rows, not two. The value and the per-row parts are bitwise
        :meth:`value_grad_parts`'s at ``W`` (the same operations on each point,
        :class:`~repro.constrfl.blocks.LogisticBlock` takes ``z`` two rows at a time either
        way); the two gradients' row sums are one product, within the round-off bound of a
        dot product of length M of the single-point sums
        (docs/design.md#tolerances-of-the-vectorized-paths).
        """
        blk = self.block
        phi, dphi, pending = blk._parts_of(blk._z_pair(W, V), blk.y[:, None, :],
                                           None if parts else False)
        val, w0 = self._value_and_row_weights(W, phi[:, 0], dphi[:, 0])
        w1 = self._value_and_row_weights(V, phi[:, 1], dphi[:, 1])[1]
        g2 = blk._rows_t_pair(np.stack((w0, w1), axis=1))
        kept = None if pending is None else (phi[:, 0], dphi[:, 0], pending[0][:, 0],
                                             pending[1][:, 0])
        return (val, g2[:, 0] + self.prox * (W - self.center), kept,
                g2[:, 1] + self.prox * (V - self.center))

    def hess_from_parts(self, parts) -> np.ndarray:
        """The generalized Hessian (:meth:`hess`) at the point where
        :meth:`value_grad_parts` returned ``parts`` (bitwise the same matrix: the same
        per-row numbers enter the same operations).
        """
        phi, dphi, ei, inv = parts
        return self._logistic_hess(phi, dphi, self.block.d2phi_from((ei, inv)))

    def _logistic_hess(self, phi, dphi, d2):
        blk = self.block
        s = self.mu + self.beta * (np.matmul(blk.Gw, phi[:, :, None])[:, :, 0] - blk.r)
        a = _plus(blk, s)
        H, J = blk._gram_jac((blk.fw + blk._mixed_weights(a)) * d2, dphi)
        active = np.ones_like(s) if blk.equality else (s > 0).astype(float)
        return self._finish_hess(H, J, active, blk.d)

    def hess(self, W: np.ndarray) -> np.ndarray:
        blk = self.block
        if hasattr(blk, "loss_parts"):     # one pass over the rows (logistic blocks)
            return self._logistic_hess(*blk.loss_parts(W))
        s = self._s(W)
        a = _plus(self.block, s)
        active = np.ones_like(s) if self.block.equality else (s > 0).astype(float)
        if hasattr(self.block, "lagrangian_hess"):
            H, J = self.block.lagrangian_hess(W, a)
        else:
            J = self.block.jac_c(W)
            H = self.block.hess_f(W) + self.block.hess_c_weighted(W, a)
        return self._finish_hess(H, J, active, W.shape[1])

    def _finish_hess(self, H, J, active, d):
        """``H + beta sum_{j active} ∇c_j ∇c_jᵀ + prox I`` (the generalized Hessian)."""
        H = H + self.beta * np.matmul(J.transpose(0, 2, 1) * active[:, None, :], J)
        _add_to_diagonal(H, self.prox)
        return H

    def quadratic_form(self) -> tuple[np.ndarray, np.ndarray]:
        """``(Q, p)`` with ``P(w) = ½wᵀQw + pᵀw + const`` (linear equality constraints only).

        ``Q = A + beta CᵀC + prox I``, ``p = b + Cᵀmu + beta Cᵀd - prox w^k``
        (docs/decisions.md#constrfl-lcqp-experiment).
        """
        return self.quadratic_matrix(), self.quadratic_linear()

    def _check_quadratic(self):
        if not self.block.quadratic_merit:
            raise ValueError("quadratic_form needs linear equality constraints")
        return self.block

    def quadratic_matrix(self) -> np.ndarray:
        """``Q = A + beta CᵀC + prox I``: independent of ``mu^k`` and ``w^k``."""
        blk = self._check_quadratic()
        if blk.A is None:
            Q = np.matmul(blk.G.transpose(0, 2, 1), blk.G)             # batched BLAS
            Q *= self.beta                      # = beta * (CᵀC), without a second array
        else:
            # A + beta CᵀC as ONE batched product writing its output once (torch's BLAS:
            # C = alpha A B + C), not a product, a scaling and a sum over the d x d stack
            import torch

            G = torch.from_numpy(np.ascontiguousarray(blk.G))
            Q = torch.baddbmm(torch.from_numpy(np.ascontiguousarray(blk.A)),
                              G.transpose(1, 2), G, alpha=self.beta).numpy()
        _add_to_diagonal(Q, self.prox)
        return Q

    def quadratic_linear(self) -> np.ndarray:
        """``p = b + Cᵀmu + beta Cᵀd - prox w^k`` (moves with the outer iteration)."""
        blk = self._check_quadratic()
        b, d = blk.size, blk.d
        p = (np.einsum("bkd,bk->bd", blk.G, self.mu + self.beta * blk.r)
             - self.prox * np.broadcast_to(self.center, (b, d)))
        if blk.bvec is not None:
            p = p + blk.bvec
        return p
