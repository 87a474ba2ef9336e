"""Algorithms 2 and 3 of paper 004 written here, one round at a time, and the audit that holds
each round the package took against them (no check).

A statement about FedMM assumes the round (11)-(16): per coordinate block b (omega: eta1, mu1;
psi: eta2, mu2) the local solve of L_i, the dual step ``d_i^{t+1} = d_i^t + mu_b (theta_i^{t+1}
- theta0^t)`` (13)-(14), the upload ``theta_i^{t+1} + (eta3^t / mu_b) d_i^{t+1}`` (15) and the
average (16), with ``eta3^t = eta3`` (constant) or ``eta3 ** t``. The baselines (Algorithm 2):
FedAvgGDA (local GDA on f_i, plain average), FedProxGDA (with the prox term mu_b (theta -
theta0^t)), FedSGDA (one local step). The local solves written here: M steps of simultaneous
GDA ``theta <- theta - eta_b (G_i(theta) + mu_b (theta - theta0^t) + d_i^t)`` (11)-(12), or the
exact stationary point ``G_i(theta) + mu (theta - theta0^t) + d_i^t = 0`` (a linear solve on
the quadratic family, Newton's method on the nonlinear one).

:func:`audit` runs one package round, computes the round written here from the state the package
started it from, and records the largest relative difference as the criterion ``"<algorithm>
round <equations>, <path>"``: the hypothesis every statement about the algorithm rests on,
measured on what the package did. :class:`Players` is the player-gradient oracle of a
quadratic instance in any dtype, with the hooks of the ``graphed`` backend (it runs eagerly on
a CPU), built here from the instance's matrices.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

__all__ = ["Players", "audit", "avg_round", "exact_quadratic", "fedmm_round", "gda",
           "linear_round_map", "penalties_differ", "player_matrices", "spectral_radius",
           "tolerance"]

EPS = {torch.float64: float(np.finfo(np.float64).eps), torch.float32:
       float(np.finfo(np.float32).eps)}


def player_matrices(inst) -> tuple[np.ndarray, np.ndarray]:
    """``(K, k)`` of the player form of a quadratic instance: ``G_i(theta) = K_i theta + k_i``
    with ``K_i = [[A_i, B_i], [-B_i', C_i]]``, ``k_i = [a_i; c_i]`` (``G = [grad_w f_i;
    -grad_psi f_i]`` of ``f_i = w'A_i w/2 + w'B_i p - p'C_i p/2 + a_i'w - c_i'p``).
    """
    top = np.concatenate([inst.A, inst.B], axis=2)
    bot = np.concatenate([-inst.B.transpose(0, 2, 1), inst.C], axis=2)
    return np.concatenate([top, bot], axis=1), np.concatenate([inst.a, inst.c], axis=1)


class Players:
    """Player gradients ``G_i(theta) = K_i theta + k_i`` of a quadratic instance in ``dtype``
    (the oracle protocol of ``repro.fedmm``: ``batched``, ``client``; and ``round_inputs`` /
    ``round_gradient`` / ``round_state`` for the ``graphed`` backend: no randomness to draw).
    """

    def __init__(self, inst, dtype=torch.float64) -> None:
        K, k = player_matrices(inst)
        self.Knp, self.knp = K, k
        self.K, self.k = torch.from_numpy(K).to(dtype), torch.from_numpy(k).to(dtype)
        self.n_clients, self.dtype = inst.n, dtype
        self.sizes = {"omega": inst.d1, "psi": inst.d2}

    def batched(self, theta, t, m):
        return torch.matmul(self.K, theta.unsqueeze(-1)).squeeze(-1) + self.k

    def client(self, i, theta_i, t, m):
        return self.K[i] @ theta_i + self.k[i]

    def round_inputs(self, steps: int) -> dict:
        return {}

    def round_gradient(self, theta, inputs, m):
        return self.batched(theta, 0, m)

    def round_state(self) -> tuple:
        return ()

    def numpy(self, theta: np.ndarray) -> np.ndarray:
        """``G`` of every client at its own ``theta`` (N, D), float64."""
        return np.einsum("nij,nj->ni", self.Knp, theta) + self.knp


def gda(G: Callable, n: int, theta0, duals, eta, mu, steps: int) -> np.ndarray:
    """(11)-(12): ``steps`` steps of simultaneous local GDA of the ``n`` clients from theta0
    (``mu``/``duals`` ``None``: Algorithm 2's plain local GDA); ``G`` maps (n, D) to (n, D).
    """
    theta = np.broadcast_to(theta0, (n, theta0.size)).copy()
    for _ in range(steps):
        direction = G(theta)
        if mu is not None:
            direction = direction + mu * (theta - theta0)
        if duals is not None:
            direction = direction + duals
        theta = theta - eta * direction
    return theta


def exact_quadratic(K: np.ndarray, k: np.ndarray, theta0, duals, mu) -> np.ndarray:
    """The stationary point of every L_i: ``(K_i + diag mu) theta = mu theta0 - k_i - d_i``."""
    rhs = mu * theta0 - k - duals
    return np.linalg.solve(K + np.diag(mu)[None], rhs[..., None])[..., 0]


def fedmm_round(local: np.ndarray, theta0, duals, mu, c: float):
    """(13)-(16) given the local iterates: ``(duals^{t+1}, uploads, theta0^{t+1})``."""
    new_duals = duals + mu * (local - theta0)
    uploads = local + (c / mu) * new_duals
    return new_duals, uploads, uploads.mean(axis=0)


def avg_round(local: np.ndarray) -> np.ndarray:
    """Algorithm 2 line 16 (and (16) without duals): the plain average."""
    return local.mean(axis=0)


def eta3_at(eta3: float, constant: bool, t: int) -> float:
    """(15)'s coefficient at round t: ``eta3`` or ``eta3 ** t``."""
    return eta3 if constant else eta3 ** t


def tolerance(dtype, steps: int = 1) -> float:
    """The audit's relative tolerance: 1e-10 in float64; in float32, 2000 units of round-off per
    local step (the local GDA accumulates one rounding per step; measured errors stay below a
    tenth of it on the checks' instances).
    """
    if dtype == torch.float64:
        return 1e-10
    return 2000 * EPS[torch.float32] * max(steps, 1)


def _state(alg) -> dict:
    s = alg.state
    return {"t": s.round, "theta0": s.theta0.double().numpy().copy(),
            "local": s.local.double().numpy().copy(),
            "duals": None if s.duals is None else s.duals.double().numpy().copy()}


def audit(alg, ev, name: str, key: str, reference: Callable[[dict], dict], tol: float
          ) -> dict:
    """One package round audited: ``reference(before)`` returns the round written here
    (``local``, ``theta0`` and, for FedMM, ``duals``) from the state the package started it
    from; the largest relative difference to what the package produced is held against ``tol``
    in criterion ``name + ", " + key``. Returns ``{"before", "after", "ref", "error"}``.
    """
    before = _state(alg)
    alg.step()
    after = _state(alg)
    ref = reference(before)
    err = 0.0
    for part in ("local", "theta0", "duals"):
        if ref.get(part) is None:
            continue
        scale = 1.0 + float(np.abs(ref[part]).max())
        err = max(err, float(np.abs(after[part] - ref[part]).max()) / scale)
    if not np.isfinite(err):
        err = np.inf
    ev.criterion(f"{name}, {key}", 1 - err / tol)
    return {"before": before, "after": after, "ref": ref, "error": err}


def penalties_differ(round_fn: Callable[[np.ndarray], np.ndarray], mu: np.ndarray,
                     d1: int) -> float:
    """How much the round changes when the two blocks' penalties are swapped (``mu1`` on psi
    and ``mu2`` on omega): ``||round(mu) - round(mu swapped)||_inf``. A bug mixing the blocks'
    penalties is invisible where this is 0.
    """
    mu1, mu2 = mu[0], mu[-1]
    swapped = np.where(np.arange(mu.size) < d1, mu2, mu1)
    return float(np.abs(round_fn(mu) - round_fn(swapped)).max())


def linear_round_map(round_fn: Callable[[np.ndarray, np.ndarray], tuple], D: int, N: int
                     ) -> np.ndarray:
    """The Jacobian of an affine round ``(theta0, duals) -> (theta0', duals')`` on the stacked
    state (length D + N D), by unit perturbations of the map written here.
    """
    def apply(vec):
        th, du = round_fn(vec[:D].copy(), vec[D:].reshape(N, D).copy())
        return np.concatenate([th, du.ravel()])

    size = D + N * D
    base = apply(np.zeros(size))
    return np.stack([apply(e) - base for e in np.eye(size)], axis=1)


def spectral_radius(J: np.ndarray) -> float:
    return float(np.abs(np.linalg.eigvals(J)).max())
