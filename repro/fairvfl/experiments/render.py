"""Tables and figures of the Fair VFL experiments from their records
(docs/decisions.md#fairvfl-tables, docs/decisions.md#fairvfl-figures).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from repro.engine.records.query import where
from repro.engine.report.plotting import figure, plot_paper_points, save_figure, scale_text
from repro.engine.report.report import Measured, Table, paper_values, write_table
from repro.fairvfl.data import DATASETS
from repro.fairvfl.experiments._records import mean_over_seeds

_NAMES = {"adult": "ADULT", "compas": "COMPAS", "crime": "C&C"}


def _cell(values, stem, metric, scale=1.0, digits=4, **key):
    """``ours (paper)``: ``values`` (scaled, e.g. to %) beside the paper's printed value of
    the ``repro/reported/<stem>.csv`` row ``key`` / ``metric`` (``None`` metric: none).
    """
    vals = [scale * v for v in values]
    if not vals:
        return "-"
    if metric is None:  # a row or column the paper does not print
        return Measured(tuple(vals), digits=digits)
    return paper_values(stem).measured(vals, metric, digits, **key)


def render_conf_table1(records, out: Path, scale: str) -> list[Path]:
    stem = "fairvfl_conf_table1"
    t = Table(f"[C] Table I reproduced ({scale_text(scale)}): test AC / FR / HM in %, mean ± std "
              "(ddof = 1) over runs", ["dataset", "method", "AC", "FR", "HM"])
    # (label, records' match, metric prefix, the reported row's method and epsilon or None)
    rows = (("FedBCD", {"method": "FedBCD"}, "", ("FedBCD", "")),
            ("EO", {"method": "FedBCD"}, "eo_", ("EO", "")),
            ("CEO", {"method": "FedBCD"}, "ceo_", ("CEO", "")),
            ("EO (equal opportunity)", {"method": "FedBCD"}, "eo_opp_", None),
            ("CEO (weighted cost)", {"method": "FedBCD"}, "ceo_w_", None),
            ("Fair VFL (0.01)", {"method": "FairVFL"}, "", ("Fair VFL", "0.01")))
    for d in DATASETS:
        for label, match, prefix, reported in rows:
            cells = []
            for m, metric in (("acc", "AC_pct"), ("fr", "FR_pct"), ("hm", "HM_pct")):
                vals = mean_over_seeds(records, prefix + m, dataset=d, **match)
                key = ({} if reported is None else
                       {"dataset": d, "model": "LM", "method": reported[0],
                        "epsilon": reported[1]})
                cells.append(_cell(vals, stem, metric if reported else None, 100.0, 2, **key))
            t.add(_NAMES[d], label, *cells)
    t.caption = negative_fr_note(t)
    return write_table(t, out, stem)


NEGATIVE_FR_NOTE = (
    "A negative FR: FR = 1 − DEO ([C] §V-A(c)), and DEO (Definition 1) is the absolute "
    "difference of the two groups' mean logistic losses on the positive test rows, not a "
    "difference of rates: it is not bounded by 1 (a post-processed predictor's per-row loss is "
    "−log p̃, up to −log 10⁻¹² ≈ 27.6 where p̃ = 0), so FR falls below 0 where the groups' mean "
    "losses differ by more than 1 (here: {rows}). HM, the harmonic mean of AC and FR, is "
    "taken with FR clipped to 0 (a harmonic mean of a negative number is meaningless), so HM "
    "= 0 in every such run.")


def negative_fr_note(t: Table) -> str:
    """The caption note on rows whose mean FR is negative (``""`` where none is)."""
    col = t.columns.index("FR")
    rows = [f"{r[0]} {r[1]}" for r in t.rows
            if isinstance(r[col], Measured) and r[col].values and r[col].mean < 0]
    return NEGATIVE_FR_NOTE.format(rows=", ".join(rows)) if rows else ""


def render_journal_table(records, out: Path, scale: str, stem: str) -> list[Path]:
    model = records[0].config["model"] if records else "LM"
    reported = f"fairvfl_{stem}"
    t = Table(f"[J] {'Table 1' if model == 'LM' else 'Table 2'} reproduced "
              f"({scale_text(scale)}, {model}): test ACC %, DFP, DFN, mean ± std over runs",
              ["dataset", "method", "ACC", "DFP", "DFN", "train DEO"])
    eps_values = sorted({r.config["eps"] for r in records if r.config["method"] == "FairVFL"})
    methods = [("FedBCD", {"method": "FedBCD"}, "", ("FedBCD", "")),
               ("FedBCD + EO", {"method": "FedBCD"}, "eo_", ("FedBCD + EO", "")),
               ("FedBCD + CEO", {"method": "FedBCD"}, "ceo_", ("FedBCD + CEO", ""))]
    methods += [(f"FairVFL({e})", {"method": "FairVFL", "eps": e}, "", ("FairVFL", str(e)))
                for e in eps_values]
    for d in DATASETS:
        for label, match, prefix, (method, eps) in methods:
            key = {"dataset": d, "model": model, "method": method, "epsilon": eps}
            acc = mean_over_seeds(records, prefix + "acc", dataset=d, **match)
            dfp = mean_over_seeds(records, prefix + "dfp", dataset=d, **match)
            dfn = mean_over_seeds(records, prefix + "dfn", dataset=d, **match)
            tr = mean_over_seeds(records, "train_D", dataset=d, **match) if not prefix else ()
            t.add(_NAMES[d], label, _cell(acc, reported, "ACC_pct", 100.0, 2, **key),
                  _cell(dfp, reported, "DFP", 1.0, 3, **key),
                  _cell(dfn, reported, "DFN", 1.0, 3, **key),
                  _cell([abs(v) for v in tr], reported, None, 1.0, 4))
    return write_table(t, out, reported)


def render_conf_fig1(records, out: Path, scale: str) -> list[Path]:
    fig, axes = figure(1, 3, figsize=(13, 3.8), layout="constrained")
    for ax, d in zip(axes, DATASETS, strict=True):
        eps = sorted({r.config["eps"] for r in records if r.config["dataset"] == d
                      and r.config["method"] == "FairVFL"})
        x = np.arange(len(eps))
        for metric, label in (("acc", "AC: accuracy (%)"),
                              ("fr", "FR: fairness rate 1 − DEO (%)")):
            vals = [np.array(mean_over_seeds(records, metric, dataset=d, method="FairVFL",
                                             eps=e)) * 100 for e in eps]
            ax.errorbar(x, [v.mean() for v in vals],
                        yerr=[v.std(ddof=1) if len(v) > 1 else 0 for v in vals],
                        marker="o", capsize=3, label=label)
        base = mean_over_seeds(records, "acc", dataset=d, method="FedBCD")
        if base:
            ax.axhline(100 * np.mean(base), ls="--", color="gray", label="FedBCD AC")
        _table1_points(ax, d, eps)
        ax.set_xticks(x, [f"{e:g}" for e in eps])
        ax.set(xlabel=r"$\varepsilon$ (evenly spaced, not to scale)",
               ylabel="% (mean ± std over runs)", title=_NAMES[d])
    fig.suptitle(f"[C] Fig. 1 reproduced ({scale_text(scale)}): effect of ε on accuracy (AC) "
                 "and fairness rate (FR = 1 − DEO); ε values evenly spaced on the axis; stars: "
                 "the paper's Table I (Fair VFL, ε = 0.01)")
    return save_figure(fig, out, "fairvfl_conf_fig1")


def _table1_points(ax, dataset: str, eps: list[float]) -> None:
    """The values [C] Table I prints for Fair VFL at ε = 0.01 (AC, FR, with their std), as
    stars at ε = 0.01 in the colours of our AC and FR curves (C0, C1); the figure itself the
    paper prints as an image only.
    """
    if 0.01 not in eps:
        return
    printed = paper_values("fairvfl_conf_table1")
    for i, (metric, name) in enumerate((("AC_pct", "AC"), ("FR_pct", "FR"))):
        hit = printed.get(metric, dataset=dataset, model="LM", method="Fair VFL",
                          epsilon="0.01")
        if hit is not None:
            plot_paper_points(ax, [eps.index(0.01)], [float(hit[0])], color=f"C{i}",
                              yerr=[float(hit[1])] if hit[1] else None,
                              label=f"{name}, Table I (paper)")


def render_conf_fig2(records, out: Path, scale: str) -> list[Path]:
    datasets = [d for d in DATASETS if any(r.config["dataset"] == d for r in records)]
    fig, axes = figure(1, len(datasets), figsize=(4.4 * len(datasets), 3.8), squeeze=False,
                       layout="constrained")
    styles = {0.01: "-", 0.05: "--", 0.1: ":"}
    for ax, d in zip(axes[0], datasets, strict=True):
        for r in sorted(where(records, dataset=d), key=lambda r: (r.config["Q"],
                                                                     r.config["eps"])):
            c = r.curves
            ax.plot(np.asarray(c["t"]) + 1, c["loss"], ls=styles.get(r.config["eps"], "-"),
                    color=f"C{[1, 4, 7].index(r.config['Q'])}",
                    label=rf"$Q = {r.config['Q']}$, $\varepsilon = {r.config['eps']:g}$")
        ax.set_xscale("log")
        ax.set(xlabel=r"communication round $t + 1$ (log)", ylabel=r"training loss $L(\theta)$",
               title=_NAMES[d])
        ax.legend(fontsize=6)
    fig.suptitle(f"[C] Fig. 2 reproduced ({scale_text(scale)})")
    return save_figure(fig, out, "fairvfl_conf_fig2")


def render_journal_fig(records, out: Path, scale: str, stem: str) -> list[Path]:
    fig, axes = figure(2, 3, figsize=(13, 7.5), layout="constrained")
    for j, d in enumerate(DATASETS):
        rows = sorted(where(records, dataset=d, seed=0),
                      key=lambda r: (r.config["method"] != "FedBCD", r.config["eps"] or 0))
        for i, r in enumerate(rows):
            label = "FedBCD" if r.config["method"] == "FedBCD" else f"FairVFL({r.config['eps']})"
            t = np.asarray(r.curves["t"])
            axes[0, j].plot(t, r.curves["loss"], color=f"C{i}", label=label)
            # D(theta^0) = 0 for the LM: the log axis starts at round 1
            axes[1, j].plot(t[1:], np.abs(r.curves["D"])[1:], color=f"C{i}", label=label)
            if r.config["eps"]:
                axes[1, j].axhline(r.config["eps"], color=f"C{i}", ls=":", lw=0.8)
        axes[0, j].set(xlabel=r"round $t$", ylabel=r"$L(\theta^t)$ (train)", title=_NAMES[d])
        axes[1, j].set(xlabel=r"round $t$", ylabel=r"DEO$(\theta^t) = |D(\theta^t)|$ (train)",
                       title=_NAMES[d])
        axes[1, j].set_yscale("log")
        axes[1, j].set_ylim(bottom=1e-4)
        for ax in axes[:, j]:
            if rows:
                ax.legend(fontsize=6)
            else:  # a sweep still under way: say so rather than draw empty axes
                ax.text(0.5, 0.5, "no records yet", transform=ax.transAxes, ha="center",
                        va="center", color="0.4")
    model = records[0].config["model"] if records else "LM"
    fig.suptitle(f"[J] {'Fig. 1' if model == 'LM' else 'Fig. 2'} reproduced "
                 f"({scale_text(scale)}, {model}, seed 0)")
    return save_figure(fig, out, f"fairvfl_{stem}")
