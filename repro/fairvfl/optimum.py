"""The minimizer of FedBCD's objective on the LM, the limit T -> infinity of its rounds: a reading
of the run length neither [C] nor [J] states (docs/deviations.md, ``fairvfl-run-length-and-
ridge``).

FedBCD (``fair=False``) is block-coordinate descent on the smooth, strongly convex ``L(theta) =
(1/n) sum_i log(1 + exp(-y_i sum_k X^k_i theta_k)) + (mu/2) sum_k ||theta_k||^2`` ([C](1) =
[J](1)); its rounds converge to the unique minimizer, which this module computes centrally with
Newton's method to a gradient of at most ``gtol`` (sup norm). Only the LM: the MLP's objective
is not convex. The cells of the ``optimum`` readings start FedBCD at this point, so the record's
scores, post-processors and metrics are those of the converged model.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse
from scipy.special import expit

from repro.fairvfl.problem import softplus

__all__ = ["lm_optimum"]


def lm_optimum(blocks, y, mu: float, gtol: float = 1e-10, max_iter: int = 200
               ) -> list[np.ndarray]:
    """``theta*`` split per block (the ``init`` of :func:`repro.fairvfl.methods.build`);
    ``blocks``: the ``LinearBlock`` of each party, ``y`` in {-1, +1}, ``mu`` the ridge weight.
    Newton's method with the exact Hessian ``X^T D X / n + mu I`` (d <= 104 columns here) and a
    backtracking line search, to a gradient of at most ``gtol`` (sup norm); ``RuntimeError``
    where ``max_iter`` steps do not get there.
    """
    X = scipy.sparse.hstack([scipy.sparse.csr_matrix(b.X) for b in blocks]).tocsr()
    y = np.asarray(y, dtype=np.float64)
    n, d = X.shape

    def value(theta):
        return float(np.mean(softplus(-y * (X @ theta))) + 0.5 * mu * theta @ theta)

    theta = np.zeros(d)
    for _ in range(max_iter):
        m = -y * (X @ theta)
        p = expit(m)
        grad = X.T @ (-y * p) / n + mu * theta
        if np.max(np.abs(grad)) <= gtol:
            cuts = np.cumsum([b.dim for b in blocks])[:-1]
            return np.split(theta, cuts)
        w = p * (1.0 - p) / n
        H = (X.T @ X.multiply(w[:, None])).toarray() + mu * np.eye(d)
        step = np.linalg.solve(H, grad)
        f0, t = value(theta), 1.0
        while value(theta - t * step) > f0 - 1e-4 * t * grad @ step and t > 1e-12:
            t *= 0.5
        theta = theta - t * step
    raise RuntimeError(f"Newton's method on the LM objective did not reach a gradient of "
                       f"{gtol:g} in {max_iter} steps (last {np.max(np.abs(grad)):.2g})")
