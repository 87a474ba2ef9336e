"""Small instances of paper 004's saddle problem for the tests, the theory checks
(``theory/fedmm/``) and the benchmarks (``bench/fedmm.py``): the deterministic families of
docs/decisions.md#fedmm-theory-instances and a DA problem on random images.

Q: f_i(w, p) = 1/2 w'A_i w + w'B_i p - 1/2 p'C_i p + a_i'w - c_i'p, strongly concave in p,
Phi strongly convex, omega-block possibly indefinite per client. P(p): Q with N = 2 whose
clients are mixed, f_1 = p f_S + (1-p) f_T, f_2 = (1-p) f_S + p f_T (the global f does not
depend on p). In the player form of :mod:`repro.fedmm.problem` the player gradient of client i
is affine, G_i(theta) = K_i theta + k_i with K_i = [[A_i, B_i], [-B_i', C_i]], k_i = [a_i; c_i].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from repro.fedmm.clients import allocate_two_clients
from repro.fedmm.models import DANet
from repro.fedmm.problem import DAProblem

Tensor = torch.Tensor


@dataclass(frozen=True)
class QuadInstance:
    """The quadratic family Q of docs/decisions.md#fedmm-theory-instances: per-client (A_i, B_i,
    C_i, a_i, c_i).
    """

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
        """Grad Phi(w) = Abar w + Bbar psi*(w) + abar (Danskin on the global f)."""
        return self.A.mean(0) @ w + self.B.mean(0) @ self.psi_star(w) + self.a.mean(0)


def gen_Q(seed: int, N: int = 4, d1: int = 6, d2: int = 4, het: float = 1.0,
          indef: bool = True) -> QuadInstance:
    """docs/decisions.md#fedmm-theory-instances generator (order of draws as specified)."""
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
        self.sizes = {"omega": inst.d1, "psi": inst.d2}  # the coordinate split of theta

    def batched(self, theta: Tensor, t: int, m: int) -> Tensor:
        return torch.einsum("nij,nj->ni", self.K, theta) + self.k

    def client(self, i: int, theta_i: Tensor, t: int, m: int) -> Tensor:
        return self.K[i] @ theta_i + self.k[i]


class ExactLocalSolver:
    """FedMM-exact: the stationary point of each L_i, G_i(theta) + mu(theta - theta0) + d_i = 0,
    i.e. (K_i + diag(mu)) theta = mu theta0 - k_i - d_i (one linear solve per client).
    """

    def __init__(self, inst: QuadInstance) -> None:
        self.K = torch.from_numpy(inst.K())
        self.k = torch.from_numpy(inst.k())

    def __call__(self, theta0, t, eta, scale, mu, duals):
        if mu is None:
            raise ValueError("the exact local solver needs mu > 0 (FedMM or FedProxGDA)")
        d = torch.zeros_like(self.k) if duals is None else duals
        rhs = mu * theta0 - self.k - d
        return torch.linalg.solve(self.K + torch.diag(mu), rhs)


# -- NL: a nonlinear instance where the propositions are not linear identities ----------------
@dataclass(frozen=True)
class NLInstance:
    """Q plus two nonlinear terms (docs/decisions.md#fedmm-theory-instances NC, extended with a
    nonlinear coupling):

    f_i(w, p) = Q_i(w, p) + gamma sum_k cos(w_k + phi_ik) + gamma sum_{k < d2} b_ik sin(w_k) p_k.

    Still strongly concave (quadratic) in p, so psi*(w) = Cbar^{-1}(Bbar' w - cbar + gamma
    bbar * sin(w[:d2])) and grad Phi(w) = mean_i grad_w f_i(w, psi*(w)) stay closed form; the
    cross Hessian B_i + gamma [diag(b_i cos(w[:d2])); 0] varies with w, so Lemma 1's constant is
    L12 = max_i (||B_i|| + gamma max|b_i|) (a sup bound, not attained by construction).
    """

    q: QuadInstance
    gamma: float
    phase: np.ndarray  # (N, d1)
    b: np.ndarray      # (N, d2)

    @property
    def n(self) -> int:
        return self.q.n

    @property
    def d1(self) -> int:
        return self.q.d1

    @property
    def d2(self) -> int:
        return self.q.d2

    def _split(self, theta: np.ndarray):
        return theta[..., :self.d1], theta[..., self.d1:]

    def G(self, i: int, theta: np.ndarray) -> np.ndarray:
        """Player gradient [grad_w f_i; -grad_psi f_i] of client i."""
        q, g, d2 = self.q, self.gamma, self.d2
        w, p = self._split(theta)
        gw = q.A[i] @ w + q.B[i] @ p + q.a[i] - g * np.sin(w + self.phase[i])
        gw[:d2] += g * self.b[i] * np.cos(w[:d2]) * p
        gp = q.B[i].T @ w - q.C[i] @ p - q.c[i] + g * self.b[i] * np.sin(w[:d2])
        return np.concatenate([gw, -gp])

    def jacobian(self, i: int, theta: np.ndarray) -> np.ndarray:
        q, g, d1, d2 = self.q, self.gamma, self.d1, self.d2
        w, p = self._split(theta)
        Jww = q.A[i] - g * np.diag(np.cos(w + self.phase[i]))
        Jww[:d2, :d2] -= g * np.diag(self.b[i] * np.sin(w[:d2]) * p)
        cross = q.B[i].copy()
        cross[:d2, :d2] += g * np.diag(self.b[i] * np.cos(w[:d2]))
        J = np.zeros((d1 + d2, d1 + d2))
        J[:d1, :d1], J[:d1, d1:], J[d1:, :d1], J[d1:, d1:] = Jww, cross, -cross.T, q.C[i]
        return J

    def psi_star(self, w: np.ndarray) -> np.ndarray:
        q = self.q
        rhs = q.B.mean(0).T @ w - q.c.mean(0) + self.gamma * self.b.mean(0) * np.sin(w[:self.d2])
        return np.linalg.solve(q.C.mean(0), rhs)

    def grad_w(self, i: int, w: np.ndarray, p: np.ndarray) -> np.ndarray:
        return self.G(i, np.concatenate([w, p]))[:self.d1]

    def grad_p(self, i: int, w: np.ndarray, p: np.ndarray) -> np.ndarray:
        return -self.G(i, np.concatenate([w, p]))[self.d1:]

    def dpsi_star(self, w: np.ndarray) -> np.ndarray:
        """(d2, d1) Jacobian of psi*(w)."""
        q, d2 = self.q, self.d2
        M = q.B.mean(0).T.copy()
        M[:, :d2] += self.gamma * np.diag(self.b.mean(0) * np.cos(w[:d2]))
        return np.linalg.solve(q.C.mean(0), M)

    def grad_phi(self, w: np.ndarray) -> np.ndarray:
        ps = self.psi_star(w)
        return np.mean([self.grad_w(i, w, ps) for i in range(self.n)], axis=0)

    def L12(self) -> float:
        return max(np.linalg.norm(self.q.B[i], 2) + self.gamma * np.abs(self.b[i]).max()
                   for i in range(self.n))


