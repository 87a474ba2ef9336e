"""Figures a paper could print. The core plotting helpers apply the rules to every
figure that save_figure writes: mathtext, distinct dashes and markers, one figure legend
outside the data, uncertainty bands over seeds, integer ticks on integer axes.
"""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.ticker import MaxNLocator

from repro.engine.report.plotting import (
    figure,
    mathtext,
    plot_mean_band,
    save_figure,
    shared_legend,
)


def _labelled(ax, title="t"):
    ax.set(xlabel="round", ylabel="loss", title=title)


def test_greek_becomes_mathtext_and_existing_math_is_kept():
    assert mathtext("L(θ) vs ε") == r"L($\theta$) vs $\varepsilon$"
    assert mathtext(r"$R(\theta^*_\phi)$ and φ") == r"$R(\theta^*_\phi)$ and $\phi$"
    assert mathtext("costs $5") == "costs $5"  # an unpaired $ is not math
    assert mathtext("λ_1, Δ_0.5, θ_{k+1}") == r"$\lambda_{1}$, $\Delta_{0.5}$, $\theta_{k+1}$"


def test_save_figure_sets_labels_in_mathtext(tmp_path):
    fig, ax = figure()
    ax.plot([0.5, 1.5], [1, 2], label="ε = 0.1")
    ax.set(xlabel="ε", ylabel="DEO(θ)", title="λ")
    fig.suptitle("Fig. 1: Λ_φ")
    save_figure(fig, tmp_path, "m")
    assert ax.get_xlabel() == r"$\varepsilon$" and ax.get_ylabel() == r"DEO($\theta$)"
    assert ax.get_title() == r"$\lambda$"
    assert fig._suptitle.get_text() == r"Fig. 1: $\Lambda_\phi$"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [r"$\varepsilon$ = 0.1"]


def test_coinciding_curves_differ_in_dashes_and_markers(tmp_path):
    fig, ax = figure()
    x = np.arange(100)
    lines = [ax.plot(x, np.sin(x / 10), label=f"method {i}")[0] for i in range(4)]
    _labelled(ax)
    save_figure(fig, tmp_path, "c")
    styles = {(str(ln.get_linestyle()), ln.get_marker()) for ln in lines}
    assert len(styles) == 4  # identical data, four different looks
    # markers spaced (not 100 each) and staggered, so that coinciding curves show them all
    assert [ln.get_markevery() for ln in lines] == [(0, 8), (2, 8), (4, 8), (6, 8)]


def test_one_figure_legend_outside_the_data(tmp_path):
    fig, axes = figure(1, 2)
    for ax in axes:
        ax.plot(np.arange(5), np.arange(5), color="C0", label="FedAvg")
        ax.plot(np.arange(5), np.arange(5) ** 0.5, color="C1", label="Scaffold")
        ax.legend()
        _labelled(ax)
    save_figure(fig, tmp_path, "l")
    assert all(ax.get_legend() is None for ax in axes)
    assert len(fig.legends) == 1
    leg = fig.legends[0]
    assert [t.get_text() for t in leg.get_texts()] == ["FedAvg", "Scaffold"]
    # below the panels: the legend's anchor is at the figure's bottom edge, "upper center"
    assert leg._loc == 9 and leg.get_bbox_to_anchor().y0 == pytest.approx(0.0)


def test_a_label_drawn_two_ways_keeps_legends_per_panel_outside_the_data(tmp_path):
    fig, axes = figure(1, 2)
    for i, ax in enumerate(axes):
        ax.plot([0, 1], [0, 1], color=f"C{i}", label="run")
        ax.plot([0, 1], [1, 0], color="C5", label="other")
        _labelled(ax)
    assert shared_legend(fig) is None
    assert not fig.legends
    for ax in axes:
        leg = ax.get_legend()
        assert leg is not None and leg._loc == 2  # upper left of its anchor...
        assert leg.get_bbox_to_anchor().x0 > ax.get_window_extent().x1 - 1  # ...right of ax


def test_mean_over_seeds_draws_a_band_only_with_several_seeds():
    fig, ax = figure()
    runs = np.array([[1.0, 2.0, 3.0], [1.5, 2.5, 2.0], [0.5, 1.5, 4.0]])
    line = plot_mean_band(ax, [1, 2, 3], runs, label="mean")
    np.testing.assert_allclose(line.get_ydata(), runs.mean(axis=0), rtol=0, atol=1e-15)
    bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(bands) == 1
    verts = bands[0].get_paths()[0].vertices
    std = runs.std(axis=0, ddof=1)
    assert np.max(verts[:, 1]) == pytest.approx(np.max(runs.mean(axis=0) + std), abs=1e-12)
    fig, ax = figure()
    plot_mean_band(ax, [1, 2, 3], runs[:1], label="one seed")
    assert not ax.collections  # one seed: no band, nothing to show


def test_integer_axes_get_integer_ticks(tmp_path):
    fig, (a, b) = figure(1, 2)
    a.plot(np.arange(1, 8), np.linspace(0.1, 0.9, 7), label="x")  # rounds: integer x
    a.axhline(0.55, ls=":")  # a reference line does not make y look integer
    b.plot(np.linspace(0, 1, 7), np.linspace(0.1, 0.9, 7), label="y")
    b.set_xticks([0.0, 0.5, 1.0])  # a renderer's own ticks are kept
    _labelled(a)
    _labelled(b)
    save_figure(fig, tmp_path, "i")
    loc = a.xaxis.get_major_locator()
    assert isinstance(loc, MaxNLocator) and loc._integer
    assert not a.yaxis.get_major_locator()._integer  # AutoLocator: any ticks
    assert not getattr(b.xaxis.get_major_locator(), "_integer", False)
    assert list(b.get_xticks()) == [0.0, 0.5, 1.0]


def test_an_x_label_may_be_shared_by_a_column(tmp_path):
    fig, axes = figure(2, 2)
    for ax in axes.ravel():
        ax.plot([0, 1], [0, 1])
        ax.set(ylabel="acc", title="t")
    axes[1, 0].set_xlabel("round")
    with pytest.raises(ValueError, match="x and y labels"):  # column 1 has none
        save_figure(fig, tmp_path, "s")
    axes[1, 1].set_xlabel("round")
    assert len(save_figure(fig, tmp_path, "s")) == 2


def test_a_smoke_figure_is_marked_across_it_and_in_its_title(tmp_path):
    from repro.engine.report.plotting import SMOKE_WORD, rendering_smoke

    def drawn(title):
        fig, ax = figure()
        ax.plot([0, 1], [0, 1])
        ax.set(xlabel="x", ylabel="y", title="panel")
        fig.suptitle(title)
        return fig

    with rendering_smoke(True):
        fig = drawn("Fig. 1 (scale: paper)")
        save_figure(fig, tmp_path, "smoke")
    marks = [t for t in fig.texts if t.get_gid() == "smoke"]
    assert len(marks) == 1 and marks[0].get_text() == SMOKE_WORD
    assert fig._suptitle.get_text() == "SMOKE RUN, not a result: Fig. 1 (scale: paper)"
    fig = drawn("Fig. 1 (scale: smoke)")  # a renderer called directly: the title says smoke
    save_figure(fig, tmp_path, "direct")
    assert [t.get_gid() for t in fig.texts if t.get_gid()] == ["smoke"]
    fig = drawn("Fig. 1 (scale: paper)")
    save_figure(fig, tmp_path, "paper")
    assert not [t for t in fig.texts if t.get_gid()]
    assert not fig._suptitle.get_text().startswith("SMOKE")
