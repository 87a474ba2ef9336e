"""Figures carry the paper's printed values (the plotted artists' data equal
the reported CSV's), titles say 'scale: X', a band where a curve is a mean over seeds, one
legend outside the data; tables and figures rendered from fewer cells than declared say
'k of N cells'; md numbers to the paper's printed precision + 1 digit.
"""

from __future__ import annotations

import numpy as np
import pytest

import repro.constrfl.experiments.render as constrfl_render
import repro.fairvfl.experiments.render as fairvfl_render
import repro.fedmm.experiments.render as fedmm_render
import repro.fedmm.experiments.render_curves as fedmm_curves
import repro.relfair.experiments.render as relfair_render
from repro.engine.records.records import RunRecord
from repro.engine.report import plotting
from repro.engine.report.report import (
    Measured,
    Table,
    coverage_text,
    paper_values,
    printed_decimals,
    rendering_coverage,
    write_table,
)


@pytest.fixture
def captured(monkeypatch):
    """The figures a renderer saves, kept open for inspection (finished, as saved)."""
    figs = []

    def keep(fig, out, stem):
        plotting.finish_figure(fig)
        figs.append(fig)
        return []

    for mod in (constrfl_render, fairvfl_render, fedmm_render, fedmm_curves, relfair_render):
        monkeypatch.setattr(mod, "save_figure", keep)
    return figs


def _paper_points(fig):
    return {ln.get_label(): (list(ln.get_xdata()), list(ln.get_ydata()))
            for ln in plotting.paper_artists(fig)}


def test_constrfl_fig1_marks_table1_values_with_one_key_per_axis(captured):
    n, k = 5, 6
    curves = {f"iter_obj_client{i}": list(np.linspace(1, 0.3 + 0.01 * i, k)) for i in range(n)}
    curves |= {f"iter_feas_client{i}": list(np.linspace(0.5, 0.19, k)) for i in range(n)}
    recs = [RunRecord("constrfl.fig1", {"dataset": d, "n": n, "trial": 0}, d, 0, curves=curves)
            for d in ("breast-cancer-wisc", "monks-1")]
    constrfl_render.fig1(recs, None, "smoke")
    (fig,) = captured
    pts = _paper_points(fig)
    t1 = paper_values("constrfl_table1")
    # one objective and one feasibility star per panel, at the last iteration, = Table 1's
    for d, ax in zip(("breast-cancer-wisc", "monks-1"), fig.axes[:2], strict=True):
        obj = [ln for ln in ax.get_lines() if ln.get_gid() == plotting.PAPER_GID]
        assert [(ln.get_xdata()[0], ln.get_ydata()[0]) for ln in obj] == [(k - 1, float(
            t1.get("objective", dataset=d, n=n, method="Algorithm 1", statistic="mean")[0]))]
    feas_axes = fig.axes[2:]  # the twins, made after the panels
    want = [float(t1.get("feasibility", dataset=d, n=n, method="Algorithm 1",
                         statistic="mean_over_clients")[0])
            for d in ("breast-cancer-wisc", "monks-1")]
    got = [ln.get_ydata()[0] for ax in feas_axes for ln in ax.get_lines()
           if ln.get_gid() == plotting.PAPER_GID]
    assert got == want and len(pts) == 2
    # one key per axis: each y axis labelled and coloured as its curves
    left, right = fig.axes[0], fig.axes[2]
    assert "left" in left.get_ylabel() and "right" in right.get_ylabel()
    assert left.yaxis.label.get_color() == constrfl_render.OBJ_COLOR
    assert right.yaxis.label.get_color() == constrfl_render.FEAS_COLOR
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "objective: mean ± (max − mean) over clients" in labels  # the band, explained
    assert "feasibility: min–max over clients" in labels
    assert all(ax.get_legend() is None for ax in fig.axes)  # one legend, below the panels
    assert "scale: smoke" in fig._suptitle.get_text()


