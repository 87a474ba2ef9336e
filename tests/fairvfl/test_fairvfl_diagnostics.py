"""The registered majority-vs-EO diagnostic (issue #16 item 3, first bullet)."""

from __future__ import annotations

import numpy as np
import pytest

from repro.engine.compare import load_reported
from repro.fairvfl.diagnostics import DIAGNOSTICS, majority_accuracy, majority_vs_eo
from repro.fairvfl.eo import eo_program, solve_eo_program


def test_adult_majority_rate_against_the_table_counts_and_j_eo():
    maj = majority_accuracy("adult", range(5))
    # every split holds all 45,222 rows, 11,208 of them > 50K (specs/fairvfl.md §5.1): the
    # majority label (<= 50K) is right on 34,014 rows whichever way the rows are split
    for tr, te in zip(maj["train_pct"], maj["test_pct"], strict=True):
        assert abs((40_000 * tr + 5_222 * te) / 45_222 - 100 * 34_014 / 45_222) <= 1e-9
    out = majority_vs_eo(load_reported(), ["adult"])["adult"]
    assert out["J_table1_LM"] == 73.23 and out["C_tableI_LM"] == 79.2
    assert abs(out["C_minus_J_table1"] - 5.97) <= 1e-9
    # [J]'s EO is below the majority rate on the test and on the training splits (by ~2 pt)
    assert out["J_table1_minus_majority"] < -1.5
    assert out["J_table1_minus_majority_train"] < -1.5
    assert DIAGNOSTICS["fairvfl.majority_vs_eo"].function is majority_vs_eo


@pytest.mark.parametrize("seed", range(5))
def test_eo_optimum_is_never_worse_than_the_constant_classifiers(seed):
    """The reason behind the diagnostic: the constant classifiers (p = 0 or p = 1) satisfy
    equalized odds, so the LP's training error is at most min(P, N) / n.
    """
    rng = np.random.default_rng(seed)
    n = 500
    s = rng.random(n) < 0.3
    Y = (rng.random(n) < 0.25).astype(int)
    yhat = (rng.random(n) < np.where(Y == 1, 0.5 + 0.3 * s, 0.1)).astype(int)
    prog = eo_program(yhat, Y, s, "odds")
    _, err = solve_eo_program(prog)
    assert err <= min(Y.mean(), 1 - Y.mean()) + 1e-12
    for p in (np.zeros(4), np.ones(4)):
        assert np.max(np.abs(prog.A_eq @ p)) <= 1e-15
        assert abs(prog.constant + prog.c @ p - (Y.mean() if p[0] == 0 else 1 - Y.mean())) \
            <= 1e-12


def test_reading_counts_on_planted_records():
    """Records that carry [J]'s printed Crime values under the primary reading, +0.04 under the
    swapped one (inside +-0.05) and +0.06 under the others (outside).
    """
    from types import SimpleNamespace

    from repro.fairvfl.diagnostics import dfpdfn_reading_counts

    rows = [r for r in load_reported() if r.stem == "fairvfl_journal_table1"
            and r.metric in ("DFP", "DFN") and dict(r.key)["dataset"] == "crime"]
    printed = {(dict(r.key)["method"], dict(r.key)["epsilon"], r.metric): r.value for r in rows}
    shift = {"": 0.0, "_swap": 0.04, "_joint": 0.06, "_score1": 0.06, "_score0": 0.06}

    def metrics(pairs):
        m = {}
        for prefix, label, eps in pairs:
            for metric in ("DFP", "DFN"):
                for tail, d in shift.items():
                    m[f"{prefix}{metric.lower()}{tail}"] = printed[(label, eps, metric)] + d
        return m

    recs = [SimpleNamespace(ok=True, config={"dataset": "crime", "method": "FedBCD"},
                            metrics=metrics([("", "FedBCD", ""), ("eo_", "FedBCD + EO", ""),
                                             ("ceo_", "FedBCD + CEO", "")]))]
    for eps in sorted({e for (lab, e, _) in printed if lab == "FairVFL"}):
        recs.append(SimpleNamespace(ok=True, config={"dataset": "crime", "method": "FairVFL",
                                                     "eps": float(eps)},
                                    metrics=metrics([("", "FairVFL", eps)])))
    out = dfpdfn_reading_counts(recs, load_reported())
    r = out["readings"]
    assert out["missing"] == 32  # ADULT and COMPAS rows have no record here
    assert r["dfpdfn_conditional"]["fit"] == r["dfpdfn_swapped"]["fit"] == 16
    for rid in ("dfpdfn_joint", "dfpdfn_score_label1", "dfpdfn_score_label0"):
        assert r[rid]["fit"] == 0 and r[rid]["rows"] == 16
