"""FedMM iterate histories, the constants of docs/decisions.md#fedmm-theory-instances and the
Table-3 quantities; no
check.

Shared by T5 (Lemmas 5-8), T6 (Lemma 3) and T7 (ii). Index convention of Algorithm 3:
``omega_i^0 = omega0^0`` and ``psi_i^0 = psi0^0`` (the local iterates start at the global
point), round t (t = 0, ..., T-1) produces ``omega_i^{t+1}, psi_i^{t+1}`` (line 11) and
``omega0^{t+1}`` (16). A :class:`Trajectory` holds t = 0, ..., T.

Table 3 of App. A.1 (every norm squared, "sum_{j != i}" over ORDERED pairs):

* psi_bar_t   = sum_i sum_{j != i} ||psi_i^t - psi_j^t||^2      (deviation among psi_i^t)
* psi_tilde_t = sum_i ||psi_i^t - psi_i^{t-1}||^2               (increment, t >= 1)
* eps_t       = sum_i ||psi_i^t - psi*(omega_i^t)||^2           (distance to the optimum)
* omega_tilde_t = sum_i ||omega_i^t - omega_i^{t-1}||^2         (increment, t >= 1)
* omega_bar_t = sum_i sum_{j != i} ||omega_i^t - omega_j^t||^2  (deviation among omega_i^t)

Ordered-pair sums use the identity sum_i sum_{j != i} ||x_i - x_j||^2 = 2N sum_i ||x_i - xbar||^2
(the tests compare it with the double loop).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from repro.fedmm.fedmm import FedMM

# a run whose iterates exceed this (sup norm) is "not finite"
# (docs/decisions.md#fedmm-theory-instances)
DIVERGED = 1e8


@dataclass(frozen=True)
class Trajectory:
    """Iterates of one FedMM run, t = 0, ..., T (``rounds = T``)."""

    omega: np.ndarray   # (T+1, N, d1): omega_i^t
    psi: np.ndarray     # (T+1, N, d2): psi_i^t
    omega0: np.ndarray  # (T+1, d1): omega0^t
    psi0: np.ndarray    # (T+1, d2): psi0^t

    @property
    def rounds(self) -> int:
        return self.omega.shape[0] - 1


def record(alg: FedMM, d1: int, rounds: int, step=None) -> Trajectory | None:
    """Run ``rounds`` rounds of ``alg`` from its current state; ``None`` if it diverges.
    ``step(r)`` takes round r (an audited step, :func:`theory.fedmm.reference.audit`); default
    ``alg.step()``.
    """
    local = [alg.state.local.numpy().copy()]
    glob = [alg.state.theta0.numpy().copy()]
    for r in range(rounds):
        if step is None:
            alg.step()
        else:
            step(r)
        th = alg.state.local.numpy()
        if not np.all(np.isfinite(th)) or np.abs(th).max() > DIVERGED:
            return None
        local.append(th.copy())
        glob.append(alg.state.theta0.numpy().copy())
    L, G = np.stack(local), np.stack(glob)
    return Trajectory(L[:, :, :d1], L[:, :, d1:], G[:, :d1], G[:, d1:])


def constants(inst) -> dict[str, float]:
    """docs/decisions.md#fedmm-theory-instances: L11 = max||A_i||, L12 = L21 = max||B_i||, L22 =
    max||C_i||, B = min
    lambda_min(C_i), kappa = ||K|| (K = Cbar^{-1} Bbar'), L_Phi = max_i ||Hessian of Phi_i|| =
    max_i ||A_i + B_i K + K'B_i' - K'C_i K||, L_g = max_i ||A_i + B_i K|| (Lipschitz constant of
    the Danskin surrogate g_i(w) = grad_w f_i(w, psi*(w)) used by the paper's proofs).
    """
    K = np.linalg.solve(inst.C.mean(0), inst.B.mean(0).T)
    A, B, C = inst.A, inst.B, inst.C
    L12 = max(np.linalg.norm(b, 2) for b in B)
    return {
        "L11": max(np.linalg.norm(a, 2) for a in A),
        "L12": L12, "L21": L12,
        "L22": max(np.linalg.norm(c, 2) for c in C),
        "B": min(np.linalg.eigvalsh(c).min() for c in C),
        "kappa": float(np.linalg.norm(K, 2)),
        "L_Phi": max(np.linalg.norm(A[i] + B[i] @ K + K.T @ B[i].T - K.T @ C[i] @ K, 2)
                     for i in range(inst.n)),
        "L_g": max(np.linalg.norm(A[i] + B[i] @ K, 2) for i in range(inst.n)),
    }


def psi_star(inst, omega: np.ndarray) -> np.ndarray:
    """(26) for a stack of omegas (..., d1): psi*(w) = Cbar^{-1}(Bbar' w - cbar)."""
    rhs = omega @ inst.B.mean(0) - inst.c.mean(0)
    return np.linalg.solve(inst.C.mean(0), rhs.reshape(-1, inst.d2).T).T.reshape(rhs.shape)


def saddle(inst) -> np.ndarray:
    """z* = (omega*, psi*) of the global f = mean_i f_i of a Q instance: the KKT system
    [[Abar, Bbar], [Bbar', -Cbar]] z = [-abar; cbar] (grad_w f = 0, grad_psi f = 0), solved here.
    """
    A, B, C = inst.A.mean(0), inst.B.mean(0), inst.C.mean(0)
    M = np.block([[A, B], [B.T, -C]])
    return np.linalg.solve(M, np.concatenate([-inst.a.mean(0), inst.c.mean(0)]))


def grad_phi(inst, w: np.ndarray) -> np.ndarray:
    """Grad Phi(w) = Abar w + Bbar psi*(w) + abar (Danskin on the global f; (26)-(27))."""
    return inst.A.mean(0) @ w + inst.B.mean(0) @ psi_star(inst, w) + inst.a.mean(0)


def phi(inst, omega: np.ndarray) -> np.ndarray:
    """(27): Phi(w) = f(w, psi*(w)) with the global f = mean_i f_i (closed form), for (..., d1)."""
    A, B, C = inst.A.mean(0), inst.B.mean(0), inst.C.mean(0)
    p = psi_star(inst, omega)
    return (0.5 * np.einsum("...i,ij,...j->...", omega, A, omega)
            + np.einsum("...i,ij,...j->...", omega, B, p)
            - 0.5 * np.einsum("...i,ij,...j->...", p, C, p)
            + omega @ inst.a.mean(0) - p @ inst.c.mean(0))


def pair_deviation(x: np.ndarray) -> np.ndarray:
    """sum_i sum_{j != i} ||x_i^t - x_j^t||^2 for x of shape (T+1, N, d)."""
    n = x.shape[1]
    return 2 * n * ((x - x.mean(1, keepdims=True)) ** 2).sum(axis=(1, 2))


def increment(x: np.ndarray) -> np.ndarray:
    """sum_i ||x_i^t - x_i^{t-1}||^2 for t = 0, ..., T (NaN at t = 0, undefined there)."""
    out = np.full(x.shape[0], np.nan)
    out[1:] = ((x[1:] - x[:-1]) ** 2).sum(axis=(1, 2))
    return out


def table3(inst, tr: Trajectory) -> dict[str, np.ndarray]:
    """The five quantities of Table 3 for t = 0, ..., T (increments NaN at t = 0)."""
    return {
        "psi_bar": pair_deviation(tr.psi),
        "psi_tilde": increment(tr.psi),
        "eps": ((tr.psi - psi_star(inst, tr.omega)) ** 2).sum(axis=(1, 2)),
        "omega_tilde": increment(tr.omega),
        "omega_bar": pair_deviation(tr.omega),
    }
