"""Tables in three formats; figures refused without labels, saved as PNG and PDF."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from repro.core.plotting import figure, save_figure
from repro.core.report import Table, mean_std, write_table


def test_table_three_formats(tmp_path):
    t = Table("Demo_1 & co", ["method", "acc"], caption="50% of runs")
    t.add("FedAvg", "0.85 ± 0.01")
    t.add("a|b", 1.5)
    paths = write_table(t, tmp_path, "demo")
    assert [p.suffix for p in paths] == [".md", ".csv", ".tex"]
    md = paths[0].read_text()
    assert "| FedAvg | 0.85 ± 0.01 |" in md and r"a\|b" in md
    rows = list(csv.reader(io.StringIO(paths[1].read_text())))
    assert rows == [["method", "acc"], ["FedAvg", "0.85 ± 0.01"], ["a|b", "1.5"]]
    tex = paths[2].read_text()
    assert r"Demo\_1 \& co. 50\% of runs" in tex and r"0.85 $\pm$ 0.01" in tex
    with pytest.raises(ValueError, match="3 cells, table has 2 columns"):
        t.add(1, 2, 3)


def test_mean_std_uses_sample_std():
    assert mean_std([1.0, 2.0, 3.0], 3) == "2.000 ± 1.000"
    assert mean_std([0.5]) == "0.5000"
    assert mean_std([]) == "not run"


def test_figures_need_labels_and_are_saved_twice(tmp_path):
    fig, ax = figure()
    ax.plot(np.arange(3), label="a")
    ax.plot(np.arange(3), label="b")
    with pytest.raises(ValueError, match="x and y labels"):
        save_figure(fig, tmp_path, "bad")
    ax.set_xlabel("round")
    ax.set_ylabel("loss")
    with pytest.raises(ValueError, match="title"):
        save_figure(fig, tmp_path, "bad")
    ax.set_title("t")
    with pytest.raises(ValueError, match="needs a legend"):
        save_figure(fig, tmp_path, "bad")
    ax.legend()
    paths = save_figure(fig, tmp_path, "good")
    assert [p.name for p in paths] == ["good.png", "good.pdf"]
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert paths[1].read_bytes()[:5] == b"%PDF-"
