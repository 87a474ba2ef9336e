"""The readings of the Fair VFL tables: declared with their basis, every metric
reading reads metrics a real record carries, and only the T reading reruns cells.
"""

from __future__ import annotations

import pytest

from repro.engine.experiment import RunContext
from repro.engine.readings import Reading
from repro.engine.records.records import RunRecord
from repro.engine.registry import get
from repro.engine.run.runner import plan, read_records
from repro.fairvfl.experiments._cells import journal_lm_cells
from repro.fairvfl.experiments._readings import (
    CONF_TABLE_READINGS,
    JOURNAL_LM_READINGS,
    JOURNAL_MLP_READINGS,
    T2000,
    T10000,
)
from repro.fairvfl.experiments._run import run_cell

TABLES = {"fairvfl.conf_table1": CONF_TABLE_READINGS,
          "fairvfl.journal_table1": JOURNAL_LM_READINGS,
          "fairvfl.journal_table2": JOURNAL_MLP_READINGS}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_each_table_declares_its_readings_with_a_basis(name):
    exp = get(name)
    assert exp.readings == TABLES[name]
    assert [r.id for r in exp.readings if r.primary] == ["as-specified"]
    for r in exp.readings:
        assert r.basis and r.spec.startswith("fairvfl-") and r.title
        assert bool(r.metrics) + bool(r.overrides) == (0 if r.primary else 1)
    # the post-processing readings (5, the public EO code among them), the run lengths, and
    # for the LM tables FedBCD at its optimum with the spec's ridge and a 10^4 x weaker one
    counts = {"fairvfl.conf_table1": 9, "fairvfl.journal_table1": 13,
              "fairvfl.journal_table2": 10}
    assert len(exp.readings) == counts[name]


@pytest.fixture(scope="module")
def smoke_records():
    """One FedBCD and one FairVFL record of a real (short) [J] LM cell on COMPAS."""
    out = []
    for c in journal_lm_cells("smoke", seeds=(0,)):
        if c["dataset"] == "compas" and c["eps"] in (None, 0.1):
            c = {**c, "T": 20}
            res = run_cell(c, RunContext("fairvfl.journal_table1", c, 0))
            out.append(RunRecord(experiment="fairvfl.journal_table1", config=c,
                                 key=c["method"], seed=0, metrics=res.metrics))
    assert sorted(r.config["method"] for r in out) == ["FairVFL", "FedBCD"]
    return out


@pytest.mark.parametrize("reading", [r for r in JOURNAL_LM_READINGS if r.metrics],
                         ids=lambda r: r.id)
def test_a_metric_reading_reads_metrics_the_records_carry(reading, smoke_records):
    fed = next(r for r in smoke_records if r.config["method"] == "FedBCD")
    fair = next(r for r in smoke_records if r.config["method"] == "FairVFL")
    assert set(reading.metrics) <= set(fed.metrics)  # FedBCD carries every reported metric
    assert set(reading.metrics.values()) <= set(fed.metrics)
    post = {k for k in reading.metrics if k.startswith(("eo_", "ceo_"))}
    assert not post & set(fair.metrics)  # FairVFL has no post-processed metrics
    got = read_records(smoke_records, reading)
    for before, after in zip(smoke_records, got, strict=True):
        for k, v in reading.metrics.items():
            if k in before.metrics:
                assert after.metrics[k] == before.metrics[v]
        untouched = set(before.metrics) - set(reading.metrics)
        assert all(after.metrics[k] == before.metrics[k] for k in untouched)
    assert all(k != v for k, v in reading.metrics.items())
    changed = [k for k, v in reading.metrics.items() if fed.metrics[k] != fed.metrics[v]]
    if not reading.id.startswith("ceo"):  # CEO's two costs may clip to the same mix at T = 20
        assert changed, f"{reading.id} reads the same numbers as the primary on this record"


def test_a_record_with_a_reported_metric_but_not_its_stand_in_is_an_error():
    rec = RunRecord(experiment="x.y", config={}, key="k", seed=0, metrics={"eo_acc": 0.8})
    bad = Reading("bad", "b", metrics={"eo_acc": "eo_opp_acc"})
    with pytest.raises(KeyError, match="eo_opp_acc"):
        read_records([rec], bad)
    other = RunRecord(experiment="x.y", config={}, key="k", seed=0, metrics={"acc": 0.8})
    assert read_records([other], bad)[0].metrics == {"acc": 0.8}


def test_only_the_t_readings_rerun_and_only_their_table_cells():
    j1, j2, c1 = (get(n) for n in ("fairvfl.journal_table1", "fairvfl.journal_table2",
                                   "fairvfl.conf_table1"))
    primary = {c.key for c in plan(j1, "paper")}
    t2000 = plan(j1, "paper", T2000)
    assert len(t2000) == 90 and not primary & {c.key for c in t2000}
    assert {c.config["T"] for c in t2000} == {2000}
    assert [c.seed for c in t2000] == [c.seed for c in plan(j1, "paper")]  # paired seeds
    for exp in (j1, j2, c1):
        for r in exp.readings:
            if not r.overrides:
                assert [c.key for c in plan(exp, "paper", r)] == [c.key for c in
                                                                  plan(exp, "paper")]
    for c in j2.configs("paper") + c1.configs("paper"):
        assert T2000.apply(c) == c
    t10000 = plan(c1, "paper", T10000)
    assert len(t10000) == 30 and {c.config["T"] for c in t10000} == {10_000}
    assert not {c.key for c in t10000} & {c.key for c in plan(c1, "paper")}
    for c in j1.configs("paper") + j2.configs("paper"):
        assert T10000.apply(c) == c
