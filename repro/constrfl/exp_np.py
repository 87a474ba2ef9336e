"""Table 1, Table 3 and Figure 1: Neyman-Pearson classification (30)-(31), spec §4.1.

A cell is one (dataset, n, trial, mode): cProx-AL and Algorithm 1 from the same ``w^0``.
``mode = "paper"`` is the algorithm as written; ``"reference"`` switches on the NP script's
departures (D1, D2, D4, D5 tolerance factors, D6 eps floor, D8 first row dropped).
Metrics are computed as the reference evaluation script does (spec §5).

Scales: ``smoke`` (two small sets, K <= 20, T <= 100), ``paper`` (10 trials, K <= 100,
T <= 300) and ``reduced`` (``SCALE=auto``; :func:`reduced_protocol`): the paper protocol for
breast-cancer-wisc and monks-1 n = 1, else trials 0-2 (adult-a n >= 5: trial 0) with K <= 10 and
the paper's T cap (docs/deviations.md#constrfl-reduced-scale). Figure 1 uses the same caps.
"""

from __future__ import annotations

import time
from functools import lru_cache
from pathlib import Path

import numpy as np

from repro.constrfl.config import ProxALConfig, reference_flags
from repro.constrfl.cproxal import CentralProxAL
from repro.constrfl.datasets import NP_DATASETS, equal_class_split, load_np_dataset
from repro.constrfl.exp_common import PopMeasured, paper_cell, paper_d
from repro.constrfl.problems import neyman_pearson, unit_sphere_w0
from repro.constrfl.proxal import FedProxAL
from repro.engine.experiment import CellResult, Claim, Reproduced, RunContext
from repro.engine.plotting import figure, save_figure
from repro.engine.report import Table, write_table

HYPER = dict(beta=300.0, s_bar=1e-3, rho=0.01, q=0.9, eps1=1e-3, eps2=1e-3)
CAPS = {"smoke": (20, 100), "paper": (100, 300)}
# Reduced scale (docs/deviations.md#constrfl-reduced-scale): the paper's protocol where it is
# cheap (breast-cancer-wisc, monks-1 n = 1: 10 trials, K <= 100); elsewhere every Algorithm-2
# call of our encodings hits T = 300 (and adult-a's 32k rows cost tens of ms per round), so the
# outer loop is capped at K <= 10 and the trials cut to 3 (adult-a n >= 5: 1).
REDUCED_K = 10
R = 0.2
TABLE3_D = {"breast-cancer-wisc": "20", "adult-a": "21", "monks-1": "21"}
DEV = "docs/deviations.md"
AGREEMENT = 5e-2   # spec §6: Algorithm 1 vs cProx-AL relative difference at most this matches
SUBSTITUTE = f"{DEV}#constrfl-table-1-data"   # the entry: the authors' CSVs are private (A1)


def config_for(mode: str, k_max: int, t_max: int) -> ProxALConfig:
    flags = reference_flags("np") if mode == "reference" else {}
    # q^t falls below round-off after ~300 rounds: floor the inner tolerance at 1e-12 (paper
    # mode; the reference floors eps itself at 1e-10, D6).
    return ProxALConfig(**HYPER, k_max=k_max, t_max=t_max, cprox_k_max=k_max,
                        solver_tol_floor=1e-12, **flags)


@lru_cache(maxsize=8)
def np_problem(dataset: str, n: int, drop_first_row: bool):
    data = load_np_dataset(dataset, drop_first_row)
    split = equal_class_split(data.y, n)
    X0 = np.stack([data.X[a] for a, _ in split])
    X1 = np.stack([data.X[b] for _, b in split])
    return neyman_pearson(X0, X1, R), X0, X1


def class_losses(X0, X1, w) -> tuple[np.ndarray, np.ndarray]:
    """Per client: class-0 mean loss (objective, no 1/n) and class-1 mean loss (feasibility,
    without subtracting r), spec §5."""
    z0, z1 = X0 @ w, X1 @ w
    return np.logaddexp(0, z0).mean(axis=1), np.logaddexp(0, -z1).mean(axis=1)


def reduced_protocol(dataset: str, n: int) -> tuple[range, int, int]:
    """``(trials, k_max, t_max)`` of a Table-1 cell at the reduced scale (same data, same
    algorithm, same T cap; fewer trials and a smaller K cap where the paper protocol is
    expensive)."""
    k, t_ = CAPS["paper"]
    if dataset == "breast-cancer-wisc" or (dataset == "monks-1" and n == 1):
        return range(10), k, t_
    if dataset == "adult-a" and n > 1:
        return range(1), REDUCED_K, t_
    return range(3), REDUCED_K, t_


