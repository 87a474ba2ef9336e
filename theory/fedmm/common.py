"""How the fedmm checks build and audit the package's algorithms (no check).

:class:`Spec` names one run: the instance, the two blocks' steps and penalties (distinct by
default: a bug that mixes the blocks is visible only where they differ), the local solve
(``"exact"``, ``"gda"`` with M steps, or a solver object), eta3, and the local-step backend and
dtype of the package's path. :func:`build` makes the package's algorithm for it (FedMM of
``repro.fedmm.fedmm`` or a baseline by name through ``repro.fedmm.methods.build``) on the
player oracle :class:`theory.fedmm.reference.Players`; :func:`reference` gives the round written
in :mod:`theory.fedmm.reference` for :func:`theory.fedmm.reference.audit`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from repro.fedmm.blocks import Block
from repro.fedmm.fedmm import FedMM, FedMMConfig
from repro.fedmm.methods import build as build_method
from theory.fedmm.reference import (
    Players,
    avg_round,
    eta3_at,
    exact_quadratic,
    fedmm_round,
    gda,
    linear_round_map,
    player_matrices,
    spectral_radius,
)

__all__ = ["BACKENDS", "PAPER_ETA", "PAPER_ETA3", "PAPER_M", "PAPER_MU", "Players", "Spec",
           "block_vector", "build",
           "dtype_name", "path_key", "reference", "round_radius"]

BACKENDS = ("loop", "vectorized", "graphed")
# Sec. 6, "Hyper-parameters": eta = 0.01 for both players, mu = 1, M = 20 local steps, eta3 decayed
# by 1/1.0005 per round (DANN)
PAPER_ETA, PAPER_MU, PAPER_M, PAPER_ETA3 = 0.01, 1.0, 20, 1 / 1.0005


@dataclass(frozen=True)
class Spec:
    """One run: ``algorithm`` (``FedMM``, ``FedAvgGDA``, ``FedProxGDA``, ``FedSGDA``), its
    instance, ``mu = (mu1, mu2)`` and ``eta = (eta1, eta2)``, the local solve, eta3 and the path.
    """

    inst: object
    mu: tuple[float, float] = (1.0, 1.5)
    eta: tuple[float, float] = (0.05, 0.05)
    solver: object = "exact"
    M: int = 5
    eta3: float = 1.0
    constant: bool = True
    algorithm: str = "FedMM"
    backend: str = "vectorized"
    dtype: torch.dtype = torch.float64
    init: np.ndarray | None = None

    def with_(self, **changes) -> Spec:
        return replace(self, **changes)


def dtype_name(dtype) -> str:
    return str(dtype).replace("torch.", "")


def path_key(spec: Spec) -> str:
    """``fedmm:<algorithm>/<backend>/<dtype>`` (:mod:`theory.paths`); a FedMM run with a local
    solve written here (no local GDA, so no backend) is ``.../exact/...``.
    """
    where = spec.backend if (spec.solver == "gda" or spec.algorithm != "FedMM") else "exact"
    return f"fedmm:{spec.algorithm}/{where}/{dtype_name(spec.dtype)}"


def block_vector(inst, pair) -> np.ndarray:
    """A per-block pair as the per-coordinate vector (omega first)."""
    return np.concatenate([np.full(inst.d1, float(pair[0])), np.full(inst.d2, float(pair[1]))])


def _blocks(spec: Spec) -> tuple[Block, Block]:
    return (Block("omega", spec.inst.d1, spec.eta[0], spec.mu[0]),
            Block("psi", spec.inst.d2, spec.eta[1], spec.mu[1]))


def build(spec: Spec, oracle=None):
    """The package's algorithm for ``spec`` on ``oracle`` (default: :class:`Players` of the
    instance in the spec's dtype), from ``spec.init`` (zeros when None).
    """
    inst = spec.inst
    oracle = Players(inst, spec.dtype) if oracle is None else oracle
    D = inst.d1 + inst.d2
    theta0 = (torch.zeros(D, dtype=spec.dtype) if spec.init is None
              else torch.as_tensor(spec.init, dtype=spec.dtype).clone())
    if spec.algorithm == "FedMM":
        local = spec.solver if not isinstance(spec.solver, str) else None
        if spec.solver == "exact":
            raise ValueError("FedMM-exact runs need a local solver object (exact_solver)")
        steps = {"local_steps": spec.M} if local is None else {}
        config = FedMMConfig(_blocks(spec), eta3=spec.eta3, eta3_constant=spec.constant,
                             **steps)
        return FedMM(oracle, config, init=theta0, local_solver=local, backend=spec.backend)
    steps = {} if spec.algorithm == "FedSGDA" else {"local_steps": spec.M}
    return build_method(spec.algorithm, oracle, init=theta0, blocks=_blocks(spec),
                        backend=spec.backend, **steps)


class ExactSolver:
    """FedMM-exact on a quadratic instance, written here: the stationary point of every L_i
    (:func:`theory.fedmm.reference.exact_quadratic`), in the local solver protocol of
    ``repro.fedmm`` (``(theta0, t, eta, scale, mu, duals) -> (N, D)``).
    """

    def __init__(self, inst) -> None:
        self.players = Players(inst)

    def __call__(self, theta0, t, eta, scale, mu, duals):
        p = self.players
        d = np.zeros((p.n_clients, theta0.numel())) if duals is None else duals.numpy()
        out = exact_quadratic(p.Knp, p.knp, theta0.numpy(), d, mu.numpy())
        return torch.from_numpy(out).to(theta0.dtype)


def exact_spec(inst, **kw) -> Spec:
    """A FedMM-exact spec (the local solve written here, float64)."""
    return Spec(inst, solver=ExactSolver(inst), **kw)


def reference(spec: Spec, local_fn=None):
    """``before -> {local, duals, theta0}``: the round of ``spec`` written here. ``local_fn``
    (``(before) -> local``) replaces the local solve (a theory-side solver's own result: the
    audit then checks (13)-(16) and the average); otherwise the exact solve or M GDA steps of
    :mod:`theory.fedmm.reference`.
    """
    inst = spec.inst
    players = Players(inst)
    eta, mu = block_vector(inst, spec.eta), block_vector(inst, spec.mu)
    n = inst.n

    def fn(before: dict) -> dict:
        th0 = before["theta0"]
        duals = before["duals"]
        if local_fn is not None:
            local = local_fn(before)
        elif spec.algorithm == "FedMM" and isinstance(spec.solver, ExactSolver):
            local = exact_quadratic(players.Knp, players.knp, th0, duals, mu)
        elif spec.algorithm == "FedMM":
            local = gda(players.numpy, n, th0, duals, eta, mu, spec.M)
        else:
            steps = 1 if spec.algorithm == "FedSGDA" else spec.M
            local = gda(players.numpy, n, th0, None, eta,
                        mu if spec.algorithm == "FedProxGDA" else None, steps)
        if spec.algorithm != "FedMM":
            return {"local": local, "theta0": avg_round(local)}
        c = eta3_at(spec.eta3, spec.constant, before["t"])
        new_duals, _, theta0 = fedmm_round(local, th0, duals, mu, c)
        return {"local": local, "duals": new_duals, "theta0": theta0}

    return fn


def round_radius(spec: Spec) -> float:
    """Spectral radius of the linear part of one round of ``spec`` (FedMM, constant eta3 or
    eta3 = 1 at t = 0; exact or M-step GDA local solves) on the state (theta0, duals), from the
    round written here (never the package's).
    """
    inst = spec.inst
    ref = reference(spec.with_(eta3=spec.eta3 if spec.constant else 1.0, constant=True))
    D, N = inst.d1 + inst.d2, inst.n

    def affine(th0, du):
        out = ref({"t": 1, "theta0": th0, "duals": du, "local": None})
        return out["theta0"], out["duals"]

    J = linear_round_map(affine, D, N)
    return spectral_radius(J)


def local_steps_of(spec: Spec) -> int:
    return 1 if spec.algorithm == "FedSGDA" else (spec.M if spec.solver == "gda" else 1)


def saddle_error(inst, theta0: np.ndarray, z: np.ndarray) -> float:
    """``||theta0 - z*|| / max(1, ||z*||)``."""
    return float(np.linalg.norm(theta0 - z) / max(1.0, np.linalg.norm(z)))


__all__ += ["ExactSolver", "exact_spec", "local_steps_of", "saddle_error"]


def newton_local(inst, theta0: np.ndarray, duals: np.ndarray, mu: np.ndarray,
                 tol: float = 1e-13, max_iter: int = 50) -> np.ndarray:
    """The exact local solve on the nonlinear family, written here: Newton's method on
    ``G_i(theta) + mu (theta - theta0) + d_i = 0`` from theta0 (the instance's player gradient
    ``G`` and its Jacobian are the problem's definition).
    """
    out = []
    for i in range(inst.n):
        z = theta0.copy()
        for _ in range(max_iter):
            r = inst.G(i, z) + mu * (z - theta0) + duals[i]
            if np.abs(r).max() <= tol:
                break
            z = z - np.linalg.solve(inst.jacobian(i, z) + np.diag(mu), r)
        out.append(z)
    return np.stack(out)


def nl_reference(inst, mu_pair, eta3: float = 1.0):
    """FedMM-exact's round on the nonlinear family (eta3 constant), written here."""
    mu = block_vector(inst, mu_pair)

    def fn(before: dict) -> dict:
        local = newton_local(inst, before["theta0"], before["duals"], mu)
        duals, _, theta0 = fedmm_round(local, before["theta0"], before["duals"], mu, eta3)
        return {"local": local, "duals": duals, "theta0": theta0}
    return fn


__all__ += ["newton_local", "nl_reference", "player_matrices"]
