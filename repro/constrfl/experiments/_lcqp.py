"""The cells of Table 4: the linear-equality-constrained QP (86), App. E.2
(docs/decisions.md#constrfl-lcqp-experiment); the table's experiment is
:mod:`repro.constrfl.experiments.table4`.

Apart from it so that a cell's code identity (its static import closure,
:mod:`repro.engine.run.code_identity`) holds the computation and not the renderers.
"""

from __future__ import annotations

import time
from functools import lru_cache

import numpy as np

from repro.constrfl.config import ProxALConfig, ReferenceFlags, reference_flags
from repro.constrfl.experiments._sweep import sweep_fields
from repro.constrfl.methods import build
from repro.constrfl.optimality import kkt_residuals
from repro.constrfl.problem import lcqp_reference, unit_sphere_w0
from repro.constrfl.start import ProxALInit
from repro.core.metrics import constraint_feasibility
from repro.engine.experiment import CellResult, RunContext

__all__ = ["GRID", "HYPER", "METHODS", "NS", "cells", "config_for", "instance", "lcqp_objective",
           "lcqp_violation", "run_cell", "solve_cell"]

GRID = ((100, 1), (300, 3), (500, 5))
NS = (1, 5, 10)
METHODS = ("Algorithm 1", "cProx-AL")   # what every cell runs (Experiment.methods)
# App. E.2's hyperparameters; each is also a cell field (absent: the paper's value, so these
# fields changed no existing cell; sweep_fields)
HYPER = dict(beta=10.0, s_bar=0.1, rho=1.0, eps1=1e-3, eps2=1e-3, q=0.9,
             k_max=10_001, t_max=10_001, cprox_k_max=10_001)


def config_for(mode: str, **hyper: float) -> ProxALConfig:
    """Table 4's configuration; ``hyper`` overrides keys of :data:`HYPER` (a sweep's cell)."""
    # Exact subproblem solves reach residual 0, so cProx-AL runs with tau_k = 0 in its stop
    # test in both modes (Algorithm 3 takes {tau_k} as an input;
    # docs/decisions.md#constrfl-cproxal).
    flags = (reference_flags("lcqp") if mode == "reference"
             else ReferenceFlags(cprox_tau_in_stop=False))
    return ProxALConfig(**sweep_fields(HYPER, hyper), reference=flags)


@lru_cache(maxsize=4)
def instance(d: int, n: int, m: int):
    return lcqp_reference(d, n, m)


def cells(scale: str) -> list[dict]:
    if scale == "smoke":
        grid, ns, trials = ((100, 1),), (1, 5), range(3)
    else:
        grid, ns, trials = GRID, NS, range(10)
    return [{"n": n, "d": d, "m": m, "trial": t, "mode": mode}
            for (d, m) in grid for n in ns for t in trials for mode in ("reference", "paper")]


def lcqp_objective(problem, w) -> float:
    """``F(w) = sum_{i>=1} ½wᵀA_iw + b_iᵀw`` (a sum over clients,
    docs/decisions.md#constrfl-metrics).
    """
    return problem.objective(w)


def lcqp_violation(problem, w) -> float:
    """``max_{0<=i<=n} ||C_i w + d_i||_inf`` (server included,
    docs/decisions.md#constrfl-metrics).
    """
    return constraint_feasibility(np.concatenate(problem.constraints(w)), kind="eq")


def solve_cell(n: int, d: int, m: int, trial: int, mode: str, backend: str = "vectorized",
               **hyper: float):
    problem = instance(d, n, m)
    cfg = config_for(mode, **hyper)
    w0 = unit_sphere_w0(d, trial)
    t0 = time.perf_counter()
    cs = build("cProx-AL", problem, cfg, init=ProxALInit(w0)).run()
    t1 = time.perf_counter()
    # The reference driver hands (docs/decisions.md#constrfl-lcqp-mu0-from-cprox) cProx-AL's
    # (in-place updated) multipliers to Algorithm 1.
    start = (ProxALInit(w0, cs.mu0, tuple(cs.mus)) if cfg.reference.mu0_from_cprox
             else ProxALInit(w0))
    st = build("Algorithm 1", problem, cfg, init=start, backend=backend).run()
    t2 = time.perf_counter()
    return problem, cs, st, (t1 - t0, t2 - t1)


def run_cell(config: dict, ctx: RunContext) -> CellResult:
    problem, cs, st, (tc, ta) = solve_cell(config["n"], config["d"], config["m"],
                                           config["trial"], config["mode"],
                                           **sweep_fields(HYPER, config, only=True))
    for k, (r, ok) in enumerate(zip(st.admm_rounds, st.admm_certified, strict=True)):
        ctx.log_round(k, admm_rounds=r, admm_certified=float(ok))
    fa, fc = lcqp_objective(problem, st.w), lcqp_objective(problem, cs.w)
    s1, s2 = kkt_residuals(problem, st.w, st.mu0, st.mus)
    return CellResult(metrics={
        "alg1_objective": fa, "cprox_objective": fc,
        "relative_difference": abs(fc - fa) / abs(fc),
        "alg1_feasibility": lcqp_violation(problem, st.w),
        "cprox_feasibility": lcqp_violation(problem, cs.w),
        "alg1_outer": st.k, "cprox_outer": cs.k, "alg1_stopped": float(st.stopped),
        "cprox_stopped": float(cs.stopped), "admm_rounds": float(sum(st.admm_rounds)),
        "admm_all_certified": float(all(st.admm_certified)),
        "alg1_kkt_stationarity": s1, "alg1_kkt_feasibility": s2,
        "floats_up": st.floats_up, "floats_down": st.floats_down},
        timings={"seconds_cprox": tc, "seconds_alg1": ta})
