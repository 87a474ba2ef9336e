"""Deterministic instances for the FedMM theory checks (spec §9.1); registers no check.

Q: f_i(w, p) = 1/2 w'A_i w + w'B_i p - 1/2 p'C_i p + a_i'w - c_i'p, strongly concave in p,
Phi strongly convex, omega-block possibly indefinite per client. P(p): Q with N = 2 whose
clients are mixed, f_1 = p f_S + (1-p) f_T, f_2 = (1-p) f_S + p f_T (the global f does not
depend on p). In the player form of ``repro.fedmm.algorithms`` the player gradient of client i
is affine, G_i(theta) = K_i theta + k_i with K_i = [[A_i, B_i], [-B_i', C_i]], k_i = [a_i; c_i].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

Tensor = torch.Tensor


@dataclass(frozen=True)
class QuadInstance:
    A: np.ndarray  # (N, d1, d1)
    B: np.ndarray  # (N, d1, d2)
    C: np.ndarray  # (N, d2, d2)
    a: np.ndarray  # (N, d1)
    c: np.ndarray  # (N, d2)

    @property
    def n(self) -> int:
        return self.A.shape[0]

    @property
    def d1(self) -> int:
        return self.A.shape[1]

    @property
    def d2(self) -> int:
        return self.C.shape[1]

    def K(self) -> np.ndarray:
        """(N, D, D) player-gradient matrices."""
        top = np.concatenate([self.A, self.B], axis=2)
        bot = np.concatenate([-self.B.transpose(0, 2, 1), self.C], axis=2)
        return np.concatenate([top, bot], axis=1)

    def k(self) -> np.ndarray:
        return np.concatenate([self.a, self.c], axis=1)

    def saddle(self) -> np.ndarray:
        """z* of the global f: [[Abar, Bbar], [Bbar', -Cbar]] z = [-abar; cbar] (closed form)."""
        A, B, C = self.A.mean(0), self.B.mean(0), self.C.mean(0)
        M = np.block([[A, B], [B.T, -C]])
        return np.linalg.solve(M, np.concatenate([-self.a.mean(0), self.c.mean(0)]))

    def psi_star(self, w: np.ndarray) -> np.ndarray:
        """(26): psi*(w) = Cbar^{-1}(Bbar' w - cbar)."""
        return np.linalg.solve(self.C.mean(0), self.B.mean(0).T @ w - self.c.mean(0))

    def grad_phi(self, w: np.ndarray) -> np.ndarray:
        """grad Phi(w) = Abar w + Bbar psi*(w) + abar (Danskin on the global f)."""
        return self.A.mean(0) @ w + self.B.mean(0) @ self.psi_star(w) + self.a.mean(0)


def gen_Q(seed: int, N: int = 4, d1: int = 6, d2: int = 4, het: float = 1.0,
          indef: bool = True) -> QuadInstance:
    """Spec §9.1 generator (order of draws as specified)."""
    rng = np.random.default_rng(seed)
    A, B, C, a, c = [], [], [], [], []
    for _ in range(N):
        U = np.linalg.qr(rng.standard_normal((d1, d1)))[0]
        ev = rng.uniform(-1, 3, d1) if indef else rng.uniform(0.5, 3, d1)
        A.append(U @ np.diag(ev) @ U.T)
        B.append(2 * rng.standard_normal((d1, d2)) / np.sqrt(d1))
        V = np.linalg.qr(rng.standard_normal((d2, d2)))[0]
        C.append(V @ np.diag(rng.uniform(0.5, 2, d2)) @ V.T)
        a.append(het * rng.standard_normal(d1))
        c.append(het * rng.standard_normal(d2))
    A, B, C, a, c = map(np.array, (A, B, C, a, c))
    Ab, Bb, Cb = A.mean(0), B.mean(0), C.mean(0)
    H = Ab + Bb @ np.linalg.solve(Cb, Bb.T)
    lo = np.linalg.eigvalsh((H + H.T) / 2).min()
    if lo < 0.1:
        A = A + (0.1 - lo) * np.eye(d1)
    return QuadInstance(A, B, C, a, c)


def gen_P(seed: int, p: float, d1: int = 6, d2: int = 4) -> QuadInstance:
    """P(p): the two clients of Q(N=2) mixed with weights (p, 1-p) and (1-p, p)."""
    q = gen_Q(seed, N=2, d1=d1, d2=d2)
    w = np.array([[p, 1 - p], [1 - p, p]])

    def mix(x):
        return np.tensordot(w, x, axes=1)

    return QuadInstance(mix(q.A), mix(q.B), mix(q.C), mix(q.a), mix(q.c))


class QuadOracle:
    """Exact (deterministic) player gradients of a :class:`QuadInstance`, float64 torch."""

    def __init__(self, inst: QuadInstance) -> None:
        self.inst = inst
        self.n_clients = inst.n
        self.K = torch.from_numpy(inst.K())
        self.k = torch.from_numpy(inst.k())

    def batched(self, theta: Tensor, t: int, m: int) -> Tensor:
        return torch.einsum("nij,nj->ni", self.K, theta) + self.k

    def client(self, i: int, theta_i: Tensor, t: int, m: int) -> Tensor:
        return self.K[i] @ theta_i + self.k[i]


class ExactLocalSolver:
    """FedMM-exact: the stationary point of each L_i, G_i(theta) + mu(theta - theta0) + d_i = 0,
    i.e. (K_i + diag(mu)) theta = mu theta0 - k_i - d_i (one linear solve per client)."""

    def __init__(self, inst: QuadInstance) -> None:
        self.K = torch.from_numpy(inst.K())
        self.k = torch.from_numpy(inst.k())

    def __call__(self, theta0, t, eta, scale, mu, duals):
        if mu is None:
            raise ValueError("the exact local solver needs mu > 0 (FedMM or FedProxGDA)")
        d = torch.zeros_like(self.k) if duals is None else duals
        rhs = mu * theta0 - self.k - d
        return torch.linalg.solve(self.K + torch.diag(mu), rhs)
