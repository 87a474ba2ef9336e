"""The NP-script diagnostic: Table 1's cell in the reference mode, Table 1's rows of that mode."""

from __future__ import annotations

from repro.constrfl.experiments.np_script import SCRIPT, script_cells, script_rows
from repro.constrfl.experiments.reproduce import table1
from repro.engine.registry import load_all
from repro.engine.run.code_identity import code_hash


class _Rec:
    ok = True

    def __init__(self, mode, trial, rel):
        self.config = {"dataset": "monks-1", "n": 5, "mode": mode, "trial": trial,
                       "k_max": 100, "t_max": 300}
        self.metrics = {"alg1_stopped": 0.0, "admm_certified_fraction": 1.0}
        self.curves = {"alg1_obj": [0.3] * 5, "cprox_obj": [0.3] * 5, "rel_diff": [rel] * 5,
                       "alg1_feas": [0.6] * 5, "cprox_feas": [0.6] * 5}


def test_the_declared_cells_are_table1s_in_the_reference_mode():
    cells = script_cells("paper")
    assert [(c["dataset"], c["n"]) for c in cells] == [
        ("breast-cancer-wisc", 1), ("breast-cancer-wisc", 5), ("breast-cancer-wisc", 10),
        ("breast-cancer-wisc", 20), ("monks-1", 1), ("monks-1", 5), ("monks-1", 10)]
    assert all(c["mode"] == "reference" and c["trial"] == 0 and (c["k_max"], c["t_max"])
               == (100, 300) for c in cells)
    exps = load_all()
    table = {(c["dataset"], c["n"], c["trial"]) for c in exps["constrfl.table1"].cells("paper")}
    assert {(c["dataset"], c["n"], c["trial"]) for c in cells} <= table
    # Table 1's cell code, unchanged: the same code identity as Table 1's records
    assert code_hash(exps["constrfl.np_script"]) == code_hash(exps["constrfl.table1"])
    assert SCRIPT.cause == "authors' code differs" and SCRIPT.target == "constrfl.table1"


def test_rows_come_from_the_reference_records_only():
    recs = [_Rec("reference", 0, 0.03), _Rec("paper", 0, 1e-6)]
    rows = script_rows(recs)
    rel = [r for label, r in rows if r.metric == "relative_difference"]
    assert {label for label, _ in rows} == {"np-script"}
    assert len(rel) == 1 and rel[0].values == (0.03,)
    # the substitute-data rows (objective, feasibility) can never be evidence: left out
    assert len(rows) == 1
    assert {r.metric for r in table1(recs, mode="reference")} > {"relative_difference"}
    paper = [r for r in table1(recs) if r.metric == "relative_difference"]
    assert len(paper) == 1 and paper[0].values == (1e-6,)
