"""Cells of the fairness items (32), docs/decisions.md#constrfl-fairness-experiment: Table 2 and
Figure 2.

adult-b is rebuilt from the raw Adult files (docs/decisions.md#constrfl-adult-b,
:func:`repro.constrfl.data.adult_b`); clients split the training rows with the reference rule, the
server holds the test rows. Two hyperparameter sets
(docs/decisions.md#constrfl-fairness-hyperparameters): ``"paper"`` (beta 10, s_bar 1e-3, rho 1e8,
Sec. 5.2) and ``"script"`` (beta 50, s_bar 1e-2, rho 0.1, the script whose output the table scripts
read).

Scales: ``smoke`` (2,000-row subsample, K <= 10) and ``paper`` (``SCALE=auto``: trials 1-10,
K <= 300, both sets; Figure 2 likewise). All use the reference script's T <= 50.
"""

from __future__ import annotations

import time
from functools import lru_cache

import numpy as np

from repro.constrfl.config import ProxALConfig, ReferenceFlags, reference_flags
from repro.constrfl.data import adult_b, equal_class_split
from repro.constrfl.experiments._sweep import sweep_fields
from repro.constrfl.methods import build
from repro.constrfl.problem import fairness, unit_sphere_w0
from repro.constrfl.proxal import STOP_CODES
from repro.constrfl.start import ProxALInit
from repro.engine.experiment import CellResult, RunContext

ADULT_DATA = (("adult", "adult.data"), ("adult", "adult.test"))
R = 0.1
METHODS = ("Algorithm 1", "cProx-AL")   # what every cell runs (Experiment.methods)
# A cell's record depends on its config (and code and data) only: run_cell reads neither the
# experiment's name nor the cell seed (ctx is used for the round log alone). Figure 2's cells
# are Table 2's script-set trial-1 cells under its criterion-tolerance reading (same config), so
# a sweep computes each such run once (Experiment.shared_cells).
SHARED_CELLS = "constrfl.fairness"
# Sec. 5.2's set and the script's; with q, eps1 and eps2 (Sec. 5.2) each is also a cell field
# (absent: the set's value, so these fields changed no existing cell; sweep_fields)
HYPER = {"paper": dict(beta=10.0, s_bar=1e-3, rho=1e8),
         "script": dict(beta=50.0, s_bar=1e-2, rho=0.1)}
COMMON = dict(q=0.9, eps1=1e-3, eps2=1e-3)


def config_for(hyper: str, k_max: int, t_max: int, solver: str = "newton_clip",
               flags: str = "none", **fields: float) -> ProxALConfig:
    """``solver``: the batched clipped Newton (all clients of a round together, default) or
    ``"lbfgsb"``, the per-client L-BFGS-B oracle (docs/decisions.md#constrfl-subproblem-solvers;
    bench and tests compare them). ``flags="fairness"``: the reference script's solver tolerances on
    top (``reference_flags("fairness")``: inner tolerance 1e-4·eps_{t+1}, cProx-AL 1e-4·tau_k,
    eps floor 1e-10, (23) with the eps_{t+1} term; docs/decisions.md#constrfl-solver-tolerances,
    docs/decisions.md#constrfl-caps, docs/decisions.md#constrfl-cproxal), the primary reading of
    Table 2's script set (:mod:`.table2`). ``fields`` overrides keys of the set and of
    :data:`COMMON` (a sweep's cell).
    """
    if flags not in ("none", "fairness"):
        raise ValueError(f"flags must be 'none' or 'fairness', got {flags!r}")
    ref = reference_flags("fairness") if flags == "fairness" else ReferenceFlags()
    return ProxALConfig(**sweep_fields({**HYPER[hyper], **COMMON}, fields),
                        k_max=k_max, t_max=t_max,
                        cprox_k_max=min(k_max, 100), solver=solver, solver_tol_floor=1e-12,
                        hessian_reuse=solver != "lbfgsb", reference=ref)


