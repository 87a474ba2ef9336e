"""Every check declares the terms of its statement with a measured quantity and a threshold and
reports how many instances activated each; a term active on none fails the check
(theory/evidence.py, theory/result.py).
"""

from __future__ import annotations

import math

import pytest

from theory.evidence import Evidence, Term, render_terms
from theory.registry import load_check_modules, registered
from theory.result import CheckResult

load_check_modules()
NAMES = sorted(registered())


def _result(**kw):
    base = {"name": "x.y", "claim": "c", "paper": "p", "equation": "-", "instances": 1,
            "worst_margin": 0.5, "ground_truth": {}, "passed": True}
    return CheckResult(**{**base, **kw})


@pytest.mark.parametrize("name", NAMES)
def test_every_check_reports_active_terms_and_named_criteria(name, clean):
    r = clean(name)
    assert r.terms, name
    assert all(t["active"] >= 1 and t["instances"] >= t["active"] for t in r.terms.values())
    assert all(t["predicate"] and math.isfinite(t["threshold"]) for t in r.terms.values())
    assert r.criteria and r.worst_margin <= min(r.criteria.values()) + 1e-12
    assert r.paper_setting, name  # every check states the paper's own setting it ran


def test_a_term_active_on_no_instance_fails_the_check():
    ev = Evidence([Term("lam2 > 0", "lam2", 1e-8), Term("lam1 > 0", "lam1", 1e-8)])
    ev.activity("lam2 > 0", [0.0, 1e-9])
    ev.activity("lam1 > 0", [0.0, 0.3])
    ev.criterion("Lemma", 0.2)
    r = _result(worst_margin=ev.worst(), **ev.fields())
    assert r.verdict == "fail" and r.worst_margin == -math.inf
    assert "lam2 > 0" in r.details["failed_because"]
    assert r.terms["lam1 > 0"]["active"] == 1 and r.terms["lam2 > 0"]["active"] == 0


def test_a_finding_at_the_paper_setting_is_not_a_pass_and_not_a_failure():
    r = _result(paper_finding="spectral radius 1.2 at the paper's step")
    assert r.verdict == "finding"
    assert _result(passed=False, worst_margin=-1.0, paper_finding="x").verdict == "fail"


def test_the_term_table_is_rendered():
    ev = Evidence([Term("||d||", "||d||_inf", 0.0)])
    ev.activity("||d||", 2.0)
    lines = render_terms([_result(size="small", **ev.fields())])
    assert any("| x.y | small | \\|\\|d\\|\\| |" in line and "1 / 1" in line for line in lines)
