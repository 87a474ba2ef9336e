"""The verdict rule on committed comparison rows from their committed columns:
repro.engine.compare.rejudge, which a partial `repro compare` applies to the rows it keeps and
scripts/reverdict.py prints for a whole committed comparison.csv.
"""

from __future__ import annotations

import csv
import math
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from repro.engine.compare.rejudge import REJUDGED, rejudge_row, reverdict
from repro.engine.compare.verdict import NEEDS_RERUN, RULE_ID
from repro.engine.records.kept import previous_comparison
from repro.engine.report.comparison_md import write_comparison
from repro.engine.report.overview import verdict_words

ROOT = Path(__file__).resolve().parents[2]


def _row(**kw):
    base = {"experiment": "fairvfl.conf_table1", "paper_file": "000_x.txt", "table": "I",
            "key": "dataset=compas;method=FedBCD", "metric": "FR_pct", "reported": "81.2",
            "reported_std": "0.2", "reproduced": "83.01", "reproduced_std": "5.02",
            "n_seeds": "5", "tolerance": "0.2", "verdict": "within_noise", "reason": "",
            "primary": "True", "made_by": "kept: f39eaaf00876"}
    return {**base, **kw}


AGREEMENT = dict(experiment="constrfl.table1", paper_file="003_x.txt", table="1",
                 key="dataset=bcw;n=1;method=Algorithm 1 vs cProx-AL",
                 metric="relative_difference", reported="7.09e-04", reported_std="0.000202",
                 reproduced="0.0001775", reproduced_std="0.000277", n_seeds="10",
                 tolerance="0.05", verdict="match",
                 reason="one-sided: match when <= 0.05, whatever the printed value; "
                        "docs/deviations.md#constrfl-agreement", made_by="kept: a876b2c0803e")
POOLED = dict(experiment="constrfl.table2", paper_file="003_x.txt", table="2",
              key="dataset=adult-b;n=5;method=cProx-AL", metric="objective", reported="0.37",
              reported_std="0.00405", reproduced="0.3831", reproduced_std="0.00304",
              n_seeds="50", tolerance="0.00405", verdict="deviates",
              reason="docs/deviations.md#constrfl-table-2", made_by="kept: a876b2c0803e")


def test_a_printed_std_the_protocol_cannot_produce_is_replaced_by_ours():
    # printed 0.2 (at most 0.25) over 5 runs against ours 5.02 over 5: F-test P ~ 1e-5, so
    # the band takes our std on both sides: 2 sqrt(2 * 5.02^2 / 5) = 6.35 >= |1.81|
    new, d = reverdict(_row())
    assert new == "within_noise" and d["n_paper"] == 5
    assert d["sigma_diff"] == pytest.approx(5.02 * math.sqrt(0.4), rel=1e-12)
    assert "paper inconsistency" in d["notes"][0] and d["paper_std"].startswith("inconsistent")


def test_a_one_sided_row_is_judged_on_its_printed_number():
    # its printed std pools clients: the match width is half a unit of 7.09e-04
    new, d = reverdict(_row(**AGREEMENT))
    assert new == "deviates" and d["tolerance"] == pytest.approx(5e-7)


def test_a_std_pooled_over_clients_is_refused_bounded_or_flagged():
    pooled = _row(**POOLED)
    new, d = reverdict(pooled)
    # the largest per-trial std the pooled one allows: 0.00304 sqrt(49 / 45) = 0.003172;
    # 2 sigma_diff <= 2 sqrt(2 * 0.003172^2 / 10) = 0.002837 < |0.0131|: deviates
    assert new == "deviates" and d["n"] == 10
    assert d["sigma_diff"] == pytest.approx(0.00304 * math.sqrt(49 / 45) * math.sqrt(0.2),
                                            rel=1e-12)
    close = {**pooled, "reproduced": "0.3775", "reproduced_std": "0.01"}
    assert reverdict(close)[0] == "needs_rerun"


