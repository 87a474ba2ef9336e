"""Causes of deviating rows (repro/engine/compare/causes.py) and fitted readings (repro/engine/
fitted.py) on hand-made comparison rows: every cause of the vocabulary, the evidence each one
needs, and the check that fails a deviating row without it.
"""

from __future__ import annotations

import pytest

from repro.engine.compare import causes as C
from repro.engine.compare.causes import (
    Alternative,
    Diagnostic,
    Inconsistency,
    assign_causes,
    cause_counts,
    check_causes,
    claim_causes,
)
from repro.engine.compare.fitted import FittedReading, declare_fitted, fit, key_of
from repro.engine.compare.reported import ReportedRow


def _row(reading, value, verdict, key="dataset=a;method=M", primary=None, made="abc", **kw):
    return {"experiment": "toy.t", "paper_file": "000_6d2fcaa5c94b2354.txt", "table": "T",
            "key": key, "metric": "acc", "reported": "0.50", "reported_std": "",
            "reproduced": value, "tolerance": 0.005, "sigma_diff": 0.01, "verdict": verdict,
            "reason": "", "reading": reading, "made_by": made,
            "primary": reading == "p" if primary is None else primary, **kw}


@pytest.fixture
def registry(monkeypatch):
    """Empty declaration registries for the test, restored after it."""
    monkeypatch.setattr(C, "_ALTERNATIVES", {})
    monkeypatch.setattr(C, "_INCONSISTENCIES", [])
    monkeypatch.setattr(C, "_DIAGNOSTICS", {})
    import repro.engine.compare.fitted as F

    monkeypatch.setattr(F, "_FITTED", {})
    return C


def test_a_reading_that_reproduces_or_brackets_the_row_is_its_cause(registry):
    C.declare(Alternative("toy.t", "long", "run length"),
              Alternative("toy.t", "code", "the authors' code", "authors' code differs"))
    rows = [_row("p", 0.60, "deviates"), _row("long", 0.505, "within_noise"),
            _row("p", 0.60, "deviates", key="k2"), _row("code", 0.45, "deviates", key="k2"),
            _row("p", 0.60, "deviates", key="k3"), _row("long", 0.58, "deviates", key="k3")]
    assign_causes(rows, reported=[])
    assert rows[0]["cause"] == "setting guessed"
    assert rows[0]["evidence"] == ("reading long (run length): 0.505 (within_noise) beside "
                                   "the primary's 0.6, printed 0.50")
    # 0.45 is beyond the printed 0.50 from 0.60: the code moves the row across it
    assert rows[2]["cause"] == "authors' code differs"
    # 0.58 moves the row towards 0.50 but not across: unexplained, the try is listed
    assert rows[4]["cause"] == "unexplained"
    assert rows[4]["evidence"].startswith("tried, none reaches the printed 0.50 from the "
                                          "primary's 0.6: reading long (run length) 0.58")
    assert check_causes(rows) == []
    assert cause_counts(rows)[("000_6d2fcaa5c94b2354.txt", "T")] == {
        "setting guessed": 1, "authors' code differs": 1, "unexplained": 1}


def test_evidence_is_only_a_row_of_the_same_code_that_changes_the_row(registry):
    rows = [_row("p", 0.60, "deviates"), _row("a", 0.50, "match", made="kept: x.csv at 1a2b"),
            _row("b", 0.50, "match", reason="stale (code 123)"), _row("c", 0.60, "deviates"),
            _row("d", 0.50, "match", made="")]
    assign_causes(rows, reported=[])
    # a: kept from an earlier file; b: stale records; c: the same value (it does not touch
    # the row); d: no records behind it
    assert rows[0]["cause"] == "unexplained"
    assert rows[0]["evidence"].startswith(C.NOTHING_TRIED)


def test_a_current_row_of_another_commit_is_evidence_and_a_stale_primary_has_none(registry):
    # a later commit that left the code identity as it was: both rows are current
    rows = [_row("p", 0.60, "deviates"), _row("a", 0.50, "match", made="other")]
    assign_causes(rows, reported=[])
    assert rows[0]["cause"] == "setting guessed"
    # a primary made by older code is no row to explain with current runs
    rows = [_row("p", 0.60, "deviates", reason="stale (code 9f); off by 0.1"),
            _row("a", 0.50, "match", made="other")]
    assign_causes(rows, reported=[])
    assert rows[0]["cause"] == "unexplained"


def test_a_paper_inconsistency_is_shown_from_the_printed_numbers(registry):
    def shown(rows):
        return {("dataset=a;method=M", "acc"): ("the paper prints it twice", 0.60),
                ("dataset=b", "acc"): "the paper's average is not its mean"}

    C.declare(Inconsistency("toy_t", "twice printed", shown))
    paper = "000_6d2fcaa5c94b2354.txt"
    reported = [ReportedRow("toy_t", paper, "T", (("dataset", "a"), ("method", "M")), "acc",
                            "0.50", None),
                ReportedRow("toy_t", paper, "T", (("dataset", "b"),), "acc", "0.50", None)]
    rows = [_row("p", 0.605, "deviates"), _row("p", 0.70, "deviates", key="dataset=b")]
    assign_causes(rows, reported=reported)
    # without an implied value, the inconsistency explains the row as it is
    assert rows[1]["cause"] == "paper inconsistency"
    assert rows[1]["evidence"] == "twice printed: the paper's average is not its mean"
    # the implied 0.60 is reached (0.005 apart, within 2 sigma_diff = 0.02)
    assert rows[0]["cause"] == "paper inconsistency"
    assert "the paper prints it twice; ours 0.605 against the implied 0.6" in rows[0]["evidence"]
    assert "twice printed: the paper prints it twice" in rows[0]["paper_note"]
    far = [_row("p", 0.70, "deviates")]
    assign_causes(far, reported=reported[:1])
    assert far[0]["cause"] == "unexplained"   # an implied value ours does not reach


