"""Readings in the core (issue #15 item 1): identity, seeds, keys, selection."""

from __future__ import annotations

import pytest

from repro.core.code_identity import code_hash
from repro.core.demo import DEMO
from repro.core.experiment import CellResult, Experiment, RunContext, cell_seed, read_as
from repro.core.readings import AS_WRITTEN, Reading
from repro.core.records import record_key
from repro.core.runner import collect, data_sha256, plan, plan_readings, run_experiment


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
    from repro.core.records import RunRecord

    rec = RunRecord(experiment="toy.readings", config={}, key="k", seed=0, metrics={"value": 1})
    with pytest.raises(KeyError, match="value_sum"):
        read_as([rec], SUMMED)
