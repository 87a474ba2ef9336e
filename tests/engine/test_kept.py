"""A partial `repro compare NAME`: the named experiments are recompared, every other experiment's
rows and claims are kept as the previous files hold them, marked kept, never counted twice.
"""

from __future__ import annotations

import csv
from pathlib import Path

from repro.cli import main
from repro.engine.records.kept import merge, previous_claims, previous_comparison, provenance_lines

ROOT = Path(__file__).resolve().parents[2]


def _r(exp, key, verdict, made_by="", table="Table 1", primary=True):
    return {"experiment": exp, "paper_file": "p.txt", "table": table, "key": key,
            "metric": "acc", "verdict": verdict, "made_by": made_by, "primary": primary}


def test_merge_recomputes_the_named_keeps_the_others_and_never_counts_a_row_twice():
    new = [_r("a.t1", "k1", "match", "abc"), _r("a.t1", "k2", "not_run"),
           _r("b.t1", "k1", "not_run"), _r("b.t2", "k9", "not_run", table="Table 2"),
           _r("c.t1", "k5", "not_run")]
    old = [_r("a.t1", "k1", "deviates", "kept: x"), _r("b.t1", "k1", "match", "kept: x"),
           # b.t2's row lived under b.t1 when the old file was written (an experiment split)
           _r("b.t1", "k9", "deviates", "kept: x", table="Table 2")]
    rows = merge(new, old, recompared={"a.t1"})
    got = [(r["experiment"], r["key"], r["verdict"], r["made_by"]) for r in rows]
    assert got == [("a.t1", "k1", "match", "abc"), ("a.t1", "k2", "not_run", ""),
                   ("b.t1", "k1", "match", "kept: x"), ("b.t1", "k9", "deviates", "kept: x"),
                   ("c.t1", "k5", "not_run", "")]
    # recomparing everything keeps nothing
    assert merge(new, old, {"a.t1", "b.t1", "b.t2", "c.t1"}) == new


def test_a_file_written_before_readings_is_read_as_kept_primary_rows(tmp_path):
    path = tmp_path / "comparison.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["experiment", "paper_file", "table", "key", "metric",
                                          "verdict", "reason", "scale"])
        w.writeheader()
        w.writerow({"experiment": "x.t", "paper_file": "p", "table": "1", "key": "k",
                    "metric": "m", "verdict": "match", "reason": "", "scale": "paper"})
    (row,) = previous_comparison(tmp_path)
    assert row["reading"] == "(before readings)" and row["primary"] == "True"
    assert row["made_by"] == "kept: an earlier comparison.csv"  # not a git checkout
    lines = provenance_lines([row, {**row, "experiment": "y.t", "made_by": ""}])
    assert "| x.t | 1 | kept: an earlier comparison.csv |" in lines
    assert "| y.t | 1 | recompared: no result |" in lines
    assert provenance_lines([{**row, "made_by": "abc"}]) == []  # nothing kept: no section


def test_claims_md_of_an_older_format_is_parsed_with_escaped_pipes_and_linked_reasons(tmp_path):
    (tmp_path / "claims.md").write_text(
        "# Qualitative claims\n\n| experiment | claim | source | measured | verdict | scale |\n"
        "|---|---|---|---|---|---|\n"
        "| fairvfl.conf_fig1 | AC up | [C] | a \\| b | fail | paper |\n"
        "| relfair.fig1 | centers | Fig. 1 | 0.1 | pass | paper |\n")
    from repro.engine.compare.compare import section_link

    fail, ok = previous_claims(tmp_path, section_link)
    assert fail["measured"] == "a | b" and fail["verdict"] == "fail"
    assert fail["reason"].startswith("see docs/deviations.md#fairvfl")  # linked, as required
    assert ok["reason"] == "" and ok["primary"] == "True"
    assert fail["made_by"].startswith("kept: ")


def test_cli_partial_compare_keeps_other_experiments_and_a_full_compare_keeps_none(isolated):
    figures = isolated / "figures"
    figures.mkdir()
    with open(ROOT / "figures" / "comparison.csv", newline="") as f:
        committed = list(csv.DictReader(f))
    fair = [r for r in committed if r["experiment"] == "fairvfl.conf_table1"
            and r["primary"] == "True"]  # the committed file also has the other readings
    assert len(fair) == 36
    with open(figures / "comparison.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(committed[0]))
        w.writeheader()
        w.writerows(fair)
    assert main(["compare", "constrfl.table4", "--scale", "smoke"]) == 0
    with open(figures / "comparison.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    kept = [r for r in rows if r["experiment"] == "fairvfl.conf_table1"]
    # kept rows of an older rule are re-judged from their committed columns:
    # what the one implementation gives them, never their old verdict unexamined
    from repro.engine.compare.rejudge import REJUDGED, is_current, rejudge_row

    want = [rejudge_row(r)["verdict"] for r in fair]
    assert [r["verdict"] for r in kept] == want
    assert all(is_current(r) for r in kept if r["verdict"] in ("match", "within_noise",
                                                                "deviates"))
    # a row of an older rule becomes REJUDGED; a row already judged by the current rule (from
    # records, or re-judged when it was kept before) keeps its rule
    assert [r["rule"] for r in kept] == [f["rule"] if is_current(f) else REJUDGED for f in fair]
    assert all(r["made_by"].startswith("kept: ") for r in kept)
    others = [r for r in rows if r["experiment"] != "fairvfl.conf_table1"]
    assert len(rows) == 532 and {r["verdict"] for r in others} == {"not_run"}
    assert "Where the rows come from" in (figures / "comparison.md").read_text()
    assert "not re-run by this comparison" in (figures / "REPORT.md").read_text()
    assert (figures / "claims.csv").is_file()
    assert main(["compare", "--scale", "smoke"]) == 0  # everything recompared: nothing kept
    with open(figures / "comparison.csv", newline="") as f:
        assert not any(r["made_by"].startswith("kept") for r in csv.DictReader(f))
    assert "Where the rows come from" not in (figures / "comparison.md").read_text()