def test_fairvfl_conf_fig1_marks_table1_values_at_eps_001(captured):
    recs = []
    for d in ("adult", "compas", "crime"):
        for seed in range(2):
            for method, eps in (("FedBCD", None), ("FairVFL", 0.01), ("FairVFL", 0.1)):
                recs.append(RunRecord("fairvfl.conf_fig1", {"dataset": d, "method": method,
                                                            "eps": eps, "seed": seed},
                                      f"{d}{seed}{method}{eps}", seed,
                                      metrics={"acc": 0.8, "fr": 0.9}))
    fairvfl_render.render_conf_fig1(recs, None, "paper")
    (fig,) = captured
    printed = paper_values("fairvfl_conf_table1")
    for ax, d in zip(fig.axes, ("adult", "compas", "crime"), strict=True):
        stars = {ln.get_label(): (ln.get_xdata()[0], ln.get_ydata()[0])
                 for ln in ax.get_lines() if ln.get_gid() == plotting.PAPER_GID}
        for metric, name in (("AC_pct", "AC"), ("FR_pct", "FR")):
            value = float(printed.get(metric, dataset=d, model="LM", method="Fair VFL",
                                      epsilon="0.01")[0])
            assert stars[f"{name}, Table I (paper)"] == (0, value)  # eps 0.01 at index 0
    assert "(scale: paper)" in fig._suptitle.get_text()
    assert "(paper)" not in fig._suptitle.get_text().replace("Table I (paper", "")


def test_relfair_curves_mark_table1_accuracy(captured, tmp_path):
    from repro.relfair.experiments._cells import METRICS

    recs = [RunRecord("relfair.table1", {"task": "MNIST", "method": "FedAvg", "seed": s,
                                         "eval_every": 5},
                      f"a{s}", s, metrics={m: 0.5 for m in METRICS},
                      curves={"val_acc": [0.2, 0.4, 0.6]}) for s in range(2)]
    relfair_render.table1_render(recs, tmp_path, "smoke")
    (fig,) = captured
    assert _paper_points(fig) == {"FedAvg, Table 1 (paper)": (
        [15.0], [float(paper_values("relfair_table1").get("acc_all", task="MNIST",
                                                          method="FedAvg")[0])])}
    assert len(fig.axes[0].collections) == 1  # the seed band (2 seeds)


def test_fedmm_curves_have_a_seed_band_one_colour_per_method_and_no_legend_on_data(captured):
    def rec(alg, m, seed, acc):
        cfg = {"da": "CDAN", "algorithm": alg, "local_steps": m, "p": 1.0, "seed": seed,
               "n_source": 8, "n_target": 8, "batch": 2, "rounds": 3}
        return RunRecord("fedmm.fig4", cfg, f"{alg}{m}{seed}", seed,
                         metrics={"test_acc_full": acc},
                         curves={"round": [1.0, 2.0, 3.0], "acc": [0.1, acc - 0.1 * seed, acc]})

    recs = [rec("FedMM", 20, s, 0.6) for s in range(3)] + [
        rec("FedSGDA", 1, s, 0.4) for s in range(3)]
    fedmm_curves.curves_figure(recs, None, "fedmm_fig4", "Fig. 4", "reduced")
    (fig,) = captured
    ax = fig.axes[1]  # CDAN
    assert len(ax.collections) == 2  # one ±1 std band per method (3 seeds each)
    assert all(a.get_legend() is None for a in fig.axes) and len(fig.legends) == 1
    title = fig._suptitle.get_text()
    assert "scale: reduced" in title and "(drawn: 0-2), band ±1 std" in title
    assert sorted(t.get_text() for t in fig.legends[0].get_texts()) == [
        "FedMM (M=20): seeds 0-2", "FedSGDA (M=1): seeds 0-2"]  # the seeds each mean is over
    fedmm_curves.curves_figure(recs[:1] + recs[3:4], None, "fedmm_fig4", "Fig. 4", "smoke")
    assert "(drawn: 0)" in captured[-1]._suptitle.get_text()
    assert len(captured[-1].axes[1].collections) == 0  # one seed: no band


def test_paper_overlay_artists_read_back():
    fig, ax = plotting.figure()
    ax.plot([0, 1, 2], [1, 2, 3], label="ours")
    p = plotting.plot_paper_points(ax, [2], [2.5], yerr=[0.1], label="paper")
    c = plotting.plot_paper_curve(ax, [0, 1, 2], [1.0, 1.5, 2.0], label="paper curve")
    assert plotting.paper_artists(fig) == [p, c]
    assert c.get_linestyle() == "--" and p.get_linestyle() == "None"
    assert list(c.get_ydata()) == [1.0, 1.5, 2.0]