def test_check_causes_fails_a_deviating_row_without_evidence_or_quoting_another_row():
    ok = _row("p", 0.6, "deviates", cause="unexplained", evidence="tried: x")
    assert check_causes([ok]) == []
    assert check_causes([{**ok, "cause": ""}]) == [
        "toy.t dataset=a;method=M acc: deviates with cause ''"]
    assert check_causes([{**ok, "cause": "bug fixed"}])
    assert check_causes([{**ok, "evidence": ""}]) == [
        "toy.t dataset=a;method=M acc: deviates (unexplained) without evidence"]
    # a reason quoting another row's printed value (FedBCD's 0.27 on a CEO row printing 0.18)
    wrong = {**ok, "reported": "0.18", "reason": "a reading fits the printed 0.27"}
    assert check_causes([wrong]) == [
        "toy.t dataset=a;method=M acc: quotes the printed 0.27, its row prints 0.18"]
    # a non-deviating row needs no cause, but may not misquote either
    assert check_causes([{**wrong, "verdict": "match", "cause": ""}])


def test_a_fitted_reading_is_chosen_on_calibration_rows_and_judged_on_the_others(registry):
    def rows_of(reading, verdicts):
        out = []
        for (ds, method), v in zip([("a", "B"), ("a", "E"), ("b", "B"), ("b", "E")], verdicts,
                                   strict=True):
            out.append(_row(reading, 0.5 if v == "match" else 0.7, v,
                            key=f"dataset={ds};method={method}"))
        return out

    rows = (rows_of("p", ["deviates", "deviates", "match", "deviates"])
            + rows_of("x", ["match", "match", "deviates", "deviates"])
            + rows_of("y", ["deviates", "deviates", "match", "match"]))

    def calib(r):
        return key_of(r)["method"] == "B"

    reading = FittedReading("fit-toy", "toy.t", "the length", ("p", "x", "y"), calib,
                            "the B rows", group=lambda r: key_of(r)["dataset"])
    got = fit(reading, rows)
    # dataset a: x reproduces its B row (1 of 1); dataset b: p and y tie on 1 of 1 and on the
    # gap (0), p is declared first
    assert got.chosen == {"a": "x", "b": "p"}
    assert got.calibration["a"] == {"p": (0, 1), "x": (1, 1), "y": (0, 1)}
    assert got.held_out_counts() == (1, 2) and got.calibration_counts() == (2, 2)
    declare_fitted(reading)
    assign_causes(rows, reported=[])
    held = next(r for r in rows if r["primary"] and r["key"] == "dataset=a;method=E")
    assert held["cause"] == "setting identified"
    assert "fitted reading fit-toy (the length: chose x for a on its 1 calibration rows (1 " \
           "reproduced); held out: 1 of 1 reproduced)" in held["evidence"]
    # a calibration row reproduced by the fit is no held-out evidence: a guessed setting
    cal = next(r for r in rows if r["primary"] and r["key"] == "dataset=a;method=B")
    assert cal["cause"] == "setting guessed"
    with pytest.raises(ValueError, match="at least two"):
        FittedReading("f", "toy.t", "s", ("p",), calib, "c")


def test_a_diagnostic_setting_is_evidence_like_a_reading(registry):
    C.declare(Diagnostic("toy.search", "toy.t", "what collapses it", lambda recs: [],
                         "2 runs", labels=("s1", "s2")))
    rows = [_row("p", 0.9, "deviates"), _row("s1", 0.85, "deviates", diagnostic="toy.search"),
            _row("s2", 0.95, "deviates", diagnostic="toy.search")]
    assign_causes(rows, reported=[])
    assert rows[0]["cause"] == "unexplained"
    assert ("diagnostic toy.search, reading s1 (what collapses it) 0.85 (deviates)"
            in rows[0]["evidence"])


def test_a_failing_claim_gets_the_cause_of_a_reading_under_which_it_holds(registry):
    C.declare(Alternative("toy.t", "long", "run length"))
    rows = [{"experiment": "toy.t", "claim": "c1", "verdict": "fail", "primary": True,
             "reading": "p", "reason": "see x"},
            {"experiment": "toy.t", "claim": "c1", "verdict": "pass", "primary": False,
             "reading": "long", "measured": "gap 3"},
            {"experiment": "toy.t", "claim": "c2", "verdict": "inconclusive", "primary": True,
             "reading": "p", "reason": ""},
            {"experiment": "toy.t", "claim": "c3", "verdict": "pass", "primary": True,
             "reading": "p", "reason": ""}]
    claim_causes(rows)
    assert [r["cause"] for r in rows] == ["setting guessed", "", "unexplained", ""]
    assert rows[0]["reason"] == "passes under reading long (run length): gap 3; see x"
