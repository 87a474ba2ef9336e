"""Tables in three formats; figures refused without labels, saved as PNG and PDF."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from repro.engine.report.plotting import figure, save_figure
from repro.engine.report.report import Table, mean_std, write_table


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
    ax.legend()
    paths = save_figure(fig, tmp_path, "good")
    assert [p.name for p in paths] == ["good.png", "good.pdf"]
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert paths[1].read_bytes()[:5] == b"%PDF-"


# ---------------------------------------------------------------- measured cells: ours (paper)

def test_measured_cells_show_ours_beside_the_paper_and_csv_is_numeric(tmp_path):
    from repro.engine.report.report import Measured

    t = Table("T", ["method", "acc", "note"])
    t.add("A", Measured((0.8, 0.9, 1.0), "0.85", "0.01", digits=2), "x")
    t.add("B", Measured((0.5,), None, digits=3), "y")
    t.add("C", "not run", "z")
    md, csv_text, tex = (p.read_text() for p in write_table(t, tmp_path, "m"))
    assert "| A | 0.900 ± 0.100 (0.85 ± 0.01) | x |" in md
    assert "| B | 0.500 (—) | y |" in md
    assert "ours (paper)" in md and "ours (paper)" in tex and r"(---)" in tex
    rows = list(csv.reader(io.StringIO(csv_text)))
    assert rows[0] == ["method", "acc mean", "acc std", "acc n", "acc paper", "acc paper std",
                       "note"]
    assert [float(v) for v in rows[1][1:6]] == pytest.approx([0.9, 0.1, 3, 0.85, 0.01],
                                                             abs=1e-12)
    assert rows[2][1:6] == ["0.5", "", "1", "", ""]
    assert rows[3][1:6] == ["", "", "", "", ""]
    assert "±" not in csv_text


def test_paper_values_look_up_one_reported_row():
    from repro.engine.report.report import paper_values

    conf = paper_values("fairvfl_conf_table1")
    assert conf.get("AC_pct", dataset="adult", method="FedBCD", epsilon="") == ("83.0", "0.0")
    assert conf.get("AC_pct", dataset="adult", method="nosuch") is None
    with pytest.raises(ValueError, match="3 reported rows match"):
        conf.get("AC_pct", method="FedBCD")
    cell = paper_values("relfair_table1").measured([0.9], "acc_all", 4, task="MNIST",
                                                   method="FedAvg")
    assert str(cell) == "0.90000 (0.7080)"  # printed to 4 decimals: ours to 5
    with pytest.raises(ValueError, match="no reported values for table 'nosuch'"):
        paper_values("nosuch")


def test_papers_are_named_by_title_and_year():
    from repro.engine.report.report import known_papers, paper_name, papers_of

    PAPERS = known_papers()  # declared by the paper packages, none listed by the engine

    assert paper_name("003_733a787503856876.txt") == (
        "Federated Learning with Convex Global and Local Constraints (2024)")
    assert paper_name("004") == ("FedMM: Saddle Point Optimization for Federated Adversarial "
                                 "Domain Adaptation (2022)")
    assert [p.file_id for p in papers_of("fairvfl")] == ["000", "001"]
    assert len({p.name for p in PAPERS}) == 5  # the two fairvfl versions differ by version
    # every reported row's paper file has a name
    from repro.engine.compare.compare import load_reported

    assert {paper_name(r.paper_file) for r in load_reported()} == {p.name for p in PAPERS}
    with pytest.raises(ValueError, match="names no paper"):
        paper_name("009_x.txt")


def test_smoke_verdicts_carry_a_banner_in_comparison_and_report(tmp_path):
    from repro.engine.compare.compare import write_comparison
    from repro.engine.report.overview import write_overview
    from repro.engine.report.report import smoke_banner

    def row(exp, scale, verdict="match"):
        return {"experiment": exp, "paper_file": "003_733a787503856876.txt", "table": "1",
                "key": "k", "metric": "m", "reported": "0.5", "reported_std": "",
                "reproduced": 0.5, "reproduced_std": "", "n_seeds": 1, "tolerance": 0.01,
                "verdict": verdict, "reason": "", "scale": scale}

    paper = [row("constrfl.table1", "paper"), row("constrfl.table2", "reduced")]
    assert smoke_banner(paper) == ""
    assert smoke_banner([row("constrfl.table1", "smoke", "not_run")]) == ""  # nothing judged
    mixed = [*paper, row("constrfl.table3", "smoke")]
    assert "1 experiment (constrfl.table3)" in smoke_banner(mixed)
    smoke = [row("constrfl.table1", "smoke")]
    banner = smoke_banner(smoke)
    assert banner.startswith("**SMOKE SCALE: these verdicts are not the reproduction.**")
    assert "every experiment judged here" in banner
    md = write_comparison(smoke, tmp_path)[0].read_text()
    assert md.splitlines()[2] == banner  # right under the title
    assert "SMOKE" not in write_comparison(paper, tmp_path / "p")[0].read_text()
    report = write_overview({}, {}, smoke, [], tmp_path).read_text()
    assert report.splitlines()[2] == banner
    assert "Reproduces: Federated Learning with Convex Global and Local Constraints (2024)." \
        in report