def test_printed_precision_plus_one_digit_in_md_only(tmp_path):
    assert [printed_decimals(t) for t in ("83.0", "56", "0.0473", "7.09e-04", "NA", None)] == [
        1, 0, 4, None, None, None]
    cell = Measured((0.9375998937771609, 0.9399), "0.94", digits=6)
    assert str(cell) == "0.939 ± 0.002 (0.94)"  # 0.94: 2 decimals + 1
    assert str(Measured((1.23456, 1.3), None, digits=4)) == "1.2673 ± 0.0463 (—)"
    t = Table("T", ["x"])
    t.add(cell)
    write_table(t, tmp_path, "t")
    assert "0.9387499468885805," in (tmp_path / "t.csv").read_text()  # CSV: full precision


def test_k_of_n_cells_and_seeds_in_title_caption_and_figure(tmp_path):
    declared = [{"ds": d, "seed": s} for d in ("a", "b") for s in range(3)]
    assert coverage_text(declared, declared) == ""
    assert coverage_text(declared, declared[:5]) == (
        "from 5 of 6 cells, as few as 2 of 3 seeds per mean")
    assert coverage_text(declared, declared[:3]) == "from 3 of 6 cells"  # b: none, a: all
    # a reading's settings in the records' configs change nothing
    with_reading = [{**c, "local_work": "epochs"} for c in declared[:5]]
    assert coverage_text(declared, with_reading) == (
        "from 5 of 6 cells, as few as 2 of 3 seeds per mean")
    with rendering_coverage("from 2 of 3 cells"):
        t = Table("Table 9 (scale: paper)", ["x"], caption="c.")
        t.add(1)
        md = write_table(t, tmp_path, "t9")[0].read_text()
        fig, ax = plotting.figure()
        ax.plot([0, 1], [0, 1])
        ax.set(xlabel="x", ylabel="y", title="t")
        fig.suptitle("Fig. 9")
        plotting.save_figure(fig, tmp_path, "f9")
        assert "[partial: from 2 of 3 cells]" in fig._suptitle.get_text()
    assert md.startswith("### Table 9 (scale: paper) [partial: from 2 of 3 cells]")
    assert "**Partial: rendered from 2 of 3 cells**" in md
    t = Table("Table 9", ["x"])
    t.add(1)
    assert "partial" not in write_table(t, tmp_path, "t10")[0].read_text()  # outside: none


def test_fairvfl_negative_fr_is_explained():
    t = Table("T", ["dataset", "method", "AC", "FR", "HM"])
    t.add("ADULT", "CEO (weighted, A8)", Measured((82.1,)), Measured((-44.5, -43.0)),
          Measured((0.0, 0.0)))
    note = fairvfl_render.negative_fr_note(t)
    assert "FR = 1 − DEO" in note and "not bounded by 1" in note and "HM" in note
    assert "ADULT CEO (weighted, A8)" in note
    t.rows[0][3] = Measured((44.5,))
    assert fairvfl_render.negative_fr_note(t) == ""


def test_constrfl_figures_pass_save_figures_label_checks(tmp_path):
    n, k = 2, 3
    curves = {f"iter_{m}_client{i}": [0.5, 0.3, 0.2] for m in ("obj", "feas") for i in range(n)}
    rec = RunRecord("constrfl.fig1", {"dataset": "monks-1", "n": n, "trial": 0}, "m", 0,
                    curves=curves)
    paths = constrfl_render.fig1([rec], tmp_path, "smoke")
    assert [p.name for p in paths] == ["constrfl_fig1.png", "constrfl_fig1.pdf"]
    fair = {f"iter_{c}": [0.1] * k for c in ("obj_mean", "obj_max", "disp_mean", "disp_min",
                                              "disp_max", "disp_server")}
    rec = RunRecord("constrfl.fig2", {"n": 5, "trial": 0}, "f", 0, curves=fair)
    assert len(constrfl_render.fig2([rec], tmp_path, "smoke")) == 2


def test_relfair_fig4_names_the_papers_gini(captured):
    recs = [RunRecord("relfair.fig4", {"method": "FedAvg", "seed": 0}, "a", 0,
                      metrics={"gini": 0.2}, curves={"client_val_loss": [1.0, 2.0, 3.0]})]
    relfair_render.fig4_render(recs, None, "smoke")
    (fig,) = captured
    paper = paper_values("relfair_table1").get("gini", task="MNIST", method="FedAvg")[0]
    assert [t.get_text() for t in fig.legends[0].get_texts()][0] == (
        f"FedAvg (Gini 0.200; paper {paper})")
