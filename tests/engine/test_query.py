"""The one records query of the engine: where / by / values / per_seed / mean / std."""

from __future__ import annotations

import math

import numpy as np
import pytest

from repro.engine.experiment import Reproduced
from repro.engine.records import query as q
from repro.engine.records.records import RunRecord


def _rec(method, dataset, seed, acc, status="ok", **extra):
    return RunRecord(experiment="x.t1", config={"method": method, "dataset": dataset,
                                                "seed": seed, **extra},
                     key=f"{method}-{dataset}-{seed}", seed=seed, status=status,
                     metrics={} if status != "ok" else {"acc": acc},
                     curves={"loss": [3.0, 2.0, acc]})


RECS = [_rec("A", "adult", 0, 0.80), _rec("B", "adult", 0, 0.70), _rec("A", "adult", 1, 0.82),
        _rec("A", "crime", 0, 0.60, n=5), _rec("B", "adult", 1, 0.0, status="failed"),
        _rec("B", "adult", 2, 0.74)]


def test_where_selects_by_config_and_skips_failed_records():
    assert [r.key for r in q.where(RECS, method="A", dataset="adult")] == ["A-adult-0",
                                                                           "A-adult-1"]
    assert [r.key for r in q.where(RECS, method="B")] == ["B-adult-0", "B-adult-2"]
    assert len(q.where(RECS, method="B", ok_only=False)) == 3
    assert [r.key for r in q.where(RECS, n=5)] == ["A-crime-0"]  # others lack `n`
    assert [r.key for r in q.where(RECS, seed=lambda s: s > 0)] == ["A-adult-1", "B-adult-2"]
    assert q.where(RECS) == [r for r in RECS if r.ok]


def test_by_groups_in_order_of_first_appearance():
    groups = q.by(RECS, "dataset", "method")
    assert list(groups) == [("adult", "A"), ("adult", "B"), ("crime", "A")]
    assert [r.seed for r in groups[("adult", "B")]] == [0, 2]
    assert list(q.by(RECS, "method")) == [("A",), ("B",)]
    with pytest.raises(KeyError, match="'n'"):
        q.by(RECS, "n")
    with pytest.raises(ValueError):
        q.by(RECS)


def test_values_mean_std_match_seedvalues():
    adult_a = q.where(RECS, method="A", dataset="adult")
    assert q.values(adult_a, "acc") == (0.80, 0.82)
    assert q.values(adult_a, lambda r: r.curves["loss"][0]) == (3.0, 3.0)
    rep = Reproduced("t", {}, "acc", (0.80, 0.82))
    assert q.mean(adult_a, "acc") == rep.mean == float(np.mean([0.80, 0.82]))
    assert q.std(adult_a, "acc") == rep.std
    assert math.isnan(q.std(adult_a[:1], "acc")) and math.isnan(q.mean([], "acc"))
    with pytest.raises(KeyError, match="no metric 'f1'"):
        q.values(adult_a, "f1")


def test_per_seed_maps_seed_to_value_and_refuses_mixed_cells():
    assert q.per_seed(q.where(RECS, method="B"), "acc") == {0: 0.70, 2: 0.74}
    with pytest.raises(ValueError, match="several records"):
        q.per_seed(RECS, "acc")


def test_a_grouped_table_in_one_expression():
    table = {k: (q.mean(v, "acc"), len(v)) for k, v in q.by(RECS, "method").items()}
    assert table == {("A",): (pytest.approx(0.74), 3), ("B",): (pytest.approx(0.72), 2)}
