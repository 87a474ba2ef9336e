"""The verdict rule (repro/engine/compare/verdict.py) on hand-made rows: every branch, with the
numbers worked out by hand in the comments.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from repro.engine.compare.compare import ReportedRow, verdict_for
from repro.engine.compare.noise import NoiseModel
from repro.engine.compare.verdict import RULE, RULE_ID, judge, sigma_diff, std_consistency
from repro.engine.experiment import Reproduced


def _row(text="0.50", std=None):
    return ReportedRow("demo_table1", "p.txt", "1", (("method", "A"),), "acc", text, std)


def _rep(values, **kw):
    return Reproduced("demo_table1", {"method": "A"}, "acc", tuple(values), **kw)


def test_sigma_diff_is_the_noise_of_a_difference_of_two_means():
    assert sigma_diff(0.02, 4, 0.03, 9) == pytest.approx(math.sqrt(0.0004 / 4 + 0.0009 / 9),
                                                         rel=1e-15)
    with pytest.raises(ValueError, match="n >= 1"):
        sigma_diff(0.1, 3, 0.1, 0)


def test_match_is_the_printed_width_and_no_tolerance_of_ours():
    assert verdict_for(_row("0.50", 0.02), _rep([0.519]), "")["verdict"] == "match"
    assert verdict_for(_row("0.50", 0.02), _rep([0.521]), "")["verdict"] == "deviates"
    assert verdict_for(_row("0.50"), _rep([0.5049]), "")["verdict"] == "match"   # +-0.005
    assert verdict_for(_row("0.50"), _rep([0.5051]), "")["verdict"] == "deviates"
    # one unit where the table is shown to be rounded twice
    assert verdict_for(_row("0.50"), _rep([0.5099], printed_units=1.0), "")["verdict"] == \
        "match"
    # a tolerance of ours (a spec's suggestion) is refused, absolute or relative
    for kw in ({"tolerance": 0.03}, {"rel_tolerance": 0.2}):
        with pytest.raises(ValueError, match="never makes a match"):
            verdict_for(_row("0.50"), _rep([0.529], **kw), "")
    # a printed std pooled over clients bounds no match: the printed precision does
    pooled = _rep([0.515], paper_std_over="trials x clients")
    assert verdict_for(_row("0.50", 0.02), pooled, "")["verdict"] == "deviates"


def test_a_printed_std_the_stated_protocol_cannot_produce_is_said_and_not_used():
    # [C] Table I style: printed 81.2 +- 0.2 over 5 runs; ours 5 runs with s = 4.12. Under
    # equal variances (0.25)^2 / 4.12^2 = 0.00368 ~ F(4, 4): P(F <= 0.00368) = 4.0e-5
    # (two-sided 8.0e-5 < 1 %): the printed std cannot be a spread of the stated protocol
    vals = [78.0, 80.0, 83.0, 86.0, 88.0]
    s = float(np.std(vals, ddof=1))
    check = std_consistency(0.2, "0.2", s, 5, 5)
    assert not check.consistent and check.p == pytest.approx(8.03e-5, rel=1e-3)
    model = NoiseModel("demo_table1", "the split", 5, True, "the text", "runs", "5 seeds")
    out = judge("81.2", 0.2, _rep(vals), model, "0.2")
    # our std on both sides of the band: sqrt(s^2/5 + s^2/5)
    assert out["sigma_diff"] == pytest.approx(s * math.sqrt(0.4), rel=1e-12)
    assert out["paper_std"].startswith("inconsistent") and out["verdict"] == "within_noise"
    assert any("paper inconsistency" in n for n in out["notes"])
    # a printed std of the size of ours is consistent and enters the band as printed
    ok = std_consistency(4.0, "4.0", s, 5, 5)
    assert ok.consistent and ok.p > 0.5
    both = judge("81.2", 4.0, _rep(vals), model, "4.0")
    assert both["sigma_diff"] == pytest.approx(math.sqrt(s * s / 5 + 16.0 / 5), rel=1e-12)
    # a printed 0.0 is taken at its edge 0.05: still inconsistent with s = 0.3 over 5 runs
    # (0.05^2 / 0.3^2 = 0.0278 ~ F(4, 4): P = 2.3e-4, two-sided 4.6e-4)
    assert not std_consistency(0.0, "0.0", 0.3, 5, 5).consistent


def test_the_noise_model_gives_the_papers_run_count():
    model = NoiseModel("demo_table1", "the split", 1, False, "no count stated", "none", "3")
    out = judge("0.50", None, _rep([0.51, 0.53, 0.55], n_paper=5), model)
    assert out["n_paper"] == 1
    assert out["sigma_diff"] == pytest.approx(0.02 * math.sqrt(1 / 3 + 1), rel=1e-12)
    with pytest.raises(ValueError, match="states no run count"):
        NoiseModel("demo_table1", "the split", 5, False, "", "none", "")
    with pytest.raises(ValueError, match="printed_std"):
        NoiseModel("demo_table1", "the split", 5, True, "", "trials", "")


def test_within_noise_uses_sigma_diff_with_the_printed_std_and_both_n():
    # ours 0.515, 0.535, 0.555, 0.575 (mean 0.545, s = 0.025820) over 4 seeds; paper
    # 0.50 +- 0.03 over 5 runs: sigma_diff = sqrt(s^2/4 + 0.03^2/5) = 0.018619, 2 sigma_diff
    # = 0.037238 < |0.045|: deviates (the old band, 2 s = 0.0516, called it noise)
    vals = [0.515, 0.535, 0.555, 0.575]
    s = float(np.std(vals, ddof=1))
    sd = math.sqrt(s * s / 4 + 0.03 ** 2 / 5)
    out = verdict_for(_row("0.50", 0.03), _rep(vals, n_paper=5), "")
    assert out["sigma_diff"] == pytest.approx(sd, rel=1e-12)
    assert (out["n_seeds"], out["n_paper"]) == (4, 5)
    assert 2 * sd + 0.007 < 0.045 < 2 * s - 0.006
    assert out["verdict"] == "deviates" and "2σ_diff 0.0372 (n 4 vs 5)" in out["reason"]
    close = [v - 0.01 for v in vals]   # |0.035| <= 0.0372, beyond the printed 0.03
    assert verdict_for(_row("0.50", 0.03), _rep(close, n_paper=5), "")["verdict"] == \
        "within_noise"
    # no printed std: s_p = s; one run behind the paper (relfair): sqrt(s^2/4 + s^2/1)
    single = verdict_for(_row("0.50"), _rep(close, n_paper=1), "")
    assert single["sigma_diff"] == pytest.approx(s * math.sqrt(1 / 4 + 1), rel=1e-12)
    assert single["verdict"] == "within_noise"


def test_no_band_without_two_runs_or_the_papers_run_count():
    one = verdict_for(_row("0.50"), _rep([0.52], n_paper=5), "")
    assert one["verdict"] == "deviates" and "no noise band (1 run counted)" in one["reason"]
    assert one["sigma_diff"] == ""
    unknown = verdict_for(_row("0.50"), _rep([0.51, 0.53]), "")
    assert unknown["verdict"] == "deviates" and "run count is unknown" in unknown["reason"]


def test_a_std_pooled_over_clients_enters_no_band():
    # a printed std pooled over clients is no std over runs: s_p = s
    pooled = verdict_for(_row("0.50", 0.02), _rep([0.50, 0.60], n_paper=5,
                                                  paper_std_over="trials x clients"), "")
    s = math.sqrt(0.005)
    assert pooled["sigma_diff"] == pytest.approx(math.sqrt(s * s / 2 + s * s / 5), rel=1e-12)
    assert pooled["verdict"] == "within_noise" and pooled["paper_std"] == ""


def test_non_converged_and_lost_runs_are_left_out_and_said():
    # three seeds, the third diverged (0.90): all three have s = 0.2309, a band that would
    # call 0.633 against 0.50 noise; the converged two (0.50, 0.50) match exactly
    vals = [0.50, 0.50, 0.90]
    inflated = verdict_for(_row("0.60"), _rep(vals, n_paper=3), "")
    assert inflated["verdict"] == "within_noise"   # what an inflated std would do
    rep = _rep(vals, n_paper=3, converged=(True, True, False))
    out = verdict_for(_row("0.60"), rep, "")
    assert out["reproduced"] == 0.5 and out["n_seeds"] == 2
    assert out["verdict"] == "deviates"            # s = 0 over the converged: no band
    assert "2 of 3 seeds counted (1 not converged)" in out["reason"]
    lost = verdict_for(_row("0.50"), _rep([0.50, 0.50], n_paper=3, n_planned=5), "")
    assert lost["verdict"] == "match" and "2 of 5 seeds counted (3 lost)" in lost["reason"]
    none = judge("0.50", None, _rep([0.9], converged=(False,)))
    assert none["verdict"] == "deviates" and "no run converged" in none["notes"]
    with pytest.raises(ValueError, match="one per run"):
        _rep([0.5, 0.6], converged=(True,))


def test_a_std_pooled_over_clients_or_rounds_is_refused():
    for over in ("trials x clients", "clients", "rounds"):
        with pytest.raises(ValueError, match="not independent runs"):
            _rep([0.1, 0.2, 0.3], over=over)
    assert _rep([0.1, 0.2], over="trials").std == pytest.approx(math.sqrt(0.005), rel=1e-12)


def test_constrfl_rows_are_one_value_per_trial_and_say_the_printed_std_is_pooled():
    from types import SimpleNamespace

    from repro.constrfl.experiments.reproduce import table2

    def rec(trial, alg1):  # 3 clients per trial
        curves = {"alg1_obj": alg1, "cprox_obj": [1.0, 1.0, 1.0], "rel_diff": [0.1, 0.2, 0.3],
                  "alg1_disp": [0.05, 0.06, 0.07, 0.08], "cprox_disp": [0.05] * 4}
        return SimpleNamespace(config={"trial": trial, "n": 3, "hyper": "script",
                                       "k_max": 300, "subsample": 0},
                               curves=curves, metrics={})

    recs = [rec(1, [0.1, 0.2, 0.6]), rec(2, [0.4, 0.5, 0.6])]
    rows = {(r.key["method"], r.metric): r for r in table2(recs)}
    obj = rows[("Algorithm 1", "objective")]
    assert obj.values == pytest.approx((0.3, 0.5), rel=1e-12) and obj.over == "trials"
    assert obj.mean == pytest.approx(0.4, rel=1e-12)   # = the pooled mean of the 6 values
    assert (obj.n_paper, obj.paper_std_over) == (10, "trials x clients")
    rel = rows[("Algorithm 1 vs cProx-AL", "relative_difference")]
    assert rel.values == pytest.approx((0.2, 0.2), rel=1e-12)
    assert rows[("Algorithm 1", "loss_disparity")].paper_std_over == ""
    # the uncertified-run flag: an uncertified Algorithm-1 trial stays in the mean (the paper's runs
    # ran the same capped protocol) and is flagged, so the row never gets a noise band
    recs[1].metrics["alg1_certified_stop"] = False
    recs[0].metrics["alg1_certified_stop"] = True
    obj = {(r.key["method"], r.metric): r for r in table2(recs)}[("Algorithm 1", "objective")]
    assert obj.certified == (True, False) and obj.mean == pytest.approx(0.4, rel=1e-12)


def test_an_uncertified_run_is_never_the_evidence_of_a_noise_band():
    """A noise band rests on certified runs only: the same numbers that are within_noise with
    certified runs are deviates when one run ended uncertified, and the row says how many were.
    """
    from repro.engine.compare.verdict import Certified

    vals = (0.50, 0.56, 0.44, 0.53, 0.47)
    common = dict(table="t", key={"k": "1"}, metric="m", values=vals, over="trials",
                  n_paper=5)
    ok = judge("0.54", 0.02, Certified(**common, certified=(True,) * 5))
    assert ok["verdict"] == "within_noise"
    bad = judge("0.54", 0.02, Certified(**common, certified=(True, True, False, True, True)))
    assert bad["verdict"] == "deviates" and bad["reproduced"] == ok["reproduced"]
    assert any("4 of 5 runs certified" in n for n in bad["notes"])
    assert any("no noise band (uncertified runs)" in n for n in bad["notes"])
    # a match needs no band: an uncertified run does not stop the printed number matching
    assert judge("0.50", 0.02, Certified(**common, certified=(False,) * 5))["verdict"] == "match"
    with pytest.raises(ValueError, match="certified flags"):
        Certified(**common, certified=(True,))


def test_comparison_md_states_the_rule_first(tmp_path):
    from repro.engine.compare.compare import write_comparison

    row = {"experiment": "p.t1", "paper_file": "003_733a787503856876.txt", "table": "1",
           "key": "k=1", "metric": "m", "reported": "1.52e-04", "reported_std": "",
           "reproduced": 1.5234e-4,
           "reproduced_std": 3.1e-6, "n_seeds": 3, "n_paper": 10, "sigma_diff": 1e-6,
           "tolerance": 5e-7, "verdict": "deviates", "reason": "see docs/deviations.md#x",
           "scale": "paper"}
    md = write_comparison([row], tmp_path)[0].read_text()
    assert md.index(RULE) < md.index("reported numbers; verdict counts")
    # a row without the rule's mark (kept from an older comparison) is said to be one
    assert "**1 rows keep the verdicts of an earlier rule**" in md and "p.t1 1" in md
    row["rule"] = RULE_ID
    assert "earlier rule" not in write_comparison([row], tmp_path / "b")[0].read_text()
    md = write_comparison([{**row, "rule": ""}], tmp_path)[0].read_text()
    # to the printed precision plus one digit; the CSV keeps every digit
    assert "| 1.52e-04 | 1.523e-04 ± 3.1e-06 | 3/10 | 5e-07 | 2e-06 | " in md
    # a deviating row says it has no cause (a hand-made row: nothing could explain it)
    assert "| p.t1 | k=1 | m | 1.52e-04 | 1.523e-04 ± 3.1e-06 | 3/10 | unexplained |" in md
    assert "0.00015234" in (tmp_path / "comparison.csv").read_text()
    # the previous comparison gives the counts before, side by side, and the changed rows
    md = write_comparison([{**row, "verdict": "match"}], tmp_path)[0].read_text()
    assert "| deviates before/now |" in md.replace("match before/now | within_noise "
                                                    "before/now | ", "")
    assert "## Rows whose verdict changed" in md and "| deviates | match |" in md


def test_a_corrected_value_is_refused_a_row_is_judged_against_the_printed_number():
    rep = replace(_rep([9.2828e-5]), corrected="9.28e-5", note="docs/deviations.md#m",
                  n_paper=10)
    with pytest.raises(ValueError, match="never a corrected one"):
        verdict_for(_row("9.29e-4"), rep, "")
    out = verdict_for(_row("9.29e-4"), replace(rep, corrected=None), "")
    assert out["reported"] == "9.29e-4" and out["verdict"] == "deviates"
