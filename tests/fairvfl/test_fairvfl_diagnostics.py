"""The registered majority-vs-EO diagnostic."""

from __future__ import annotations

import numpy as np
import pytest

from repro.engine.compare.compare import load_reported
from repro.fairvfl.diagnostics import majority_accuracy, majority_vs_eo
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
    shift = {"": 0.0, "_cond": 0.0, "_swap": 0.04, "_joint": 0.06, "_score1": 0.06,
             "_score0": 0.06}

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


def test_printed_adult_accuracy_offsets_and_costs():
    from repro.fairvfl.diagnostics import printed_adult_accuracy

    out = printed_adult_accuracy(load_reported())
    t1, t2 = out["J_table1_LM"], out["J_table2_MLP"]
    assert abs(t1["fairvfl05_minus_fedbcd"] + 1.98) <= 1e-9  # 83.08 - 85.06
    assert abs(t2["fairvfl05_minus_fedbcd"] + 2.40) <= 1e-9  # 83.15 - 85.55
    cost = [*t1["cost_vs_fairvfl05"].values(), *t2["cost_vs_fairvfl05"].values()]
    assert abs(min(cost) - 0.31) <= 1e-9 and abs(max(cost) - 1.67) <= 1e-9
    assert set(t1["cost_vs_fairvfl05"]) == {"0.001", "0.01", "0.05", "0.1"}


def test_whole_group_reading_gradient_and_value():
    """The rejected reading's D is the group loss difference over whole groups, and the [J](12)
    message w(lam) * o is the gradient of its Lagrangian in z (finite differences).
    """
    from repro.fairvfl.diagnostics import WholeGroupFairness
    from repro.fairvfl.problem import FairnessGroups, lagrangian, softplus

    rng = np.random.default_rng(3)
    n = 40
    y = np.where(rng.random(n) < 0.4, 1.0, -1.0)
    s = rng.random(n) < 0.5
    z = rng.normal(size=n)
    g = WholeGroupFairness.from_labels(y, s)
    ell = np.log1p(np.exp(-y * z))
    assert abs(g.deo_signed(z) - (ell[s].mean() - ell[~s].mean())) <= 1e-12
    assert g.in_a.sum() == s.sum() and g.in_b.sum() == (~s).sum()
    # Definition 1 differs: its D takes the positives only
    d1 = FairnessGroups.from_labels(y, s).deo_signed(z)
    assert abs(d1 - (ell[s & (y == 1)].mean() - ell[~s & (y == 1)].mean())) <= 1e-12
    assert abs(d1 - g.deo_signed(z)) > 1e-3
    lam, eps, h = np.array([0.7, 0.2]), 0.05, 1e-6

    def f(zz):
        return lagrangian(float(np.mean(softplus(-y * zz))), g.deo_signed(zz), lam, eps)

    num = np.array([(f(z + h * e) - f(z - h * e)) / (2 * h) for e in np.eye(n)])
    assert np.max(np.abs(num - g.masked_message(z, lam))) <= 1e-8


def test_adult_constraint_cost_accounting_on_a_short_run():
    """Two seeds at T = 20 (seconds): FairVFL(0.5) equals FedBCD (J1b), the confusion counts
    add up, and the flips against FedBCD account for the accuracy change exactly.
    """
    from repro.fairvfl.diagnostics import adult_constraint_cost

    out = adult_constraint_cost(load_reported(), T=20, seeds=(0,), eps_values=(0.01,),
                                rejected_eps=(0.01,))
    ours = out["ours"]
    assert ours["fairvfl05_minus_fedbcd"] == 0.0
    fed = out["per_seed"]["FedBCD"][0]
    n_test = sum(fed[f"{c}_{g}"] for c in ("tp", "fn", "fp", "tn") for g in "ab")
    assert n_test == 45_222 - 40_000
    assert abs(fed["acc_pct"] - 100 * (fed["tp_a"] + fed["tp_b"] + fed["tn_a"] + fed["tn_b"])
               / n_test) <= 1e-9
    assert abs(fed["tpr_a"] - fed["tp_a"] / (fed["tp_a"] + fed["fn_a"])) <= 1e-15
    for name in ("FairVFL(0.01)", "FairVFL(0.01) whole-group"):
        fl = ours[name]["flips_vs_fedbcd"]
        gained = sum(fl[f"fn_to_tp_{g}"] + fl[f"fp_to_tn_{g}"] for g in "ab")
        lost = sum(fl[f"tp_to_fn_{g}"] + fl[f"tn_to_fp_{g}"] for g in "ab")
        assert abs(ours[name]["cost_vs_fedbcd"] - 100 * (lost - gained) / n_test) <= 1e-9
    # the rejected reading constrains another D: its lam moves while FedBCD's stays 0
    assert ours["FedBCD"]["lam1"] == ours["FedBCD"]["lam2"] == 0.0


def test_fairvfl_runs_a_handed_reading_of_the_groups_and_checks_its_labels():
    from repro.fairvfl.diagnostics import WholeGroupFairness
    from repro.fairvfl.fair_vfl import FairVFL, FairVFLConfig
    from repro.fairvfl.models import LinearBlock
    from repro.fairvfl.problem import VFLProblem

    rng = np.random.default_rng(5)
    n = 60
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + rng.normal(size=n) > 0, 1.0, -1.0)
    s = rng.random(n) < 0.5
    with pytest.raises(ValueError, match="groups must be a FairnessGroups built from these"):
        VFLProblem([LinearBlock(X)], y, s, groups=WholeGroupFairness.from_labels(-y, s))
    g = WholeGroupFairness.from_labels(y, s)
    alg = FairVFL(VFLProblem([LinearBlock(X)], y, s, groups=g), FairVFLConfig(eps=0.0))
    alg.run(5)
    assert alg.server.groups is g and alg.parties[0].groups is g
    assert alg.state.d == g.deo_signed(alg.server.z)
    ell = np.log1p(np.exp(-y * alg.server.z))
    assert abs(alg.state.d - (ell[s].mean() - ell[~s].mean())) <= 1e-12
