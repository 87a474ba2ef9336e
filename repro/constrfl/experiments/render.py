"""Tables 1-4 and Figures 1-2 drawn from the records (output only: not part of a record's code
identity): each table cell ``ours (paper)``, ours the statistic the authors' evaluation scripts
print, paper the value of ``repro/reported/<stem>.csv``.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from repro.constrfl.experiments._fair import R as FAIR_R
from repro.constrfl.experiments._np import R as NP_R
from repro.constrfl.experiments.reproduce import (
    DEV,
    LCQP_METRICS,
    MISPRINT,
    fair_groups,
    fair_rows,
    lcqp_groups,
    np_groups,
    np_rows,
    stop_counts,
)
from repro.engine.report.plotting import figure, plot_paper_points, save_figure, scale_text
from repro.engine.report.report import Measured, Table, paper_values, write_table

__all__ = ["PopMeasured", "admm_cap", "adult_b_feature", "fig1", "fig2", "np_script",
           "paper_cell", "paper_d", "pop_mean_std", "table1", "table2", "table3", "table4"]


def pop_mean_std(values) -> tuple[float, float]:
    """Mean and POPULATION std (ddof = 0): what the reference evaluation scripts print."""
    v = np.asarray(values, dtype=float)
    return float(v.mean()), float(v.std())


class PopMeasured(Measured):
    """A constrfl table cell, ``ours (paper)``: ours = ``mean ± population std`` (ddof = 0,
    what the reference evaluation scripts print and the paper's tables report), the mean to
    ``digits`` significant digits (the values span 1e-8 to 50), the std to 3; a single value
    (one trial, a count) prints alone, its std 0 in the CSV.
    """

    note = ("Each cell: ours (paper), ours = mean ± population std (ddof = 0, as the "
            "authors' evaluation scripts and the paper print it); (—): the paper prints no "
            "value for this cell; a single value (one trial, a count) prints alone.")

    @property
    def std(self) -> float:
        return float(np.std(self.values)) if self.values else math.nan

    def __str__(self) -> str:
        ours = ("not run" if not self.values else f"{self.mean:.{self.digits}g}"
                + (f" ± {self.std:.3g}" if self.n > 1 else ""))
        return f"{ours} ({self.paper_text})"


def paper_cell(values, stem: str, metric: str, digits: int = 4, **key) -> PopMeasured:
    """``values`` beside the value ``repro/reported/<stem>.csv`` prints for ``metric`` at
    ``key`` (``(—)`` where it prints none, e.g. an ``n`` the paper did not run).
    """
    hit = paper_values(stem).get(metric, **key)
    return PopMeasured(tuple(values), *(hit or (None, None)), digits=digits)


def paper_d(stem: str, dataset: str) -> str | None:
    """The feature dimension ``d`` the paper prints for ``dataset`` in ``<stem>``'s rows."""
    ds = {r["d"] for r in paper_values(stem).rows if r.get("dataset") == dataset}
    if len(ds) > 1:
        raise ValueError(f"{stem}: dataset {dataset!r} has several d values {sorted(ds)}")
    return ds.pop() if ds else None


# --------------------------------------------------------------------------- Table 1

def table1(records, out: Path, scale: str) -> list[Path]:
    """Table 1, each printed cell ``ours (paper)``: both modes beside the paper's value of
    the same (dataset, n) (the paper prints one); ``d`` ours beside the paper's.
    """
    stem = "constrfl_table1"
    t = Table(f"Table 1 (Neyman-Pearson, scale {scale}): objective and rel. diff pooled over "
              "trials x clients, feasibility over trials",
              ["dataset", "n", "d", "mode", "Alg. 1 objective", "cProx-AL objective",
               "rel. diff", "Alg. 1 feas. mean", "Alg. 1 feas. max", "cProx feas. mean",
               "cProx feas. max", "outer K", "ADMM cap hits", "trials"])
    done = np_groups([r for r in records if r.ok])
    failed = np_groups([r for r in records if not r.ok])  # a named breakdown (monks-1 n = 20)
    for ds, n, mode in sorted(set(done) | set(failed)):
        recs, bad = done.get((ds, n, mode), []), failed.get((ds, n, mode), [])
        trials = f"{len(recs)}" + (f" ({len(bad)} failed)" if bad else "")
        if not recs:
            name, _, rest = bad[0].reason.splitlines()[0].removeprefix("failed: ").partition(": ")
            why = f"{name} ({rest.split(':')[0]})" if rest else name
            t.add(ds, n, "—", mode, *[f"failed: {why}"] * 7, "—", "—", trials)
            continue
        cells = [paper_cell(vals, stem, metric, dataset=ds, n=n, method=meth, statistic=stat)
                 for meth, metric, stat, vals in np_rows(recs)]
        t.add(ds, n, PopMeasured((recs[0].metrics["d"],), paper_d(stem, ds), digits=10), mode,
              *cells, PopMeasured(tuple(r.metrics["alg1_outer"] for r in recs), digits=3),
              int(sum(r.metrics["admm_cap_hits"] for r in recs)), trials)
    return write_table(t, out, stem)


# --------------------------------------------------------------------------- Table 3

def table3(records, out: Path, scale: str) -> list[Path]:
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

OBJ_COLOR, FEAS_COLOR = "tab:blue", "tab:brown"  # the paper's: blue objective, brown feasibility
SERVER_COLOR = "tab:purple"  # the server's (global) constraint: neither the objective's blue nor
# the clients' brown


def _paper_final(ax, x_end: float, stem: str, metric: str, color: str, label: str,
                 **key) -> None:
    """The paper's printed value of ``metric`` at ``key`` (Algorithm 1) as a marker at the
    last outer iteration, its printed std as an error bar; nothing where it prints none.
    """
    hit = paper_values(stem).get(metric, method="Algorithm 1", **key)
    if hit is not None:
        std = _paper_float(hit[1])
        plot_paper_points(ax, [x_end], [float(hit[0])], color=color, label=label,
                          yerr=None if std is None else [std])


def _paper_float(text: str | None) -> float | None:
    try:
        return None if text in (None, "") else float(text)
    except ValueError:
        return None


def _key_axes(ax, ax2, left: str, right: str) -> None:
    """One key per axis: each y axis in the colour of its curves, its label saying so."""
    ax.set_ylabel(left, color=OBJ_COLOR)
    ax.tick_params(axis="y", colors=OBJ_COLOR)
    ax2.set_ylabel(right, color=FEAS_COLOR)
    ax2.tick_params(axis="y", colors=FEAS_COLOR)
    ax2.spines["right"].set_visible(True)
    ax2.spines["right"].set_color(FEAS_COLOR)
    ax.spines["left"].set_color(OBJ_COLOR)


def fig1(records, out: Path, scale: str) -> list[Path]:
    """Figure 1: per panel (dataset) the clients' mean local objective (left axis, blue) and
    mean local feasibility (right axis, brown) of one trial, their cross-client bands as the
    authors' code draws them (docs/decisions.md#constrfl-figures: objective mean ± (max − mean),
    feasibility [min, max]), the threshold, and Table 1's printed values for the same dataset and n
    (mean over the paper's 10 trials, Algorithm 1) as stars at the last iteration.
    """
    recs = sorted(records, key=lambda r: r.config["dataset"])
    fig, axes = figure(1, len(recs), figsize=(4.4 * len(recs), 3.4), squeeze=False)
    for ax, r in zip(axes[0], recs, strict=True):
        n, ds = r.config["n"], r.config["dataset"]
        obj = np.array([r.curves[f"iter_obj_client{i}"] for i in range(n)])
        feas = np.array([r.curves[f"iter_feas_client{i}"] for i in range(n)])
        k = np.arange(obj.shape[1])
        mo = obj.mean(0)
        ax.plot(k, mo, color=OBJ_COLOR, marker="none", label="objective: mean over clients")
        ax.fill_between(k, mo - (obj.max(0) - mo), obj.max(0), color=OBJ_COLOR, alpha=0.2,
                        linewidth=0, label="objective: mean ± (max − mean) over clients")
        ax2 = ax.twinx()
        ax2.plot(k, feas.mean(0), color=FEAS_COLOR, marker="none",
                 label="feasibility: mean over clients")
        ax2.fill_between(k, feas.min(0), feas.max(0), color=FEAS_COLOR, alpha=0.2,
                         linewidth=0, label="feasibility: min–max over clients")
        ax2.axhline(NP_R, color="black", ls="--", label=f"feasibility threshold {NP_R:g}")
        _paper_final(ax, k[-1], "constrfl_table1", "objective", OBJ_COLOR,
                     "objective, Table 1 (paper, 10 trials)", dataset=ds, n=n,
                     statistic="mean")
        _paper_final(ax2, k[-1], "constrfl_table1", "feasibility", FEAS_COLOR,
                     "feasibility, Table 1 (paper, 10 trials)", dataset=ds, n=n,
                     statistic="mean_over_clients")
        _key_axes(ax, ax2, "objective: class-0 loss (left)",
                  "feasibility: class-1 loss (right)")
        ax.set_xlabel("outer iteration k")
        ax2.set_xlabel("outer iteration k")  # the twin's own (hidden) label: save_figure asks
        ax.set_title(f"{ds}, n = {n}, trial {r.config['trial']}")
    fig.suptitle(f"Figure 1: Algorithm 1 on Neyman-Pearson classification ({scale_text(scale)})")
    fig.subplots_adjust(wspace=0.7, top=0.82)
    return save_figure(fig, out, "constrfl_fig1")


# --------------------------------------------------------------------------- Table 2

FREEZE = (f"Paper-set rows (rho_i = 1e8, Sec. 5.2): Algorithm 2 moves w by c/rho a round, so "
          f"w stays at w^0 and no ADMM call meets (23); diagnostic `constrfl.rho_freeze`, "
          f"{DEV}#constrfl-table-2-paper-set-rho-1e8-frozen.")


def table2(records, out: Path, scale: str) -> list[Path]:
    """Table 2, each printed cell ``ours (paper)``: both hyperparameter sets beside the
    paper's value of the same n (the paper prints one set), with how Algorithm 1's runs
    stopped (``certified (11)``, ``(11) on an uncertified call``, ``cap``).
    """
    stem = "constrfl_table2"
    t = Table(f"Table 2 (fairness, adult-b rebuilt, scale {scale})",
              ["n", "hyperparameters", "Alg. 1 objective", "cProx-AL objective", "rel. diff",
               "Alg. 1 disp. mean", "Alg. 1 disp. max", "cProx disp. mean", "cProx disp. max",
               "||w - w0|| Alg. 1", "ADMM cap hits", "Alg. 1 stop", "trials"],
              caption=FREEZE)
    for (n, hyper), recs in sorted(fair_groups(records).items()):
        cells = [paper_cell(vals, stem, metric, dataset="adult-b", n=n, method=meth,
                            statistic=stat) for meth, metric, stat, vals in fair_rows(recs)]
        t.add(n, hyper, *cells, PopMeasured(tuple(r.metrics["w_moved"] for r in recs)),
              int(sum(r.metrics["admm_cap_hits"] for r in recs)), stop_counts(recs),
              len(recs))
    return write_table(t, out, stem)


# --------------------------------------------------------------------------- Figure 2

def fig2(records, out: Path, scale: str) -> list[Path]:
    """Figure 2: per panel (n) the clients' mean local loss (left axis, blue) and mean local
    disparity (right axis, brown) with their cross-client bands (as in :func:`fig1`), the
    server's disparity (purple, dash-dotted), the threshold, and Table 2's printed values for
    the same n (Algorithm 1; disparity: mean over clients and server) as stars at the last
    iteration.
    """
    recs = sorted(records, key=lambda r: r.config["n"])
    fig, axes = figure(1, len(recs), figsize=(4.4 * len(recs), 3.4), squeeze=False)
    for ax, r in zip(axes[0], recs, strict=True):
        c, n = r.curves, r.config["n"]
        k = np.arange(len(c["iter_obj_mean"]))
        mo, mx = np.array(c["iter_obj_mean"]), np.array(c["iter_obj_max"])
        ax.plot(k, mo, color=OBJ_COLOR, marker="none", label="objective: mean over clients")
        ax.fill_between(k, mo - (mx - mo), mx, color=OBJ_COLOR, alpha=0.2, linewidth=0,
                        label="objective: mean ± (max − mean) over clients")
        ax2 = ax.twinx()
        ax2.plot(k, c["iter_disp_mean"], color=FEAS_COLOR, marker="none",
                 label="disparity: mean over clients")
        ax2.fill_between(k, c["iter_disp_min"], c["iter_disp_max"], color=FEAS_COLOR,
                         alpha=0.2, linewidth=0, label="disparity: min–max over clients")
        ax2.plot(k, c["iter_disp_server"], color=SERVER_COLOR, ls="-.", marker="none",
                 label="disparity: global (server) constraint")
        ax2.axhline(FAIR_R, color="black", ls="--", label=f"disparity threshold {FAIR_R:g}")
        _paper_final(ax, k[-1], "constrfl_table2", "objective", OBJ_COLOR,
                     "objective, Table 2 (paper)", dataset="adult-b", n=n, statistic="mean")
        _paper_final(ax2, k[-1], "constrfl_table2", "loss_disparity", FEAS_COLOR,
                     "disparity, Table 2 (paper, mean over clients and server)",
                     dataset="adult-b", n=n, statistic="mean_over_clients_and_server")
        _key_axes(ax, ax2, "objective: local loss (left)",
                  "disparity: |L_i0 − L_i1| (right)")
        ax.set_xlabel("outer iteration k")
        ax2.set_xlabel("outer iteration k")  # the twin's own (hidden) label: save_figure asks
        ax.set_title(f"adult-b, n = {n}, trial {r.config['trial']}")
    fig.suptitle("Figure 2: Algorithm 1 on fairness-constrained classification "
                 f"({scale_text(scale)})")
    fig.subplots_adjust(wspace=0.7, top=0.82)
    return save_figure(fig, out, "constrfl_fig2")


# --------------------------------------------------------------------------- Table 4

def table4(records, out: Path, scale: str) -> list[Path]:
    """Table 4 in both modes, each printed cell ``ours (paper)``: the paper's table is the
    reference mode's (docs/decisions.md#constrfl-lcqp-experiment), shown beside the paper mode's
    cells too.
    """
    stem = "constrfl_table4"
    misprints = "; ".join(
        f"n = {n}, d = {d}, m~ = {m}, {meth} {metric.replace('_', ' ')}: the paper prints "
        f"{paper_values(stem).get(metric, n=n, d=d, m_tilde=m, method=meth)[0]}, the authors' "
        f"log {fixed} (a misprint, {DEV}#constrfl-table-4-misprints)"
        for (n, d, m, meth, metric), fixed in MISPRINT.items())
    paths = []
    for mode in ("reference", "paper"):
        t = Table(f"Table 4 (LCQP, {mode} mode, scale {scale}): over trials",
                  ["n", "d", "m~", "Alg. 1 objective", "cProx-AL objective", "rel. diff",
                   "Alg. 1 feas. viol.", "cProx-AL feas. viol.", "outer K Alg. 1 / cProx",
                   "ADMM rounds per run", "trials"], caption=misprints + ".")
        for (n, d, m), recs in sorted(lcqp_groups(records, mode).items()):
            col = {k: [r.metrics[k] for r in recs] for k in recs[0].metrics}
            cells = [paper_cell(col[key], stem, metric, 7 if metric == "objective" else 4,
                                dataset="LCQP-synthetic", n=n, d=d, m_tilde=m, method=method,
                                statistic="mean") for method, metric, key in LCQP_METRICS]
            t.add(n, d, m, *cells,
                  f"{'/'.join(str(int(x)) for x in sorted(set(col['alg1_outer'])))} | "
                  f"{'/'.join(str(int(x)) for x in sorted(set(col['cprox_outer'])))}",
                  PopMeasured(tuple(col["admm_rounds"]), digits=4), len(recs))
        paths += write_table(t, out, f"{stem}_{mode}")
    return paths


# --------------------------------------------------------------------------- diagnostics

_DIAG = ("Not in the paper: a diagnostic declared before any run "
         "(docs/deviations.md#declared-diagnostics); each cell ours (the table's printed value "
         "for the same n).")


def _fair_diagnostic(records, out: Path, name: str, title: str, setting) -> list[Path]:
    """One row per (setting, n): Table 2's printed cells from the diagnostic's runs."""
    t = Table(title, ["setting", "n", "Alg. 1 objective", "cProx-AL objective", "rel. diff",
                      "Alg. 1 disp. mean", "Alg. 1 disp. max", "cProx disp. mean",
                      "cProx disp. max", "Alg. 1 stop", "trials"], caption=_DIAG)
    groups: dict[tuple, list] = {}
    for r in records:
        if r.ok:
            groups.setdefault((setting(r), r.config["n"]), []).append(r)
    for (label, n), recs in sorted(groups.items()):
        cells = [paper_cell(vals, "constrfl_table2", metric, dataset="adult-b", n=n,
                            method=meth, statistic=stat) for meth, metric, stat, vals
                 in fair_rows(recs)]
        t.add(label, n, *cells, stop_counts(recs), len(recs))
    return write_table(t, out, name)


def adult_b_feature(records, out: Path, scale: str) -> list[Path]:
    return _fair_diagnostic(records, out, "constrfl_adult_b_feature",
                            f"constrfl.adult_b_feature: Table 2 with a 39th feature of adult-b "
                            f"(scale {scale})", lambda r: f"+ {r.config['feature39']}")


def admm_cap(records, out: Path, scale: str) -> list[Path]:
    return _fair_diagnostic(records, out, "constrfl_admm_cap",
                            f"constrfl.admm_cap: Table 2 with Algorithm 2 capped at T rounds "
                            f"(scale {scale})", lambda r: f"T <= {r.config['t_max']}")


def np_script(records, out: Path, scale: str) -> list[Path]:
    """One row per (data set, n): Table 1's objective and relative-difference cells from the
    NP script's runs (the reference mode).
    """
    t = Table(f"constrfl.np_script: Table 1's cells under the authors' NP script (scale "
              f"{scale})", ["dataset", "n", "Alg. 1 objective", "cProx-AL objective",
                            "rel. diff", "outer K", "trials"], caption=_DIAG)
    for (ds, n, _), recs in sorted(np_groups([r for r in records if r.ok]).items()):
        cells = [paper_cell(vals, "constrfl_table1", metric, dataset=ds, n=n, method=meth,
                            statistic=stat) for meth, metric, stat, vals in np_rows(recs)[:3]]
        t.add(ds, n, *cells, PopMeasured(tuple(r.metrics["alg1_outer"] for r in recs),
                                         digits=3), len(recs))
    return write_table(t, out, "constrfl_np_script")
