"""The Fair VFL theory checks pass at small size (the same functions `python -m theory` runs)."""

from __future__ import annotations

from functools import cache

import pytest

from theory.registry import load_check_modules, registered, seed_for

load_check_modules()
NAMES = sorted(n for n in registered() if n.startswith("fairvfl."))


@cache
def _result(name):
    entry = registered()[name]  # a renamed check keeps its former name's seed (seed_name)
    return entry.func(seed_for(entry.seed_name or name), "small")


def test_all_fairvfl_checks_registered():
    assert set(NAMES) >= {"fairvfl.lemma1_primal_progress", "fairvfl.lemma2_dual_progress",
                          "fairvfl.lemma3_lyapunov", "fairvfl.theorem2_fixed_point_kkt",
                          "fairvfl.theorem1_rotation_invariance",
                          "fairvfl.theorem1_masked_weights_tuple",
                          "fairvfl.theorem1_label_leak", "fairvfl.assumption2_constants",
                          "fairvfl.theorem2_rate_gap_bounds"}


@pytest.mark.parametrize("name", NAMES)
def test_fairvfl_check_passes_small(name):
    res = _result(name)
    assert res.passed, (res.worst_margin, res.details)
    assert res.worst_margin >= 0 and res.instances > 0


def test_lemma2_and_3_fail_with_beta_as_printed():
    """§10.8 item 1: with beta = the dual step (0.1) the inequalities are violated."""
    for name in ("fairvfl.lemma2_dual_progress", "fairvfl.lemma3_lyapunov"):
        res = _result(name)
        assert res.details["reading_A_fails"] is True
        assert res.details["margins"]["A_beta_is_step/worst"] < -0.5


def test_lemma1_is_vacuous_at_paper_step_for_q4_and_q7():
    res = _result("fairvfl.lemma1_primal_progress")
    v = res.details["paper_eta_100"]
    assert v["vacuous_Q1"] is False and v["vacuous_Q4"] is True and v["vacuous_Q7"] is True
    assert res.paper_setting is v and all(v[f"max lhs - rhs Q{q}"] <= 0 for q in (1, 4, 7))
    # both multipliers take part in the primal steps (the groups swapped on every other
    # instance), as required: lam2 > 0 on at least 1 % of the steps of some run
    assert res.terms["primal step with lam2 > 0"]["active"] > 0


def test_fields_nontrivial_and_exact_step():
    """The checks below report a non-zero share of non-trivial instances; the
    dual-step checks hold the package's step to [C](9) to round-off; Theorem 2's run has the
    constraint active (lam > 0) in most rounds.
    """
    for name in ("fairvfl.lemma1_primal_progress", "fairvfl.lemma2_dual_progress",
                 "fairvfl.lemma3_lyapunov", "fairvfl.assumption2_constants",
                 "fairvfl.theorem2_rate_gap_bounds"):
        res = _result(name)
        assert res.nontrivial is not None and res.nontrivial > 0.5, (name, res.nontrivial)
    for name in ("fairvfl.lemma2_dual_progress", "fairvfl.lemma3_lyapunov"):
        assert _result(name).details["dual_step_max_relative_error"] <= 1e-13
    t2 = _result("fairvfl.theorem2_rate_gap_bounds")
    assert max(t2.details["rounds_lam2_positive"].values()) >= 0.9 * t2.details["T"] / 20
    assert all(v >= 0 for k, v in t2.criteria.items() if k.startswith("hypothesis"))
    c = _result("fairvfl.assumption2_constants")
    assert c.details["package_max_relative_difference"] <= 1e-12
