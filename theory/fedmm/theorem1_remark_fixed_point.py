"""T1 (specs/fedmm.md §9.2): a FedMM fixed point is a stationary (saddle) point of the GLOBAL f.

Paper 004, Sec. 4 (consensus reformulation (5)-(10)) and the remark after Theorem 1 with
eps = 0. At a fixed point of (13)-(16) with constant eta3 > 0: omega_i = omega0, psi_i = psi0,
sum_i lambda_i = sum_i beta_i = 0 and grad f(omega0, psi0) = 0, for exact local solves and for
any number M of local GDA steps. Runs use :class:`repro.fedmm.fedmm.FedMM` on the
quadratic instances Q of §9.1 and compare with the closed-form saddle z*. Runs that do not
settle (state change >= 1e-13 at the round cap, or non-finite) are counted, and enter the
pass/fail only if the exact round map is a contraction (rho(J) < 1), where they must settle.
"""

from __future__ import annotations

import numpy as np
import torch

from repro.fedmm.blocks import Block
from repro.fedmm.fedmm import FedMM, FedMMConfig
from repro.fedmm.instances import ExactLocalSolver, QuadOracle, gen_Q
from repro.fedmm.local_gda import LocalSolver
from theory.fedmm.trajectory import saddle
from theory.registry import register
from theory.result import CheckResult

TOL = 1e-9
STALL = 1e-13


def blocks_for(d1: int, d2: int, mu: float, eta: float = 0.05) -> tuple[Block, Block]:
    """Omega and psi blocks with one step eta and penalty mu."""
    return (Block("omega", d1, eta, mu), Block("psi", d2, eta, mu))


def make_fedmm(inst, mu: float, solver: str | LocalSolver, M: int = 5, eta: float = 0.05,
               eta3: float = 1.0, constant: bool = True) -> FedMM:
    """FedMM (Algorithm 3) on a Q instance from theta0 = 0 with exact (``solver='exact'``),
    M-step GDA (``'gda'``, the package's LocalGDA) or the given local solves.
    """
    blocks = blocks_for(inst.d1, inst.d2, mu, eta)
    if isinstance(solver, str):
        local = ExactLocalSolver(inst) if solver == "exact" else None
    else:
        local = solver
    theta0 = torch.zeros(inst.d1 + inst.d2, dtype=torch.float64)
    steps = {"local_steps": M} if local is None else {}  # M is LocalGDA's, not another solver's
    config = FedMMConfig(blocks, eta3=eta3, eta3_constant=constant, **steps)
    return FedMM(QuadOracle(inst), config, init=theta0, local_solver=local)


def run_to_rest(alg: FedMM, max_rounds: int) -> tuple[int, float]:
    """Iterate until the state moves less than 1e-13 (sup norm); returns (rounds, last move)."""
    move = np.inf
    for r in range(max_rounds):
        prev0, prevd = alg.state.theta0, alg.state.duals
        alg.step()
        s = alg.state
        move = max(float((s.theta0 - prev0).abs().max()), float((s.duals - prevd).abs().max()))
        if not np.isfinite(move) or move > 1e10:  # diverged: stop early
            return r + 1, float("inf")
        if move < STALL:
            return r + 1, move
    return max_rounds, move


def round_map_radius(inst, mu: float) -> float:
    """Spectral radius of the linear part of one FedMM-exact round (eta3 = 1), state
    (theta0, duals), from unit perturbations of the round map.
    """
    alg = make_fedmm(inst, mu, "exact")
    D, N = inst.d1 + inst.d2, inst.n

    def apply(vec):
        alg.state.round = 1
        alg.state.theta0 = torch.from_numpy(vec[:D].copy())
        alg.state.duals = torch.from_numpy(vec[D:].reshape(N, D).copy())
        alg.step()
        return np.concatenate([alg.state.theta0.numpy(), alg.state.duals.numpy().ravel()])

    base = apply(np.zeros(D + N * D))
    J = np.stack([apply(e) - base for e in np.eye(D + N * D)], axis=1)
    return float(np.abs(np.linalg.eigvals(J)).max())