def test_a_kept_old_rule_row_is_rejudged_keeping_where_its_numbers_come_from():
    agree = rejudge_row(_row(**AGREEMENT))
    assert agree["verdict"] == "deviates" and agree["rule"] == REJUDGED
    assert agree["made_by"] == "kept: a876b2c0803e"  # the numbers' commit, unchanged
    assert agree["reproduced"] == "0.0001775" and agree["n_seeds"] == 10
    assert agree["n_paper"] == 10 and agree["tolerance"] == pytest.approx(5e-7)
    # the printed std pools clients, so s_p' = ours: sigma_diff = sqrt(2 * 2.77e-4^2 / 10),
    # and |1.775e-4 - 7.09e-4| = 5.315e-4 is 2.1x the band 2 sigma_diff = 2.48e-4
    assert agree["sigma_diff"] == pytest.approx(2.77e-4 * math.sqrt(0.2), rel=1e-12)
    assert 5.315e-4 > 2.1 * 2 * agree["sigma_diff"]
    assert "older rule: match" in agree["reason"] and "one-sided" not in agree["reason"]
    assert "docs/deviations.md#constrfl-agreement" in agree["reason"]
    fr = rejudge_row(_row(reproduced="70.0"))
    assert fr["verdict"] == "deviates" and "paper inconsistency" in fr["reason"]
    assert "older rule: within_noise" in fr["reason"]
    # no docs link is attached to a row that now deviates: its cause is assigned with every
    # other row's (repro.engine.compare.causes)
    assert "docs/deviations.md#fairvfl" not in fr["reason"]


def test_a_pooled_row_the_columns_cannot_decide_needs_a_rerun():
    row = rejudge_row(_row(**{**POOLED, "reproduced": "0.3775", "reproduced_std": "0.01"}))
    assert row["verdict"] == NEEDS_RERUN and row["sigma_diff"] == ""
    assert "needs the per-trial std" in row["reason"] and row["n_seeds"] == 10


def test_a_row_of_the_current_rule_or_not_judged_is_left_as_it_is():
    current = _row(rule=RULE_ID, verdict="within_noise", n_paper="5")
    assert rejudge_row(current) is current
    for verdict in ("not_run", "substitute_data"):
        row = _row(verdict=verdict)
        assert rejudge_row(row) is row
    assert rejudge_row(_row(reproduced="", verdict="not_run"))["verdict"] == "not_run"


def test_the_kept_path_rejudges_and_the_outputs_say_it_plainly(tmp_path):
    rows = [_row(**AGREEMENT), _row(),
            _row(**{**POOLED, "reproduced": "0.3775", "reproduced_std": "0.01"}),
            _row(key="dataset=adult;method=FedBCD", verdict="match", rule=RULE_ID,
                 reproduced="81.25", reproduced_std="0.1", n_paper="5")]
    with open(tmp_path / "comparison.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[-1]))
        w.writeheader()
        w.writerows(rows)
    kept = previous_comparison(tmp_path)
    assert [r["verdict"] for r in kept] == ["deviates", "within_noise", NEEDS_RERUN, "match"]
    assert [r["rule"] for r in kept] == [REJUDGED] * 3 + [RULE_ID]
    md = write_comparison(kept, tmp_path)[0].read_text()
    # the counts before (the file as committed) beside the new ones, needs_rerun apart
    assert "| needs_rerun before/now |" in md
    before_after = md[md.index("| needs_rerun before/now |"):]
    line = next(ln for ln in before_after.splitlines() if ln.startswith("| ")
                and "Convex Global and Local Constraints" in ln)
    cells = [c.strip() for c in line.split("|")[1:-1]]
    # constrfl: match 1 -> 0, deviates 1 -> 2, needs_rerun 0 -> 1
    assert cells[1:] == ["1/0", "0/0", "1/1", "0/0", "0/0", "0/1"]
    assert "**3 kept rows were re-judged" in md and "**1 of them are `needs_rerun`**" in md
    assert "## Rows that need a rerun" in md
    assert "keep the verdicts of an earlier rule" not in md
    assert f"3 of its judged rows by a rule older than `{RULE_ID}`" in md
    from repro.engine.report.overview import _rejudged_words

    assert _rejudged_words(kept) == (
        "; 3 rows re-judged by the current rule from the committed columns")
    words = verdict_words(Counter(r["verdict"] for r in kept))
    assert words == ("partly: 2 of 3 rows (1 undecided: kept rows the committed columns "
                     "cannot decide, need a rerun)")
    assert verdict_words(Counter({NEEDS_RERUN: 2, "substitute_data": 3})) == (
        "undecided: 2 rows need a rerun (3 more on substitute data, not compared)")


def test_the_script_is_a_thin_command_line_over_the_engine(tmp_path):
    path = tmp_path / "c.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(_row()))
        w.writeheader()
        w.writerows([_row(), _row(**AGREEMENT)])
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "reverdict.py"), str(path)],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert "## Rows whose verdict changed (1)" in out and "| match | deviates |" in out