def cells(scale: str) -> list[dict]:
    if scale == "reduced":
        out = []
        for n in (1, 5, 10, 20):
            for ds in ("breast-cancer-wisc", "monks-1", "adult-a"):
                trials, k, t_ = reduced_protocol(ds, n)
                out += [{"dataset": ds, "n": n, "trial": t, "mode": "paper", "k_max": k,
                         "t_max": t_} for t in trials]
        return out
    k, t_ = CAPS[scale]
    if scale == "smoke":
        return [{"dataset": ds, "n": n, "trial": t, "mode": "paper", "k_max": k, "t_max": t_}
                for ds in ("breast-cancer-wisc", "monks-1") for n in (1, 5) for t in range(2)] + [
            {"dataset": "breast-cancer-wisc", "n": 5, "trial": 0, "mode": "reference",
             "k_max": k, "t_max": t_}]
    # Small n first, so that an interrupted paper-scale run leaves whole rows of every set.
    return [{"dataset": ds, "n": n, "trial": t, "mode": "paper", "k_max": k, "t_max": t_}
            for n in (1, 5, 10, 20) for ds in ("breast-cancer-wisc", "monks-1", "adult-a")
            for t in range(10)]


def fig_cells(scale: str) -> list[dict]:
    if scale == "reduced":   # Table 1's reduced caps for n = 5, trial 0
        return [{"dataset": d, "n": 5, "trial": 0, "mode": "paper",
                 "k_max": reduced_protocol(d, 5)[1], "t_max": reduced_protocol(d, 5)[2]}
                for d in NP_DATASETS]
    ds = ("breast-cancer-wisc", "monks-1") if scale == "smoke" else NP_DATASETS
    k, t_ = CAPS[scale]
    return [{"dataset": d, "n": 5, "trial": 0, "mode": "paper", "k_max": k, "t_max": t_}
            for d in ds]


def run_cell(config: dict, ctx: RunContext) -> CellResult:
    mode = config["mode"]
    cfg = config_for(mode, config["k_max"], config["t_max"])
    problem, X0, X1 = np_problem(config["dataset"], config["n"], mode == "reference")
    w0 = unit_sphere_w0(problem.d, config["trial"])
    t0 = time.perf_counter()
    cs = CentralProxAL(problem, cfg, w0).run()
    t1 = time.perf_counter()
    per_iter: list[tuple[np.ndarray, np.ndarray]] = []
    alg = FedProxAL(problem, cfg, w0)
    st = alg.run(callback=lambda k, w: per_iter.append(class_losses(X0, X1, w)))
    t2 = time.perf_counter()
    for k, (r, ok) in enumerate(zip(st.admm_rounds, st.admm_certified, strict=True)):
        ctx.log_round(k, admm_rounds=r, admm_certified=float(ok))
    oa, fa = class_losses(X0, X1, st.w)
    oc, fc = class_losses(X0, X1, cs.w)
    curves = {"alg1_obj": oa.tolist(), "alg1_feas": fa.tolist(), "cprox_obj": oc.tolist(),
              "cprox_feas": fc.tolist(), "rel_diff": (np.abs(oc - oa) / np.abs(oc)).tolist()}
    for i in range(config["n"]):
        curves[f"iter_obj_client{i}"] = [float(o[i]) for o, _ in per_iter]
        curves[f"iter_feas_client{i}"] = [float(f[i]) for _, f in per_iter]
    return CellResult(metrics={
        "d": problem.d, "alg1_outer": st.k, "alg1_stopped": float(st.stopped),
        "cprox_outer": cs.k, "cprox_stopped": float(cs.stopped),
        "admm_rounds": float(sum(st.admm_rounds)),
        "admm_cap_hits": float(sum(r >= cfg.t_max for r in st.admm_rounds)),
        "admm_certified_fraction": float(np.mean(st.admm_certified)),
        "seconds_cprox": t1 - t0, "seconds_alg1": t2 - t1}, curves=curves)


def _groups(records):
    out: dict[tuple, list] = {}
    for r in records:
        out.setdefault((r.config["dataset"], r.config["n"], r.config["mode"]), []).append(r)
    return out


