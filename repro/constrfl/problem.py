"""The paper's problem (5): one server block (c_0, no objective) and client blocks (f_i, c_i),
and the problems of its experiments.

* :class:`Problem`: (5) as a server block and client blocks (:mod:`repro.constrfl.blocks`);
* :func:`lcqp_reference` / :func:`lcqp_paper`: the equality-constrained QP (86), App. E.2, with
  the reference generator that reproduces Table 4 (docs/decisions.md#constrfl-lcqp-experiment) and
  the paper's wording (docs/decisions.md#constrfl-lcqp-generator);
* :func:`neyman_pearson`: (30)-(31) from client class-0 / class-1 row arrays;
* :func:`fairness`: (32) from client row arrays and the server's rows;
* :func:`unit_sphere_w0`: the reference rule for the initial point w^0
  (docs/decisions.md#constrfl-start-point).

The small instances of the theory checks, tests and benchmarks are in
:mod:`repro.constrfl.instances`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from repro.constrfl.blocks import LogisticBlock, QuadraticBlock
from repro.core.validation import check_labels, check_range, check_shape, check_vector

__all__ = ["Problem", "fairness", "lcqp_paper", "lcqp_reference", "neyman_pearson",
           "unit_sphere_w0"]


@dataclass(frozen=True)
class Problem:
    """Server block (one party, f_0 ≡ 0) and client blocks (n parties in all)."""

    server: QuadraticBlock | LogisticBlock
    clients: tuple

    def __post_init__(self) -> None:
        for i, b in enumerate(self.clients):
            if b.d != self.server.d:
                raise ValueError(f"clients[{i}] has d = {b.d}, the server block d = "
                                 f"{self.server.d}: every block must have the model's dimension")

    def check_w(self, name: str, w: object) -> np.ndarray:
        """``w`` as a float vector of the model's dimension, else ``ValueError`` naming it."""
        return check_shape(name, np.asarray(w, dtype=float), (self.d,),
                           "(d,), the model's dimension of the problem's blocks")

    @property
    def n(self) -> int:
        return sum(b.size for b in self.clients)

    @property
    def d(self) -> int:
        return self.server.d

    def objective(self, w: np.ndarray) -> float:
        """``f(w) = sum_i f_i(w)``."""
        return float(sum(b.f(np.broadcast_to(w, (b.size, w.size))).sum() for b in self.clients))

    def constraints(self, w: np.ndarray) -> list[np.ndarray]:
        """``[c_0(w), c_1(w), ...]`` (each of length m_i)."""
        out = [self.server.c(w[None])[0]]
        for b in self.clients:
            out.extend(b.c(np.broadcast_to(w, (b.size, w.size))))
        return out


def unit_sphere_w0(d: int, seed: int) -> np.ndarray:
    """Reference rule for w^0 (docs/decisions.md#constrfl-start-point):
    ``RandomState(seed).rand(d)``, normalised.
    """
    v = np.random.RandomState(seed).rand(d)
    return v / np.linalg.norm(v)


def _lcqp(A, B, C, D, equality=True) -> Problem:
    """Parties in paper order from arrays whose LAST slot is the server (reference layout)."""
    n = A.shape[0] - 1
    d = A.shape[1]
    server = QuadraticBlock(d, None, None, None, C[None, :, :, n], D[None, :, n], equality)
    clients = QuadraticBlock(d, A[:n], B[:, :n].T.copy(), None,
                             np.moveaxis(C[:, :, :n], 2, 0).copy(), D[:, :n].T.copy(), equality)
    return Problem(server, (clients,))


def lcqp_reference(d: int, n: int, m: int, seed: int = 10) -> Problem:
    """The reference script's generator of (86) (docs/decisions.md#constrfl-lcqp-experiment),
    reproducing Table 4 exactly.

    One ``RandomState(10)`` per (d, n, m~); n+1 slots, clients first and the server LAST; per
    slot ``eig = 0.5 + 0.5 rand(d)``, a shuffle of ``range(d)`` whose result is unused (it
    consumes draws), ``U`` = left singular vectors of ``randn(d, d)``, ``A = U diag(eig) Uᵀ``;
    then ``A_0 = 0``; ``b`` = normalised columns of ``randn(d, n+1)`` with ``b_0 = 0``;
    ``C ~ N(0, 1/d)`` of shape (m~, d, n+1); ``d_i`` normalised columns of ``randn(m~, n+1)``
    with ``d_0 = 0`` (the paper puts d_0 on the sphere,
    docs/decisions.md#constrfl-lcqp-generator).
    """
    rs = np.random.RandomState(seed)
    A = np.empty((n + 1, d, d))
    for j in range(n + 1):
        eig = 0.5 + 0.5 * rs.rand(d)
        rs.shuffle(list(range(d)))
        U = np.linalg.svd(rs.randn(d, d))[0]
        A[j] = (U * eig) @ U.T
    A[n] = 0.0
    B = rs.randn(d, n + 1)
    B /= np.linalg.norm(B, axis=0)
    B[:, n] = 0.0
    C = rs.normal(0.0, 1.0 / np.sqrt(d), size=(m, d, n + 1))
    D = rs.randn(m, n + 1)
    D /= np.linalg.norm(D, axis=0)
    D[:, n] = 0.0
    return _lcqp(A, B, C, D)


