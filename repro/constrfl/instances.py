"""Small instances of problem (5) for the theory checks, the tests and the benchmarks
(docs/decisions.md#constrfl-theory-instances); their cvxpy ground truth is
:mod:`repro.constrfl.groundtruth`.

* :func:`qp_ball`: quadratic objectives, a half-space and a ball per client, a global ball;
* :func:`np_small`: Neyman-Pearson (30)-(31) on Gaussian features with active constraints.
"""

from __future__ import annotations

import numpy as np

from repro.constrfl.blocks import LogisticBlock, QuadraticBlock
from repro.constrfl.problem import Problem, neyman_pearson

__all__ = ["np_small", "qp_ball"]


def qp_ball(rng: np.random.Generator, d: int = 6, n: int = 3) -> Problem:
    """QP-ball of docs/decisions.md#constrfl-theory-instances: ``f_i = ½wᵀA_iw + b_iᵀw``, ``b_i = -3
    g/||g||``; local ``c_i = (a_iᵀw - 0.1, ||w - z_i||^2 - 1)`` (a_i unit, ||z_i|| = 0.5); global
    ``c_0 = ||w||^2 - 1`` (Remark 4.1). w = 0 is strictly feasible.
    """
    A = np.empty((n, d, d))
    for i in range(n):
        U = np.linalg.qr(rng.standard_normal((d, d)))[0]
        A[i] = (U * rng.uniform(0.5, 1.0, d)) @ U.T
    g = rng.standard_normal((n, d))
    b = -3.0 * g / np.linalg.norm(g, axis=1, keepdims=True)
    a = rng.standard_normal((n, d))
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    z = rng.standard_normal((n, d))
    z *= 0.5 / np.linalg.norm(z, axis=1, keepdims=True)
    eye = np.eye(d)
    H = np.zeros((n, 2, d, d))
    H[:, 1] = 2 * eye
    G = np.stack([a, -2 * z], axis=1)
    r = np.stack([np.full(n, -0.1), np.sum(z * z, axis=1) - 1.0], axis=1)
    clients = QuadraticBlock(d, A, b, H, G, r)
    server = QuadraticBlock(d, None, None, (2 * eye)[None, None], np.zeros((1, 1, d)),
                            np.full((1, 1), -1.0))
    return Problem(server, (clients,))


def np_small(rng: np.random.Generator, d: int = 5, n: int = 3, m: int = 30) -> Problem:
    """NP-small (docs/decisions.md#constrfl-theory-instances): Gaussian features, class means ±0.5
    u, m rows per class and client.

    Thresholds ``r_i = 1.05 x`` client i's class-1 loss at the pooled logistic-regression fit
    ``w_lr`` (both classes): ``w_lr`` is strictly feasible (Slater) and the class-0 objective
    pushes the class-1 losses up, so the constraints are active. (The ``0.8 x`` the value at the
    minimiser of f of docs/decisions.md#constrfl-theory-instances gave infeasible instances;
    docs/deviations.md.)
    """
    import scipy.optimize

    u = rng.standard_normal(d)
    u /= np.linalg.norm(u)
    X0 = rng.standard_normal((n, m, d)) - 0.5 * u
    X1 = rng.standard_normal((n, m, d)) + 0.5 * u
    base = neyman_pearson(X0, X1, r=0.0)
    blk = base.clients[0]

    def fg(w):
        W = np.broadcast_to(w, (n, d))
        c = blk.c(W)[:, 0]
        return (float(blk.f(W).sum() * n + c.sum()),
                blk.grad_f(W).sum(axis=0) * n + blk.jac_c(W)[:, 0].sum(axis=0))

    w_lr = scipy.optimize.minimize(fg, np.zeros(d), jac=True, method="L-BFGS-B",
                                   options={"gtol": 1e-12, "ftol": 0.0}).x
    loss1 = blk.c(np.broadcast_to(w_lr, (n, d)))[:, 0]
    clients = LogisticBlock(d, blk.X, blk.y, blk.fw, blk.Gw, (1.05 * loss1)[:, None])
    return Problem(base.server, (clients,))
