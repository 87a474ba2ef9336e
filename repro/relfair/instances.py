"""Small instances of paper 002's problem for the tests, the theory checks and the benchmarks,
with their ground truth.

- :func:`gaussian_clients`: n clients of learnable Gaussian clusters (10 classes) split by
  Dirichlet(0.5) labels, one client optionally cut below the minibatch size (draws with
  replacement), as :class:`repro.relfair.clients.ClientData`;
- :class:`Quadratics` / :func:`make_quadratics`: strongly convex quadratic clients, and
  :func:`exact_saddle`, the exact saddle point of (8) (docs/decisions.md#relfair-theory);
- :func:`cvxpy_dual_step`: the dual step of Alg. 1 (line 9) as a QP over (a, b) in A x B
  (docs/decisions.md#relfair-dual-step, method 2), the reference of the exact projection.

Quadratic clients (docs/decisions.md#relfair-theory):
``f_i(theta) = 0.5 (theta - c_i)^T Q_i (theta - c_i) + e_i``
``= 0.5 theta^T Q_i theta - q_i^T theta + r_i``
with ``Q_i = U_i diag(ev_i) U_i^T``, eigenvalues in [m, M] (both attained). For
``phi < m/M`` every ``sum_i lambda_i f_i`` (lambda in Lambda_phi) is convex (Lemma 8), and by
Sion ``min_theta max_lambda = max_lambda g(lambda)``, ``g(lambda) = r^T lambda
- 0.5 x^T P^{-1} x`` with ``P = sum lambda_i Q_i``, ``x = sum lambda_i q_i``, a concave program in
(a, b) (``matrix_frac``), solved by Clarabel at tolerances 1e-10; ``theta* = P^{-1} x``.
Certificate: primal ``sum_i w_i f_(i)(theta*)`` (decreasing) minus the dual value.
"""

from __future__ import annotations

from dataclasses import dataclass

import cvxpy as cp
import numpy as np

from repro.core.partition import dirichlet_label_split
from repro.relfair.clients import ClientData, split_clients
from repro.relfair.problem import RelativeAmbiguitySet

__all__ = ["CLARABEL", "CLARABEL_TIGHT", "Quadratics", "cvxpy_dual_step", "exact_saddle",
           "gaussian_clients", "make_quadratics"]


def gaussian_clients(seed: int, rows: int, d_in: int, n_clients: int,
                     small_client: int | None = None) -> ClientData:
    """``rows`` samples of 10 classes in ``d_in`` dimensions: standard normal features with 2
    added to the coordinate of the label (learnable clusters), split among ``n_clients`` by
    Dirichlet(0.5) label proportions, each client 80:20 into train / validation. With
    ``small_client = k`` client 0 keeps only its first ``k`` rows (fewer than a minibatch:
    its minibatches are drawn with replacement, docs/decisions.md#relfair-cost).
    """
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 10, rows)
    X = rng.normal(size=(rows, d_in)).astype(np.float32)
    X[np.arange(rows), y] += 2.0
    parts = dirichlet_label_split(y, n_clients, 0.5, rng)
    if small_client is not None:
        parts[0] = parts[0][:small_client]
    return split_clients(X, y, parts, rng)


# 1e-11 ends "optimal_inaccurate" on 6 of 22 solves; 1e-10 was optimal on all tried, with
# certificate gaps <= 3.3e-5 and R errors ~5e-6 (measured against a polished dual solution).
CLARABEL_TIGHT = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, "max_iter": 500}


@dataclass(frozen=True)
class Quadratics:
    """n quadratic clients: Hessians ``Q`` (n, d, d), centres ``c`` (n, d), offsets ``e`` (n,)."""

    Q: np.ndarray  # (n, d, d)
    c: np.ndarray  # (n, d)
    e: np.ndarray  # (n,)

    @property
    def q(self) -> np.ndarray:
        return np.einsum("nij,nj->ni", self.Q, self.c)

    @property
    def r(self) -> np.ndarray:
        return 0.5 * np.einsum("ni,nij,nj->n", self.c, self.Q, self.c) + self.e

    def losses(self, theta: np.ndarray) -> np.ndarray:
        diff = theta[None, :] - self.c
        return 0.5 * np.einsum("ni,nij,nj->n", diff, self.Q, diff) + self.e

    def grads(self, theta: np.ndarray) -> np.ndarray:
        return np.einsum("nij,nj->ni", self.Q, theta[None, :] - self.c)


def make_quadratics(rng: np.random.Generator, n: int, d: int, m: float, M: float,
                    c_std: float, e_range: tuple[float, float]) -> Quadratics:
    """Random Haar eigenbases, eigenvalues U(m, M) with m and M attained, centres
    N(0, c_std^2), offsets U(e_range).
    """
    Q = np.empty((n, d, d))
    for i in range(n):
        U, _ = np.linalg.qr(rng.normal(size=(d, d)))
        ev = rng.uniform(m, M, d)
        ev[0], ev[-1] = m, M
        Q[i] = (U * ev) @ U.T
    return Quadratics(Q, rng.normal(0.0, c_std, (n, d)), rng.uniform(*e_range, n))


def exact_saddle(prob: Quadratics, amb: RelativeAmbiguitySet) -> dict:
    """theta*_phi by the dual route; returns theta, lambda, status, dual and primal values."""
    n, d = prob.c.shape
    a, b = cp.Variable(n), cp.Variable(n)
    lam = (a - amb.phi * b) / (1 - amb.phi)
    P = sum(lam[i] * prob.Q[i] for i in range(n))
    x = prob.q.T @ lam
    obj = cp.Maximize(prob.r @ lam - 0.5 * cp.matrix_frac(x, (P + P.T) / 2))
    cons = [cp.sum(a) == 1, cp.sum(b) == 1, a >= 0, b >= 0, a <= 1 / (amb.alpha * n),
            b <= 1 / (amb.beta * n)]
    problem = cp.Problem(obj, cons)
    problem.solve(solver=cp.CLARABEL, **CLARABEL_TIGHT)
    lam_v = (a.value - amb.phi * b.value) / (1 - amb.phi)
    Pv = np.einsum("n,nij->ij", lam_v, prob.Q)
    theta = np.linalg.solve(Pv, prob.q.T @ lam_v)
    primal = amb.support(prob.losses(theta))
    return {"theta": theta, "lam": lam_v, "status": problem.status,
            "dual": float(problem.value), "primal": float(primal),
            "gap": float(primal - problem.value)}


CLARABEL = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, "max_iter": 200}


def cvxpy_dual_step(z, amb: RelativeAmbiguitySet) -> tuple[np.ndarray | None, str, float]:
    """Method 2 of docs/decisions.md#relfair-dual-step: the QP over (a, b) in A x B; returns
    (lambda, status, value).
    """
    n = amb.n
    a, b = cp.Variable(n), cp.Variable(n)
    lam = (a - amb.phi * b) / (1.0 - amb.phi)
    cons = [cp.sum(a) == 1, cp.sum(b) == 1, a >= 0, b >= 0,
            a <= 1.0 / (amb.alpha * n), b <= 1.0 / (amb.beta * n)]
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(lam - z)), cons)
    prob.solve(solver=cp.CLARABEL, **CLARABEL)
    val = None if a.value is None else (a.value - amb.phi * b.value) / (1.0 - amb.phi)
    return val, prob.status, float(prob.value) if prob.value is not None else np.nan