def _pooled(recs, name):
    return [v for r in sorted(recs, key=lambda r: r.config["trial"]) for v in r.curves[name]]


def _per_trial(recs, name, fn):
    return [fn(r.curves[name]) for r in sorted(recs, key=lambda r: r.config["trial"])]


def protocol_note(recs, data_anchor: str) -> str:
    """The comparison's reason for a row: the data deviation, preceded by the reduced-protocol
    entry when the row's cells ran with fewer than 10 trials or a K cap below the paper's."""
    data = f"{DEV}#{data_anchor}"
    trials = len({r.config["trial"] for r in recs})
    k = min(r.config["k_max"] for r in recs)
    if trials >= 10 and k >= CAPS["paper"][0]:
        return data
    return (f"reduced protocol ({trials} trial(s), K <= {k}): {DEV}#constrfl-reduced-scale; "
            f"data: {data}")


def _rows(recs):
    """Table 1's printed rows of one (dataset, n, mode) group: (method, metric, statistic,
    values); objective and rel. diff pooled over trials x clients, feasibility per trial."""
    rows = [("Algorithm 1", "objective", "mean", _pooled(recs, "alg1_obj")),
            ("cProx-AL", "objective", "mean", _pooled(recs, "cprox_obj")),
            ("Algorithm 1 vs cProx-AL", "relative_difference", "mean",
             _pooled(recs, "rel_diff"))]
    for meth, key in (("Algorithm 1", "alg1_feas"), ("cProx-AL", "cprox_feas")):
        rows.append((meth, "feasibility", "mean_over_clients", _per_trial(recs, key, np.mean)))
        rows.append((meth, "feasibility", "max_over_clients", _per_trial(recs, key, max)))
    return rows


def reproduce(records) -> list[Reproduced]:
    out = []
    for (ds, n, mode), recs in sorted(_groups(records).items()):
        if mode != "paper":
            continue
        note = protocol_note(recs, "constrfl-table-1-data")
        for meth, metric, stat, vals in _rows(recs):
            # spec §6: the agreement row is one-sided (rel. diff <= 5e-2 is a match, smaller is
            # better); objective and feasibility depend on the authors' private CSVs (A1), so
            # our numbers on the rebuilt data are counted apart as substitute_data
            agree = metric == "relative_difference"
            out.append(Reproduced("constrfl_table1",
                                  {"dataset": ds, "n": str(n), "d": TABLE3_D[ds], "m_tilde": "",
                                   "method": meth, "statistic": stat},
                                  metric, tuple(float(v) for v in vals), note=note,
                                  at_most=AGREEMENT if agree else None,
                                  substitute_data="" if agree else SUBSTITUTE))
    return out


def render(records, out: Path, scale: str) -> list[Path]:
    """Table 1, each printed cell ``ours (paper)``: both modes beside the paper's value of
    the same (dataset, n) (the paper prints one); ``d`` ours beside the paper's."""
    stem = "constrfl_table1"
    t = Table(f"Table 1 (Neyman-Pearson, scale {scale}): objective and rel. diff pooled over "
              "trials x clients, feasibility over trials",
              ["dataset", "n", "d", "mode", "Alg. 1 objective", "cProx-AL objective",
               "rel. diff", "Alg. 1 feas. mean", "Alg. 1 feas. max", "cProx feas. mean",
               "cProx feas. max", "outer K", "ADMM cap hits", "trials"])
    for (ds, n, mode), recs in sorted(_groups(records).items()):
        cells = [paper_cell(vals, stem, metric, dataset=ds, n=n, method=meth, statistic=stat)
                 for meth, metric, stat, vals in _rows(recs)]
        t.add(ds, n, PopMeasured((recs[0].metrics["d"],), paper_d(stem, ds), digits=10), mode,
              *cells, PopMeasured(tuple(r.metrics["alg1_outer"] for r in recs), digits=3),
              int(sum(r.metrics["admm_cap_hits"] for r in recs)), len(recs))
    return write_table(t, out, stem)


def _claim_rel(records):
    recs = [r for r in records if r.config["mode"] == "paper"]
    worst = max(max(r.curves["rel_diff"]) for r in recs)
    feas = max(max(r.curves["alg1_feas"]) for r in recs)
    ok = worst <= 5e-2 and feas <= R + 1e-3
    return ok, f"max rel. diff {worst:.3g} (<= 5e-2), max class-1 loss {feas:.4f} (<= 0.201)"


