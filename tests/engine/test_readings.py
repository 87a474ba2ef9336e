"""Readings in the core: identity, seeds, keys, selection."""

from __future__ import annotations

import pytest

from repro.demo.experiments import DEMO
from repro.engine.experiment import CellResult, Experiment, RunContext, cell_seed, read_as
from repro.engine.readings import AS_WRITTEN, Reading
from repro.engine.records.records import record_key
from repro.engine.run.code_identity import code_hash
from repro.engine.run.runner import collect, data_sha256, plan, plan_readings, run_experiment


def _cells(scale):
    return [{"seed": s, "x": 1.0} for s in range(3)]


def _run(config, ctx: RunContext) -> CellResult:
    draw = float(ctx.rng("noise").normal())
    ctx.log_round(1, y=draw)
    return CellResult(metrics={"value": config["x"] + draw, "value_sum": 10 * config["x"]})


ALT = Reading("double", "x doubled on seed 0 only", basis="test", overrides={"x": 2.0},
              applies_to=lambda c: c["seed"] == 0)
SUMMED = Reading("summed", "value read as value_sum", metrics={"value": "value_sum"})
PRIMARY = Reading("text", "what the text says", primary=True)


def _exp(readings=()):
    return Experiment(name="toy.readings", title="toy", paper="none", cells=_cells,
                      run_cell=_run, readings=readings)


def test_no_readings_plan_is_todays_keys_and_seeds():
    shas, code = data_sha256(DEMO), code_hash(DEMO)
    planned = plan(DEMO, "smoke")
    assert [c.key for c in planned] == [record_key(DEMO.name, c, shas, code)
                                        for c in DEMO.cells("smoke")]
    assert [c.seed for c in planned] == [cell_seed(DEMO.name, c) for c in DEMO.cells("smoke")]
    assert DEMO.primary_reading is AS_WRITTEN


def test_a_reading_changes_the_key_of_only_the_cells_it_touches():
    exp = _exp((PRIMARY, ALT, SUMMED))
    base, alt, summed = plan(exp, "smoke"), plan(exp, "smoke", ALT), plan(exp, "smoke", SUMMED)
    changed = [a.key != b.key for a, b in zip(base, alt, strict=True)]
    assert changed == [True, False, False]
    assert alt[0].config == {"seed": 0, "x": 2.0}
    # seeds come from the base config: readings of one cell share their randomness
    assert [c.seed for c in alt] == [c.seed for c in base]
    # a metric reading reuses the runs: same keys
    assert [c.key for c in summed] == [c.key for c in base]
    assert len(plan_readings(exp, "smoke", "all")) == 4
    assert len(plan_readings(exp, "smoke", "primary")) == 3


def test_primary_that_changes_nothing_gives_todays_numbers(isolated):
    plain = run_experiment(_exp(), "smoke", progress=False).records
    with_readings = _exp((PRIMARY, ALT, SUMMED))
    summary = run_experiment(with_readings, "smoke", progress=False)
    assert summary.computed == 1 and summary.cached == 3  # only the touched cell is new
    primary = collect(with_readings, "smoke")
    assert [r.key for r in primary] == [r.key for r in plain]
    assert [r.metrics for r in primary] == [r.metrics for r in plain]
    assert [r.curves for r in primary] == [r.curves for r in plain]
    alt = collect(with_readings, "smoke", reading=ALT)
    assert alt[0].metrics["value"] == pytest.approx(plain[0].metrics["value"] + 1.0, abs=1e-12)
    assert [r.metrics for r in alt[1:]] == [r.metrics for r in plain[1:]]
    summed = collect(with_readings, "smoke", reading=SUMMED)
    assert [r.metrics["value"] for r in summed] == [10.0, 10.0, 10.0]


def test_reading_declarations_are_checked():
    with pytest.raises(ValueError, match="exactly one reading must be primary"):
        _exp((ALT, SUMMED))
    with pytest.raises(ValueError, match="exactly one reading must be primary"):
        _exp((PRIMARY, Reading("b", "b", primary=True)))
    with pytest.raises(ValueError, match="distinct"):
        _exp((PRIMARY, Reading("text", "again")))
    with pytest.raises(ValueError, match="has no reading 'nope'"):
        _exp((PRIMARY, ALT)).select_readings("nope")
    assert [r.id for r in _exp((ALT, PRIMARY)).select_readings("all")] == ["text", "double"]


def test_metric_reading_names_a_missing_metric():
    from repro.engine.records.records import RunRecord

    rec = RunRecord(experiment="toy.readings", config={}, key="k", seed=0, metrics={"value": 1})
    with pytest.raises(KeyError, match="value_sum"):
        read_as([rec], SUMMED)


# ---------------------------------------------------------------- compare per reading

