"""The ADMM-cap diagnostic: Table 2's script-set cells with T <= 300, Table 2's rows."""

from __future__ import annotations

from repro.constrfl.experiments.admm_cap import CAP, cap_cells, cap_rows
from repro.engine.registry import load_all
from repro.engine.run.code_identity import code_hash


def test_the_cells_are_table2s_primary_cells_but_for_the_cap():
    exps = load_all()
    primary = [c for c in exps["constrfl.table2"].cells("paper") if c["hyper"] == "script"]
    cells = cap_cells("paper")
    assert len(cells) == len(primary) == 40
    assert {(c["n"], c["trial"]) for c in cells} == {(c["n"], c["trial"]) for c in primary}
    assert all(c["t_max"] == 300 and c["ref_flags"] == "fairness" and c["k_max"] == 300
               and c["subsample"] == 0 for c in cells)
    assert {c["t_max"] for c in primary} == {50}
    assert code_hash(exps["constrfl.admm_cap"]) == code_hash(exps["constrfl.table2"])
    assert CAP.labels == ("admm-cap-300",) and CAP.target == "constrfl.table2"


def test_rows_are_table2s_rows_under_one_label():
    class R:
        ok = True

        def __init__(self, trial):
            self.config = {"n": 10, "hyper": "script", "trial": trial, "k_max": 300,
                           "subsample": 0, "t_max": 300}
            self.metrics = {"alg1_stop_code": 0.0, "alg1_certified_stop": 1.0}
            self.curves = {"alg1_obj": [0.38] * 10, "cprox_obj": [0.38] * 10,
                           "rel_diff": [0.001 * trial] * 10, "alg1_disp": [0.08] * 11,
                           "cprox_disp": [0.08] * 11}
    rows = cap_rows([R(t) for t in range(1, 11)])
    assert {label for label, _ in rows} == {"admm-cap-300"}
    rel = [r for _, r in rows if r.metric == "relative_difference"]
    assert len(rel) == 1 and len(rel[0].values) == 10
    assert max(abs(v - 0.001 * t) for v, t in zip(rel[0].values, range(1, 11), strict=True)) < 1e-15
