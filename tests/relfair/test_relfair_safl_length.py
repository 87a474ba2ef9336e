"""The SAFL run-length search: declared cells (Table 1's SAFL cells but for the rounds) and rows."""

from __future__ import annotations

import pytest

from repro.engine.registry import load_all
from repro.engine.run.code_identity import code_hash
from repro.relfair.experiments._cells import METRICS
from repro.relfair.experiments.safl_length import LENGTH, SETTINGS, length_cells, length_rows


def test_the_cells_are_table1s_safl_cells_but_for_the_rounds():
    exps = load_all()
    table1 = [c for c in exps["relfair.table1"].cells("paper")
              if c["method"] == "SAFL" and c["task"] == "MNIST"]
    cells = length_cells("paper")
    assert len(cells) == 6 and len(table1) == 3
    assert sorted((c["setting"], c["seed"], c["rounds"]) for c in cells) == [
        ("safl-rounds-1500", s, 1500) for s in (0, 1, 2)] + [
        ("safl-rounds-500", s, 500) for s in (0, 1, 2)]
    skip = {"setting", "rounds", "eval_every"}
    for c in cells:
        twin = next(t for t in table1 if t["seed"] == c["seed"])
        assert {k: v for k, v in c.items() if k not in skip} == {
            k: v for k, v in twin.items() if k not in skip}
        assert twin["rounds"] == 100 and c["rounds"] // c["eval_every"] == 10
    # the same cell code as Table 1: its records are made by the same code identity
    assert code_hash(exps["relfair.safl_length"]) == code_hash(exps["relfair.table1"])
    assert LENGTH.labels == tuple(SETTINGS) and LENGTH.target == "relfair.table1"


def test_rows_are_safls_rows_one_value_per_seed():
    class R:
        def __init__(self, setting, seed):
            self.config = {"setting": setting, "seed": seed}
            self.ok = True
            self.metrics = {m: seed + 0.5 for m in METRICS}
    recs = [R("safl-rounds-500", s) for s in (2, 0, 1)] + [R("safl-rounds-1500", 0)]
    failed = R("safl-rounds-1500", 1)
    failed.ok = False                # a failed run is no value of the row
    recs.append(failed)
    rows = length_rows(recs)
    assert len(rows) == 2 * len(METRICS)
    r = next(row for label, row in rows if label == "safl-rounds-500" and row.metric == "acc_all")
    assert r.values == (0.5, 1.5, 2.5) and r.key == {"task": "MNIST", "method": "SAFL"}
    assert r.n_paper == 1
    assert {label for label, _ in rows} == set(SETTINGS)
    r = next(row for label, row in rows if label == "safl-rounds-1500" and row.metric == "R_AB")
    assert r.values == (0.5,)


@pytest.mark.parametrize("scale", ["smoke"])
def test_smoke_cells_are_short(scale):
    cells = length_cells(scale)
    assert [c["rounds"] for c in cells] == [20, 60] and all(c["seed"] == 0 for c in cells)


def test_the_search_tables_name_each_setting_as_a_word(tmp_path):
    from repro.relfair.experiments.render import fedavg_search_render, safl_length_render

    class R:
        ok = True

        def __init__(self, setting, seed=0, rounds=50):
            self.config = {"setting": setting, "seed": seed, "rounds": rounds}
            self.metrics = {m: 0.5 for m in METRICS}
    fedavg_search_render([R("search-baseline"), R("search-no-cap")], tmp_path, "paper")
    safl_length_render([R("safl-rounds-500", 1, 500)], tmp_path, "paper")
    fedavg = (tmp_path / "relfair_fedavg_search.md").read_text()
    safl = (tmp_path / "relfair_safl_length.md").read_text()
    assert "| search-baseline | 50 |" in fedavg and "('" not in fedavg
    assert "| safl-rounds-500 | 500 | 1 |" in safl