@lru_cache(maxsize=8)
def fair_problem(n: int, subsample: int):
    """Clients: adult-b training rows split per class over n clients; server: the test rows.
    ``subsample`` > 0 keeps a stratified subsample of that many client rows (and a quarter as
    many server rows), the smoke configuration of docs/decisions.md#constrfl-cost.
    """
    Xtr, ytr, _ = adult_b("train")
    Xte, yte, _ = adult_b("test")
    if subsample:
        rs = np.random.RandomState(10)
        keep = np.sort(np.concatenate([
            rs.permutation(np.flatnonzero(ytr == c))[:int(subsample * np.mean(ytr == c))]
            for c in (0, 1)]))
        Xtr, ytr = Xtr[keep], ytr[keep]
        ks = np.sort(rs.permutation(len(yte))[:subsample // 4])
        Xte, yte = Xte[ks], yte[ks]
    split = equal_class_split(ytr.astype(int), n)
    rows = [np.concatenate([a, b]) for a, b in split]
    Xc = np.stack([Xtr[r] for r in rows])
    yc = np.stack([ytr[r] for r in rows])
    return fairness(Xc, yc, Xte, yte, R), Xc, yc, Xte, yte


def _group_losses(X, y, w):
    z = X @ w
    phi = np.logaddexp(0, z) - y * z
    s = X[..., -1]
    L0 = np.sum(phi * (s == 0), -1) / np.maximum(np.sum(s == 0, -1), 1)
    L1 = np.sum(phi * (s == 1), -1) / np.maximum(np.sum(s == 1, -1), 1)
    return phi.mean(-1), np.abs(L0 - L1)


def evaluate(Xc, yc, Xs, ys, w):
    """Per client mean loss; loss disparity per party (clients, then the server),
    docs/decisions.md#constrfl-metrics.
    """
    obj, disp_c = _group_losses(Xc, yc, w)
    _, disp_s = _group_losses(Xs, ys, w)
    return obj, np.append(disp_c, disp_s)


def run_cell(config: dict, ctx: RunContext) -> CellResult:
    cfg = config_for(config["hyper"], config["k_max"], config["t_max"],
                     flags=config.get("ref_flags", "none"),
                     **sweep_fields({**HYPER[config["hyper"]], **COMMON}, config, only=True))
    problem, Xc, yc, Xs, ys = fair_problem(config["n"], config["subsample"])
    w0 = unit_sphere_w0(problem.d, config["trial"])
    start = ProxALInit(w0)
    t0 = time.perf_counter()
    cs = build("cProx-AL", problem, cfg, init=start).run()
    t1 = time.perf_counter()
    # per iterate w^0, w^1, ..., w^K: the start, then the iterate after every outer iteration
    per_iter = [evaluate(Xc, yc, Xs, ys, w0)]
    st = build("Algorithm 1", problem, cfg, init=start).run(
        callback=lambda k, s, msgs: per_iter.append(evaluate(Xc, yc, Xs, ys, s.w)))
    t2 = time.perf_counter()
    for k, r in enumerate(st.admm_rounds):
        ctx.log_round(k, admm_rounds=r)
    oa, da = evaluate(Xc, yc, Xs, ys, st.w)
    oc, dc = evaluate(Xc, yc, Xs, ys, cs.w)
    curves = {"alg1_obj": oa.tolist(), "alg1_disp": da.tolist(), "cprox_obj": oc.tolist(),
              "cprox_disp": dc.tolist(), "rel_diff": (np.abs(oc - oa) / np.abs(oc)).tolist(),
              "iter_obj_mean": [float(o.mean()) for o, _ in per_iter],
              "iter_obj_max": [float(o.max()) for o, _ in per_iter],
              "iter_disp_mean": [float(d[:-1].mean()) for _, d in per_iter],
              "iter_disp_min": [float(d[:-1].min()) for _, d in per_iter],
              "iter_disp_max": [float(d[:-1].max()) for _, d in per_iter],
              "iter_disp_server": [float(d[-1]) for _, d in per_iter],
              # per outer iteration k: did Algorithm 2 stop by (23) (1) or at the T cap (0),
              # its last certificate eps_{t+1} + sum_i epst_i, and the target tau_k
              "admm_certified": [float(c) for c in st.admm_certified],
              "admm_certificate": list(st.admm_certificates),
              "tau": [cfg.tau(k) for k in range(st.k)]}
    return CellResult(metrics={
        "d": problem.d, "alg1_outer": st.k, "alg1_stopped": float(st.stopped),
        # how the run ended (proxal.STOP_CODES: 0 certified (11), 1 (11) on an
        # uncertified call, 2 cap) and the boolean a noise band may use: 1 only for a
        # certified stop (a run with 0 is not converged)
        "alg1_stop_code": float(STOP_CODES[st.stop_status]),
        "alg1_certified_stop": float(st.certified_stop),
        "cprox_outer": cs.k, "cprox_stopped": float(cs.stopped),
        "admm_rounds": float(sum(st.admm_rounds)),
        "admm_cap_hits": float(sum(r >= cfg.t_max for r in st.admm_rounds)),
        "w_moved": float(np.linalg.norm(st.w - w0))}, curves=curves,
        timings={"seconds_cprox": t1 - t0, "seconds_alg1": t2 - t1})