def errors(alg: FedMM, inst) -> dict[str, float]:
    """Relative distances of theta0 to the global saddle point (omega, psi), the clients'
    distance to consensus and the norm of the summed duals.
    """
    z = saddle(inst)
    th = alg.state.theta0.numpy()
    d1 = inst.d1
    return {
        "omega": np.linalg.norm(th[:d1] - z[:d1]) / max(1.0, np.linalg.norm(z[:d1])),
        "psi": np.linalg.norm(th[d1:] - z[d1:]) / max(1.0, np.linalg.norm(z[d1:])),
        "consensus": float((alg.state.local - alg.state.theta0).abs().max()),
        "dual_sum": float(alg.state.duals.sum(0).norm()),
    }


@register("fedmm.theorem1_remark_fixed_point", seed_name="fedmm.t1_fixed_point",
          paper="004 fedmm",
          claim="A FedMM fixed point (constant eta3) is a saddle point of the global f, exact "
                "or M-step GDA local solves")
def check(seed: int, size: str) -> CheckResult:
    """Remark after Theorem 1 (eps = 0): a FedMM fixed point is the global saddle point."""
    small = size == "small"
    seeds = range(2) if small else range(4)
    Ns = (2,) if small else (2, 4, 8)
    mus = (1.0, 2.0) if small else (1.0, 2.0, 5.0)
    dims = (3, 2) if small else (6, 4)
    variants = [("exact", 0)] + [("gda", M) for M in ((5,) if small else (5, 20))]
    eta3s = (1.0, 0.5)
    max_rounds = 800 if small else 5000
    worst, n, settled, unsettled, excluded, diverged = np.inf, 0, 0, 0, 0, 0
    per = {}
    worst_case = None
    for s in seeds:
        for N in Ns:
            inst = gen_Q(s, N=N, d1=dims[0], d2=dims[1])
            for mu in mus:
                rho = round_map_radius(inst, mu)
                for solver, M in variants:
                    for e3 in eta3s:
                        alg = make_fedmm(inst, mu, solver, M, eta3=e3)
                        rounds, move = run_to_rest(alg, max_rounds)
                        n += 1
                        ok_run = np.isfinite(move) and move < STALL
                        diverged += not np.isfinite(move)
                        if not ok_run:
                            # Only a contraction (exact solve, eta3 = 1) must settle.
                            if solver == "exact" and e3 == 1.0 and rho < 1:
                                unsettled += 1
                                m = -1.0
                                if m < worst:
                                    worst, worst_case = m, (s, N, mu, solver, M, e3, rho)
                            else:
                                excluded += 1
                            continue
                        settled += 1
                        for k, v in errors(alg, inst).items():
                            per[k] = max(per.get(k, 0.0), v)
                            if TOL - v < worst:
                                worst, worst_case = TOL - v, (s, N, mu, solver, M, e3, rho)
    return CheckResult(
        name="fedmm.theorem1_remark_fixed_point", claim="FedMM fixed point = global saddle point",
        paper="004 fedmm", equation="Sec. 4, (5)-(16); remark after Thm 1 (eps = 0)",
        instances=n, worst_margin=float(worst),
        ground_truth={"solver": "closed form", "saddle": "linear solve of the global KKT "
                      "system [[Abar, Bbar], [Bbar', -Cbar]] z = [-abar; cbar]"},
        passed=bool(worst >= 0 and settled > 0), diverged=bool(diverged == n > 0),
        details={"tolerance": TOL, "worst_errors": per, "settled_runs": settled,
                 "contractions_not_settled": unsettled, "diverged": diverged,
                 "excluded_not_settled": excluded, "worst_case": worst_case,
                 "grid": {"seeds": list(seeds), "N": list(Ns), "mu": list(mus),
                          "variants": variants, "eta3_constant": list(eta3s),
                          "max_rounds": max_rounds, "eta_gda": 0.05}})
