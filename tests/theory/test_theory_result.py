"""The harness's result rules: a failing check always has a negative margin,
fail-by-divergence is its own verdict, and a check reporting no non-trivial instance fails.
"""

from __future__ import annotations

import math

import pytest

from theory.__main__ import progress_line, render_markdown, render_table, summary
from theory.result import CheckResult


def _result(**kw) -> CheckResult:
    base = {"name": "x.y", "claim": "c", "paper": "p", "equation": "-", "instances": 3,
            "worst_margin": 0.5, "ground_truth": {}, "passed": True}
    return CheckResult(**{**base, **kw})


def test_a_passing_result_is_unchanged():
    r = _result(nontrivial=0.25)
    assert r.passed and r.worst_margin == 0.5 and r.verdict == "pass"
    assert "failed_because" not in r.details


def test_old_checks_without_the_new_fields_are_unchanged():
    r = _result()
    assert r.nontrivial is None and r.diverged is False and r.verdict == "pass"


@pytest.mark.parametrize("margin", [0.0, 0.7, math.inf, math.nan])
def test_a_failure_by_count_gets_a_negative_margin(margin):
    r = _result(worst_margin=margin, passed=False)
    assert r.verdict == "fail" and r.worst_margin == -math.inf
    assert r.details["failed_because"].startswith("the check's own criteria")
    assert (r.details["margin_before_normalisation"] == margin
            or math.isnan(r.details["margin_before_normalisation"]))


def test_a_negative_margin_is_kept():
    r = _result(worst_margin=-0.25, passed=False)
    assert r.worst_margin == -0.25 and "failed_because" not in r.details


def test_zero_nontrivial_share_fails():
    r = _result(nontrivial=0.0)
    assert not r.passed and r.verdict == "fail" and r.worst_margin == -math.inf
    assert "nontrivial = 0" in r.details["failed_because"]


@pytest.mark.parametrize("share", [-0.1, 1.5, math.nan])
def test_a_share_outside_0_1_raises(share):
    with pytest.raises(ValueError, match="nontrivial must be a share"):
        _result(nontrivial=share)


def test_divergence_is_a_named_failing_verdict():
    r = _result(worst_margin=math.inf, passed=False, diverged=True)
    assert r.verdict == "diverged" and not r.passed and r.worst_margin == -math.inf
    assert "diverged" in r.details["failed_because"]
    assert summary([r, _result()]) == "1 passed, 0 failed, 0 findings, 1 diverged"
    assert "DIVERGED" in progress_line(1, 1, r)
    assert "DIVERGED" in render_table([r]) and "DIVERGED" in render_markdown([r], {}, "small")


def test_a_finding_keeps_its_margin():
    r = _result(worst_margin=0.3, passed=False, applies=False)
    assert r.verdict == "finding" and r.worst_margin == 0.3


def test_share_is_shown():
    r = _result(nontrivial=0.125)
    assert "non-trivial 0.125" in progress_line(1, 1, r)
    assert "non-trivial" in render_table([r]) and "0.125" in render_table([r])
    assert "non-trivial on a share 0.125" in render_markdown([r], {}, "small")
    assert r.to_dict()["nontrivial"] == 0.125 and r.to_dict()["diverged"] is False