def test_comparison_has_one_row_per_reported_row_per_reading(tmp_path):
    import csv

    from repro.engine.compare.compare import ReportedRow, compare_readings, write_comparison
    from repro.engine.experiment import Reproduced

    def reproduce(records):
        vals = tuple(r.metrics["value"] for r in records)
        return [Reproduced("toy_table", {"row": "a"}, "value", vals),
                Reproduced("toy_table", {"row": "b"}, "value", vals)]

    exp = Experiment(name="toy.table", title="toy", paper="002_fd6ea8b278c89851.txt", cells=_cells,
                     run_cell=_run, reported=("toy_table",), reproduce=reproduce,
                     readings=(PRIMARY, SUMMED))
    from repro.engine.records.records import RunRecord

    def recs(v):
        return [RunRecord(experiment="toy.table", config={"seed": s}, key=str(s), seed=s,
                          metrics={"value": v + 0.01 * s}) for s in range(3)]

    reported = [ReportedRow("toy_table", "002_fd6ea8b278c89851.txt", "T1", (("row", k),),
                            "value", "10", None) for k in ("a", "b")]
    rows = compare_readings({"toy.table": exp}, {"toy.table": ("smoke", recs(1.0))},
                            {"toy.table": {"summed": ("smoke", recs(10.0))}}, reported)
    assert len(rows) == 2 * len(reported)
    assert [(r["reading"], r["primary"], r["verdict"]) for r in rows] == [
        ("text", True, "deviates"), ("text", True, "deviates"),
        ("summed", False, "match"), ("summed", False, "match")]
    # the alternative reading that reproduces the row is its cause, with its value beside
    # the primary's (a reading no paper package declares: a guessed setting)
    assert [r["cause"] for r in rows[:2]] == ["setting guessed"] * 2
    assert rows[0]["evidence"] == ("reading summed: 10.01 (match) beside the primary's 1.01, "
                                   "printed 10")
    md, path = write_comparison(rows, tmp_path)
    with open(path) as f:
        written = list(csv.DictReader(f))
    assert len(written) == 4 and {w["reading"] for w in written} == {"text", "summed"}
    text = md.read_text()
    headline = text.split("## Readings")[0]
    assert "2 reported numbers" in headline
    assert "| 0 | 0 | 2 | 0 | 0 | 2 |" in headline  # primary counts only: both rows deviate
    assert "| toy.table | summed | no | 2 | 0 | 0 | 0 | 0 | 2 |" in text
    assert "Rows deviating under the primary reading, under each alternative" in text
    assert "(match)" in text.split("Rows deviating under the primary reading")[1]


# ---------------------------------------------------------------- honest claims

def test_ordering_claim_below_two_seed_stds_is_inconclusive():
    from repro.engine.experiment import ordering_verdict

    # margin 0.01, paired std 0.01: 0.01 < 2 x 0.01
    assert ordering_verdict([0.0, 0.01, 0.02])[0] is None
    assert ordering_verdict([0.10, 0.11, 0.12])[0] is True      # 0.11 > 2 x 0.01
    assert ordering_verdict([-0.10, -0.11, -0.12])[0] is False
    assert ordering_verdict([0.3])[0] is None                    # one seed: noise unknown
    verdict, text = ordering_verdict([0.0, 0.01, 0.02], "gap")
    assert "inconclusive" in text and "3 seeds" in text


def test_failing_and_inconclusive_claims_link_their_reason(tmp_path):
    from repro.engine.compare.compare import check_claims, write_claims
    from repro.engine.experiment import Claim
    from repro.engine.records.records import RunRecord

    claims = (Claim("always true", "nowhere", lambda r: (True, "ok")),
              Claim("always false", "nowhere", lambda r: (False, "no"),
                    deviation="docs/deviations.md#relfair-table-1-deviations"),
              Claim("noisy", "nowhere", lambda r: (None, "within noise")))
    exp = Experiment(name="relfair.toy", title="toy", paper="none", cells=_cells,
                     run_cell=_run, claims=claims)
    rec = [RunRecord(experiment="relfair.toy", config={}, key="k", seed=0, metrics={})]
    rows = check_claims({"relfair.toy": exp}, {"relfair.toy": ("smoke", rec)})
    assert [r["verdict"] for r in rows] == ["pass", "fail", "inconclusive"]
    assert rows[0]["reason"] == ""
    assert rows[1]["reason"] == "see docs/deviations.md#relfair-table-1-deviations"
    assert rows[2]["reason"].startswith("see docs/deviations.md#relfair-")
    text = write_claims(rows, tmp_path).read_text()
    assert "1 pass, 1 fail, 1 inconclusive, 0 not_run" in text
    assert "[docs/deviations.md#relfair-table-1-deviations](../docs/deviations.md#" in text


def test_run_reading_flag_selects_readings(isolated):
    from repro.cli import build_parser

    args = build_parser().parse_args(["run", "relfair.table1", "--reading", "steps"])
    assert args.reading == "steps"
    assert build_parser().parse_args(["run", "relfair.table1"]).reading == "all"
    exp = _exp((PRIMARY, ALT))
    only_alt = run_experiment(exp, "smoke", progress=False, reading="double")
    assert [r.config["x"] for r in only_alt.records] == [2.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="has no reading 'nope'; it declares text, double"):
        run_experiment(exp, "smoke", progress=False, reading="nope")