def gen_NL(seed: int, N: int = 4, d1: int = 6, d2: int = 4, gamma: float = 0.5) -> NLInstance:
    """Q of ``gen_Q(seed)`` plus phases ~ U[0, 2 pi) and couplings b ~ U[-1, 1] drawn from
    ``default_rng([seed, 1])``.
    """
    rng = np.random.default_rng([seed, 1])
    return NLInstance(gen_Q(seed, N, d1, d2), gamma, rng.uniform(0, 2 * np.pi, (N, d1)),
                      rng.uniform(-1, 1, (N, d2)))


class NLOracle:
    """Deterministic player gradients of an :class:`NLInstance` (float64 torch)."""

    def __init__(self, inst: NLInstance) -> None:
        self.inst, self.n_clients = inst, inst.n

    def batched(self, theta: Tensor, t: int, m: int) -> Tensor:
        th = theta.numpy()
        return torch.from_numpy(np.stack([self.inst.G(i, th[i]) for i in range(self.inst.n)]))

    def client(self, i: int, theta_i: Tensor, t: int, m: int) -> Tensor:
        return torch.from_numpy(self.inst.G(i, theta_i.numpy()))


class NewtonLocalSolver:
    """FedMM-exact on :class:`NLInstance`: solves G_i(theta) + mu (theta - theta0) + d_i = 0 by
    Newton's method from theta0 to ``tol`` (sup norm of the residual); raises when it does not
    converge in ``max_iter`` steps (the local problem is then not monotone: raise mu).
    """

    def __init__(self, inst: NLInstance, tol: float = 1e-13, max_iter: int = 50) -> None:
        self.inst, self.tol, self.max_iter = inst, tol, max_iter
        self.last_residual = 0.0

    def __call__(self, theta0, t, eta, scale, mu, duals):
        if mu is None:
            raise ValueError("the Newton local solver needs mu > 0 (FedMM or FedProxGDA)")
        m, z0 = mu.numpy(), theta0.numpy()
        d = np.zeros((self.inst.n, z0.size)) if duals is None else duals.numpy()
        out, worst = [], 0.0
        for i in range(self.inst.n):
            z = z0.copy()
            for _ in range(self.max_iter):
                r = self.inst.G(i, z) + m * (z - z0) + d[i]
                if np.abs(r).max() <= self.tol:
                    break
                z = z - np.linalg.solve(self.inst.jacobian(i, z) + np.diag(m), r)
            else:
                raise RuntimeError(f"repro/fedmm/instances.py NewtonLocalSolver: client {i} "
                                   f"round {t}: residual {np.abs(r).max():.2e} > {self.tol} "
                                   f"after {self.max_iter} Newton steps; use a larger mu")
            worst = max(worst, float(np.abs(r).max()))
            out.append(z)
        self.last_residual = worst
        return torch.from_numpy(np.stack(out))


# -- a DA problem on random images (tests, benchmarks) -----------------------------------------
def random_da_problem(net: DANet, n: int = 64, batch: int = 8, p: float = 1.0, nu: float = 1.0,
                      seed: int = 0, device: torch.device | str = "cpu") -> DAProblem:
    """Two clients (imbalance ``p``) of a :class:`DAProblem` on ``n`` random 28x28x3 uint8
    source images with random labels and ``n`` random target images, all drawn from
    ``torch.Generator().manual_seed(seed)``; minibatch streams from ``default_rng([seed, i,
    domain])``, dropout from ``manual_seed(100 + i)``.
    """
    g = torch.Generator().manual_seed(seed)
    sx = torch.randint(0, 256, (n, 28, 28, 3), dtype=torch.uint8, generator=g)
    sy = torch.randint(0, 10, (n,), generator=g)
    tx = torch.randint(0, 256, (n, 28, 28, 3), dtype=torch.uint8, generator=g)
    rngs = [(np.random.default_rng([seed, i, 0]), np.random.default_rng([seed, i, 1]))
            for i in range(2)]
    gens = [torch.Generator().manual_seed(100 + i) for i in range(2)]
    return DAProblem(net, nu, allocate_two_clients(n, n, p), sx.to(device), sy.to(device),
                     tx.to(device), batch, rngs, gens)