CLAIMS = (Claim("Algorithm 1 matches cProx-AL (rel. diff <= 5e-2) and meets every local "
                "constraint", "Sec. 5.1, Table 1", _claim_rel),)


# --------------------------------------------------------------------------- Table 3

def table3_cells(scale: str) -> list[dict]:
    return [{"dataset": ds} for ds in NP_DATASETS]


def table3_run(config: dict, ctx: RunContext) -> CellResult:
    """Counts after the n = 5 split with the reference loader's first row dropped (D8)."""
    data = load_np_dataset(config["dataset"], drop_first_row=True)
    split = equal_class_split(data.y, 5)
    return CellResult(metrics={
        "n_samples_class0": float(sum(len(a) for a, _ in split)),
        "n_samples_class1": float(sum(len(b) for _, b in split)),
        "feature_dimension": float(data.d)})


def table3_reproduce(records) -> list[Reproduced]:
    out = []
    for r in records:
        ds = r.config["dataset"]
        for metric in ("n_samples_class0", "n_samples_class1", "feature_dimension"):
            out.append(Reproduced("constrfl_table3",
                                  {"dataset": ds, "n": "", "d": TABLE3_D[ds], "m_tilde": "",
                                   "method": "", "statistic": "count"},
                                  metric, (r.metrics[metric],),
                                  note=f"{DEV}#constrfl-a1-feature-dimensions"))
    return out


def table3_render(records, out: Path, scale: str) -> list[Path]:
    """Table 3, each cell ``ours (paper)`` (counts: one value, no std)."""
    stem = "constrfl_table3"
    t = Table("Table 3: class counts after the n = 5 split, feature dimension",
              ["dataset", "class 0", "class 1", "d"])
    for r in sorted(records, key=lambda r: r.config["dataset"]):
        ds = r.config["dataset"]
        t.add(ds, *(paper_cell((r.metrics[m],), stem, m, 10, dataset=ds, statistic="count")
                    for m in ("n_samples_class0", "n_samples_class1", "feature_dimension")))
    return write_table(t, out, stem)


# --------------------------------------------------------------------------- Figure 1

def fig1_render(records, out: Path, scale: str) -> list[Path]:
    recs = sorted(records, key=lambda r: r.config["dataset"])
    fig, axes = figure(1, len(recs), figsize=(4.2 * len(recs), 3.4), squeeze=False)
    for ax, r in zip(axes[0], recs, strict=True):
        n = r.config["n"]
        obj = np.array([r.curves[f"iter_obj_client{i}"] for i in range(n)])
        feas = np.array([r.curves[f"iter_feas_client{i}"] for i in range(n)])
        k = np.arange(obj.shape[1])
        mo = obj.mean(0)
        ax.plot(k, mo, color="tab:blue", label="local objective (mean)")
        ax.fill_between(k, mo - (obj.max(0) - mo), obj.max(0), color="tab:blue", alpha=0.2)
        ax2 = ax.twinx()
        ax2.plot(k, feas.mean(0), color="tab:brown", label="local feasibility (mean)")
        ax2.fill_between(k, feas.min(0), feas.max(0), color="tab:brown", alpha=0.2)
        ax2.axhline(R, color="black", ls="--", label="threshold 0.2")
        ax2.set_ylabel("class-1 loss")
        ax2.set_xlabel("outer iteration k")
        ax.set_xlabel("outer iteration k")
        ax.set_ylabel("class-0 loss")
        ax.set_title(f"{r.config['dataset']}, n = {n}, trial {r.config['trial']}")
        h1, l1 = ax.get_legend_handles_labels()
        h2, l2 = ax2.get_legend_handles_labels()
        ax2.legend(h1 + h2, l1 + l2, fontsize=7)
    fig.suptitle("Figure 1: Algorithm 1 on Neyman-Pearson classification")
    fig.subplots_adjust(wspace=0.6, top=0.85)
    return save_figure(fig, out, "constrfl_fig1")


def _fig1_claim(records):
    worst = max(max(r.curves[f"iter_feas_client{i}"][-1] for i in range(r.config["n"]))
                for r in records)
    return worst <= R + 1e-3, f"largest final class-1 loss over clients {worst:.4f}"


FIG1_CLAIMS = (Claim("Algorithm 1 ends feasible for every local constraint", "Sec. 5.1, Fig. 1",
                     _fig1_claim),)
