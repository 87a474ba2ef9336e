"""The adult-b 39th-feature search: its data, its cell (Table 2's, unchanged) and its rows."""

from __future__ import annotations

import numpy as np
import pytest

from repro.constrfl.data import adult_b
from repro.constrfl.experiments import _fair
from repro.constrfl.experiments._feature39 import EXTRA, adult_b_39, run_cell
from repro.constrfl.experiments.adult_b_feature import FEATURE, feature_cells, feature_rows
from repro.core.data.adult import load_adult
from repro.engine.registry import load_all
from repro.engine.run.code_identity import code_files


class _Ctx:
    def log_round(self, *a, **k):
        pass


@pytest.mark.parametrize("extra", EXTRA)
def test_the_candidate_column_sits_before_sex_and_the_38_are_unchanged(extra):
    X, y, names = adult_b("test")
    X9, y9, names9 = adult_b_39("test", extra)
    assert X9.shape == (X.shape[0], 39) and X.shape[1] == 38
    assert np.array_equal(X9[:, :37], X[:, :37]) and np.array_equal(X9[:, 38], X[:, 37])
    assert np.array_equal(y9, y) and names9[37] == extra and names9[38] == names[37] == "sex"
    v = X9[:, 37]
    assert abs(v.mean()) < 1e-10 and abs(v.std() - 1) < 1e-10
    if extra != "education":   # the raw numbers, z-scored (the rebuild keeps only "> 0")
        ds = load_adult("test")
        keep = ~np.any(ds.X == "?", axis=1)
        raw = ds.X[keep][:, list(ds.feature_names).index(extra)].astype(float)
        assert np.allclose(v, (raw - raw.mean()) / raw.std(), rtol=0, atol=1e-12)
        assert len(np.unique(v)) > 2


def test_an_unknown_candidate_is_refused():
    with pytest.raises(ValueError, match="capital-gain"):
        adult_b_39("train", "age")


def test_the_cell_runs_table2s_code_on_39_features_and_restores_it():
    saved = _fair.adult_b, _fair.fair_problem
    config = feature_cells("smoke")[0]
    res = run_cell(config, _Ctx())
    assert res.metrics["d"] == 39.0
    assert (_fair.adult_b, _fair.fair_problem) == saved
    # Table 2's own cell in the same process still sees the rebuilt 38 features
    table2 = {k: v for k, v in config.items() if k != "feature39"}
    assert _fair.run_cell(table2, _Ctx()).metrics["d"] == 38.0
    # and the data really differ: the objective moves
    assert res.curves["cprox_obj"] != _fair.run_cell(table2, _Ctx()).curves["cprox_obj"]


def test_the_swap_is_undone_when_the_cell_raises():
    saved = _fair.adult_b, _fair.fair_problem
    with pytest.raises(KeyError):
        run_cell({"feature39": "capital-gain"}, _Ctx())   # no "hyper": Table 2's cell raises
    assert (_fair.adult_b, _fair.fair_problem) == saved


def test_the_search_is_declared_before_any_run_and_table2_records_stay_current():
    cells = feature_cells("paper")
    assert len(cells) == 120
    assert {c["feature39"] for c in cells} == set(EXTRA)
    assert {(c["n"], c["trial"]) for c in cells} == {(n, t) for n in (1, 5, 10, 20)
                                                      for t in range(1, 11)}
    assert all(c["hyper"] == "script" and c["ref_flags"] == "fairness" and c["k_max"] == 300
               for c in cells)
    assert FEATURE.labels == tuple(f"feature39-{e}" for e in EXTRA)
    exps = load_all()
    closure = {p.name for p in code_files(exps["constrfl.table2"])}
    assert "_feature39.py" not in closure and "_fair.py" in closure
    assert "_fair.py" in {p.name for p in code_files(exps["constrfl.adult_b_feature"])}


def test_rows_are_table2s_rows_per_candidate():
    class R:
        def __init__(self, extra, trial, obj):
            self.config = {"feature39": extra, "n": 1, "hyper": "script", "trial": trial,
                           "k_max": 300, "subsample": 0}
            self.metrics = {"alg1_stop_code": 0.0, "alg1_certified_stop": 1.0}
            self.curves = {"alg1_obj": [obj], "cprox_obj": [obj], "rel_diff": [0.0],
                           "alg1_disp": [0.1, 0.1], "cprox_disp": [0.1, 0.1]}
    recs = [R("capital-gain", t, 0.36) for t in range(1, 11)] + [R("education", 1, 0.377)]
    rows = feature_rows(recs)
    labels = {label for label, _ in rows}
    assert labels == {"feature39-capital-gain", "feature39-education"}
    obj = [r for label, r in rows if label == "feature39-capital-gain"
           and r.metric == "objective" and r.key["method"] == "cProx-AL"]
    assert len(obj) == 1 and obj[0].values == (0.36,) * 10
