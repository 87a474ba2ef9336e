"""REPORT.md: per-paper counts of verdicts, claims, theory checks, outputs and compute time."""

from __future__ import annotations

import json

from repro.engine.experiment import CellResult, Experiment
from repro.engine.records.records import RunRecord
from repro.engine.report.overview import write_overview


def test_overview_counts(tmp_path):
    exp = Experiment(name="constrfl.table4", title="QP", paper="003",
                     cells=lambda s: [{"t": i} for i in range(3)],
                     run_cell=lambda c, ctx: CellResult({}))
    recs = [RunRecord("constrfl.table4", {"t": i}, f"k{i}", i, timings={"wall_s": 61.0})
            for i in range(2)]
    comparison = [{"experiment": "constrfl.table4", "verdict": v, "table": "4",
                   "cause": "setting guessed" if v == "deviates" else ""}
                  for v in ["match", "match", "deviates"]] + [
        {"experiment": "relfair.table1", "verdict": "not_run"}]
    claims = [{"experiment": "constrfl.table4", "verdict": "pass"},
              {"experiment": "constrfl.table4", "verdict": "fail"}]
    (tmp_path / "theory.json").write_text(json.dumps({"checks": [
        {"name": "constrfl.firm", "passed": True}, {"name": "constrfl.rate", "passed": False},
        {"name": "constrfl.mu_range", "passed": True, "verdict": "finding"},
        {"name": "projections.simplex", "passed": True}]}))
    for ext in ("md", "csv", "tex"):
        (tmp_path / f"constrfl_table4.{ext}").write_text("x")
    path = write_overview({exp.name: exp}, {exp.name: ("paper", recs)}, comparison, claims,
                          tmp_path)
    text = path.read_text()
    # the finding counts apart from pass and fail
    # the causes of the deviating rows beside the verdict counts, per paper and per table
    assert ("| constrfl | 1 | 2 | 0 | 1 | 0 | 0 | setting guessed 1 | 1 / 1 / 0 | 1 / 1 / 1 "
            "| 2m02s |") in text
    assert "| relfair | 0 | 0 | 0 | 0 | 0 | 1 | none | 0 / 0 / 0 | 0 / 0 / 0 | 0m00s |" in text
    assert "| 4 | 2 | 0 | 1 | 0 | 0 | 1 |" in text
    assert "| core" not in text  # core not listed
    assert "[tex](constrfl_table4.tex)" in text
    # 2 of the 3 cells (a quarantined record, say): the missing one is said
    assert ("**constrfl.table4** (scale: paper): QP; 2 of 3 cells recorded, 1 without a record"
            in text)


def test_overview_links_bench_only_when_written(tmp_path):
    exp = Experiment(name="constrfl.table4", title="QP", paper="003",
                     cells=lambda s: [{"t": 0}], run_cell=lambda c, ctx: CellResult({}))
    text = write_overview({exp.name: exp}, {}, [], [], tmp_path).read_text()
    assert "bench.md" not in text
    (tmp_path / "bench.md").write_text("# Benchmarks\n")
    text = write_overview({exp.name: exp}, {}, [], [], tmp_path).read_text()
    assert "[bench.md](bench.md)" in text