def lcqp_paper(d: int, n: int, m: int, rng: np.random.Generator) -> Problem:
    """(86) as App. E.2 words it: ``A_i = U_i D_i U_iᵀ`` (D_i ~ U[0.5, 1], U_i orthogonal),
    ``C_i ~ N(0, 1/d)``, b_i (i >= 1) and d_i (i >= 0, server included) on the unit sphere.
    """
    A = np.empty((n + 1, d, d))
    for j in range(n):
        U = np.linalg.qr(rng.standard_normal((d, d)))[0]
        A[j] = (U * rng.uniform(0.5, 1.0, d)) @ U.T
    A[n] = 0.0
    B = rng.standard_normal((d, n + 1))
    B /= np.linalg.norm(B, axis=0)
    B[:, n] = 0.0
    C = rng.normal(0.0, 1.0 / np.sqrt(d), size=(m, d, n + 1))
    D = rng.standard_normal((m, n + 1))
    D /= np.linalg.norm(D, axis=0)
    return _lcqp(A, B, C, D)


def _null_server(d: int) -> QuadraticBlock:
    """m_0 = 0: P_{0,k} is the prox term only (closed-form server step,
    docs/decisions.md#constrfl-subproblem-solvers).
    """
    return QuadraticBlock(d, None, None, None, np.zeros((1, 0, d)), np.zeros((1, 0)), True)


def neyman_pearson(X0: np.ndarray, X1: np.ndarray, r: float = 0.2) -> Problem:
    """(30)-(31): client i minimises its class-0 mean loss / n subject to its class-1 mean loss
    ``<= r``. ``X0``: (n, m0, d) class-0 rows, ``X1``: (n, m1, d) class-1 rows; no global
    constraint.
    """
    X0, X1 = _client_rows("X0", X0), _client_rows("X1", X1)
    _same_layout("X1", X1, "X0", X0)
    check_range("r", r)
    n, m0, d = X0.shape
    m1 = X1.shape[1]
    X = np.concatenate([X0, X1], axis=1)
    y = np.concatenate([np.zeros((n, m0)), np.ones((n, m1))], axis=1)
    fw = np.concatenate([np.full((n, m0), 1.0 / (n * m0)), np.zeros((n, m1))], axis=1)
    Gw = np.concatenate([np.zeros((n, 1, m0)), np.full((n, 1, m1), 1.0 / m1)], axis=2)
    clients = LogisticBlock(d, X, y, fw, Gw, np.full((n, 1), r))
    return Problem(_null_server(d), (clients,))


def _client_rows(name: str, X) -> np.ndarray:
    """``X`` as a (clients, rows, features) array, or a ValueError naming it."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 3:
        raise ValueError(f"{name} must be three-dimensional (clients, rows, features), got "
                         f"shape {X.shape}")
    return X


def _same_layout(name: str, X, ref_name: str, ref) -> None:
    if X.shape[0] != ref.shape[0]:
        raise ValueError(f"{name} must hold one block per client of {ref_name} "
                         f"({ref.shape[0]}), got {X.shape[0]}")
    if X.shape[2] != ref.shape[2]:
        raise ValueError(f"{name} must have {ref.shape[2]} features (as {ref_name}), got "
                         f"{X.shape[2]}")


def _disparity_weights(sex: np.ndarray) -> np.ndarray:
    """(b, 2, M) weights of ``L_0 - L_1`` and ``L_1 - L_0`` (group means over all rows)."""
    g0 = (sex == 0) / np.maximum((sex == 0).sum(axis=-1, keepdims=True), 1)
    g1 = (sex == 1) / np.maximum((sex == 1).sum(axis=-1, keepdims=True), 1)
    return np.stack([g0 - g1, g1 - g0], axis=-2)


def fairness(Xc: np.ndarray, yc: np.ndarray, Xs: np.ndarray, ys: np.ndarray,
             r: float = 0.1) -> Problem:
    """(32): client i minimises ``(1/N_tot) sum_j phi`` over its rows subject to
    ``|L_{i,0} - L_{i,1}| <= r`` (two constraints); the server has the same constraint on its
    rows and no objective. The sensitive attribute is the LAST feature column
    (docs/decisions.md#constrfl-fairness-experiment). Labels ``yc`` (n, M) and ``ys`` are in {0, 1},
    as is the sensitive column.
    """
    Xc, Xs = _client_rows("Xc", Xc), np.asarray(Xs)
    n, M, d = Xc.shape
    if Xs.ndim != 2 or Xs.shape[1] != d:
        raise ValueError(f"Xs must have {d} features (as Xc), got "
                         + (f"{Xs.shape[1]}" if Xs.ndim == 2 else f"shape {Xs.shape}"))
    yc, ys = np.asarray(yc), check_vector("ys", ys, length=len(Xs), length_of="Xs")
    if yc.shape != (n, M):
        raise ValueError(f"yc must have shape {(n, M)} (one label per row of Xc), got "
                         f"{yc.shape}")
    for name, v in (("yc", yc), ("ys", ys), ("Xc[..., -1] (the sensitive attribute)",
                                                Xc[..., -1]),
                    ("Xs[:, -1] (the sensitive attribute)", Xs[:, -1])):
        check_labels(name, v, (0, 1), shown="labels in {0, 1}")
    check_range("r", r)
    clients = LogisticBlock(d, Xc, yc.astype(float), np.full((n, M), 1.0 / (n * M)),
                            _disparity_weights(Xc[..., -1]), np.full((n, 2), r))
    server = LogisticBlock(d, Xs[None], ys[None].astype(float), np.zeros((1, len(ys))),
                           _disparity_weights(Xs[None, :, -1]), np.full((1, 2), r))
    return Problem(server, (clients,))
