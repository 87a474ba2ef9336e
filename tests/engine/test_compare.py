"""The reported-vs-reproduced comparison: row counts, verdict rules, reasons, claims."""

from __future__ import annotations

import csv
import math
import re
from dataclasses import replace
from pathlib import Path

import pytest

from repro.cli import main
from repro.engine.compare.compare import (
    ReportedRow,
    check_claims,
    compare,
    half_last_digit,
    load_reported,
    verdict_for,
)
from repro.engine.experiment import CellResult, Claim, Experiment, Reproduced
from repro.engine.records.records import RunRecord

ROOT = Path(__file__).resolve().parents[2]
ROWS_PER_CSV = {"constrfl_table1": 84, "constrfl_table2": 28, "constrfl_table3": 9,
                "constrfl_table4": 45, "fairvfl_conf_table1": 36, "fairvfl_journal_table1": 72,
                "fairvfl_journal_table2": 72, "fedmm_table1": 63, "fedmm_table2": 63,
                "relfair_table1": 60}


def _row(text="0.27", std=None):
    return ReportedRow("demo_table1", "p.txt", "1", (("method", "A"),), "objective", text, std)


def _rep(values, tolerance=None, note=""):
    return Reproduced("demo_table1", {"method": "A"}, "objective", tuple(values), tolerance, note)


def test_reported_csvs_have_532_rows():
    rows = load_reported()
    assert len(rows) == 532
    for stem, n in ROWS_PER_CSV.items():
        assert sum(r.stem == stem for r in rows) == n


@pytest.mark.parametrize(("text", "half"), [("0.27", 0.005), ("455", 0.5), ("1.52e-04", 5e-7),
                                            ("85.06", 0.005)])
def test_half_last_digit(text, half):
    assert half_last_digit(text) == pytest.approx(half, rel=1e-12)


def test_verdict_rules():
    # paper std given: within it is a match
    assert verdict_for(_row("0.27", 0.01), _rep([0.279]), "")["verdict"] == "match"
    assert verdict_for(_row("0.27", 0.01), _rep([0.281]), "")["verdict"] == "deviates"
    # a std finer than the printing: the printed precision (0.005) bounds the tolerance
    assert verdict_for(_row("0.27", 1e-6), _rep([0.2749]), "")["verdict"] == "match"
    assert verdict_for(_row("0.27", 1e-6), _rep([0.2751]), "")["verdict"] == "deviates"
    # no std: half a unit of the last printed digit (0.005)
    assert verdict_for(_row("0.27"), _rep([0.2749]), "")["verdict"] == "match"
    assert verdict_for(_row("0.27"), _rep([0.2751]), "")["verdict"] == "deviates"
    # a tolerance of ours never replaces the printed precision: refused
    with pytest.raises(ValueError, match="never makes a match"):
        verdict_for(_row("0.27"), _rep([0.29], tolerance=0.03), "")
    # within 2 sigma_diff (tests/engine/test_verdict.py has every branch): mean 0.30, std
    # 0.02 over 3 seeds, paper 3 runs, no printed std: 2 sqrt(2 * 0.02^2 / 3) = 0.0327 >= 0.03
    noisy = verdict_for(_row("0.27"), replace(_rep([0.28, 0.30, 0.32]), n_paper=3), "")
    assert noisy["verdict"] == "within_noise"
    assert noisy["reproduced_std"] == pytest.approx(0.02, rel=1e-12) and noisy["n_seeds"] == 3
    assert noisy["sigma_diff"] == pytest.approx(0.02 * math.sqrt(2 / 3), rel=1e-12)
    # the paper's run count unknown: no band
    assert verdict_for(_row("0.27"), _rep([0.28, 0.30, 0.32]), "")["verdict"] == "deviates"
    dev = verdict_for(_row("0.27"), _rep([0.5], note="see docs/deviations.md#x"), "")
    assert dev["verdict"] == "deviates" and dev["reason"] == (
        "off by 0.23: beyond the printed width 0.005 and no noise band (1 run counted); "
        "see docs/deviations.md#x")
    gone = verdict_for(_row(), None, "why")
    assert (gone["verdict"], gone["reason"]) == ("not_run", "why")
    na = ReportedRow("t", "p", "1", (), "m", "NA", None)
    assert verdict_for(na, _rep([math.nan]), "")["verdict"] == "match"
    assert verdict_for(na, _rep([3.0]), "")["verdict"] == "deviates"


def test_double_rounding_and_a_misprint_judged_as_printed():
    # specs/constrfl.md §6: 5.87485e-4 printed 5.88e-4 (rounded twice): off by 5.15e-7, more than
    # half a unit (5e-7) but within one unit (1e-6)
    row = _row("5.88e-4", 1.34e-7)
    assert verdict_for(row, _rep([5.87485e-4]), "")["verdict"] == "deviates"
    one_unit = Reproduced("demo_table1", {"method": "A"}, "objective", (5.87485e-4,),
                          printed_units=1.0)
    assert verdict_for(row, one_unit, "")["verdict"] == "match"
    assert verdict_for(row, replace(one_unit, values=(5.8699e-4,)), "")["verdict"] == "deviates"
    # a misprint (9.29e-4 for the log's 9.2828e-5) is judged against the printed text: it
    # deviates, its note names the misprint; a corrected value is refused
    noted = Reproduced("demo_table1", {"method": "A"}, "objective", (9.2828e-5,),
                       note="docs/deviations.md#m")
    out = verdict_for(_row("9.29e-4"), noted, "")
    assert out["verdict"] == "deviates" and out["reported"] == "9.29e-4" and "#m" in out["reason"]
    with pytest.raises(ValueError, match="never a corrected one"):
        verdict_for(_row("9.29e-4"), replace(noted, corrected="9.28e-5"), "")


def test_without_records_every_row_is_not_run_with_a_linked_reason(isolated):
    assert main(["compare", "--scale", "smoke"]) == 0
    out = isolated / "figures"
    with open(out / "comparison.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 532
    assert {r["verdict"] for r in rows} == {"not_run"}
    anchors = _anchors(ROOT / "docs" / "deviations.md")
    for r in rows:
        link = re.search(r"docs/deviations\.md#([\w-]+)", r["reason"])
        assert link and link.group(1) in anchors, r["reason"]
    md = (out / "comparison.md").read_text()
    assert "| **all** | 0 | 0 | 0 | 0 | 532 | 532 |" in md
    assert ("| Federated Learning with Convex Global and Local Constraints (2024) | 0 | 0 | 0 | "
            "0 | 166 | 166 |") in md  # by title and year
    assert "003_733a787503856876" not in md
    claims = (out / "claims.md").read_text()
    assert "core.demo" in claims and "not_run" in claims  # no records yet


def _anchors(path: Path) -> set[str]:
    heads = re.findall(r"^#+ (.+)$", path.read_text(), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in heads}


def _fake_experiment(values):
    def reproduce(records):
        return [Reproduced("demo_table1", {"method": "A"}, "objective",
                           tuple(r.metrics["objective"] for r in records))]

    return Experiment(
        name="demo.table1", title="t", paper="p.txt", cells=lambda s: [{"s": 0}],
        run_cell=lambda c, ctx: CellResult({}), reported=("demo_table1",), reproduce=reproduce,
        claims=(Claim("objective below 1", "p. 3", lambda rs: (
            max(r.metrics["objective"] for r in rs) < 1, "max objective")),))


def test_compare_joins_records_to_reported_rows():
    exp = _fake_experiment([0.27])
    recs = [RunRecord("demo.table1", {"s": i}, f"k{i}", i, metrics={"objective": v})
            for i, v in enumerate([0.269, 0.271])]
    rows = compare({exp.name: exp}, {exp.name: ("paper", recs)}, [_row("0.27")])
    assert len(rows) == 1
    assert rows[0]["verdict"] == "match" and rows[0]["n_seeds"] == 2
    assert rows[0]["reproduced"] == pytest.approx(0.27, abs=1e-15)
    assert rows[0]["experiment"] == "demo.table1" and rows[0]["scale"] == "paper"
    claims = check_claims({exp.name: exp}, {exp.name: ("paper", recs)})
    assert [c["verdict"] for c in claims] == ["pass"]


def test_a_claim_without_its_records_is_not_run_not_fail():
    """A claim whose records are absent (an alternative reading run in part) once raised no
    verdict of its own and was judged `fail`; it is `not_run` with the reason.
    """
    from repro.engine.experiment import RecordsMissing

    def needs_b(rs):
        if not any(r.config.get("method") == "B" for r in rs):
            raise RecordsMissing("no method B record")
        return True, "B present"

    exp = Experiment(name="demo.x", title="t", paper="p.txt", cells=lambda s: [{"s": 0}],
                     run_cell=lambda c, ctx: CellResult({}),
                     claims=(Claim("B wins", "p. 1", needs_b),))
    only_a = [RunRecord("demo.x", {"method": "A"}, "k", 0, metrics={"m": 1.0})]
    row, = check_claims({exp.name: exp}, {exp.name: ("paper", only_a)})
    assert (row["verdict"], row["measured"], row["reason"]) == (
        "not_run", "records missing: no method B record", "")
    with_b = only_a + [RunRecord("demo.x", {"method": "B"}, "k2", 0, metrics={"m": 1.0})]
    row, = check_claims({exp.name: exp}, {exp.name: ("paper", with_b)})
    assert row["verdict"] == "pass"


def test_not_run_cells_carry_the_data_reason():
    exp = _fake_experiment([])
    rec = RunRecord("demo.table1", {"s": 0}, "k", 0, status="not_run",
                    reason="data unavailable: data file cifar10 not found")
    rows = compare({exp.name: exp}, {exp.name: ("paper", [rec])}, [_row("0.27")])
    assert rows[0]["verdict"] == "not_run"
    assert "data unavailable" in rows[0]["reason"]
    assert "docs/deviations.md#data-unavailable" in rows[0]["reason"]


def _synthetic_rows() -> list[dict]:
    """Rows of three papers with every verdict, two deviation causes and a reason with a
    pipe character.
    """
    rows = []
    spec = {"000_a.txt": ("match", "match", "not_run"),
            "002_b.txt": ("deviates", "within_noise", "deviates", "not_run", "not_run"),
            "003_c.txt": ("deviates", "match", "within_noise")}
    reasons = {"deviates": ["see docs/deviations.md#relfair-table-1-deviations",
                            "docs/deviations.md#constrfl-table-1-data",
                            "under-trained | see docs/deviations.md#relfair-table-1-deviations"],
               "not_run": ["not run: data; see docs/deviations.md#data-unavailable"] * 3}
    used = {"deviates": 0, "not_run": 0}
    for paper, verdicts in spec.items():
        for i, v in enumerate(verdicts):
            reason = ""
            if v in used:
                reason = reasons[v][used[v]]
                used[v] += 1
            rows.append({"experiment": f"p{paper[:3]}.t1", "paper_file": paper, "table": "1",
                         "key": f"row={i}", "metric": "m", "reported": "0.5",
                         "reported_std": "", "reproduced": "" if v == "not_run" else 0.7,
                         "reproduced_std": "", "n_seeds": 0 if v == "not_run" else 2,
                         "tolerance": "" if v == "not_run" else 0.005, "verdict": v,
                         "reason": reason, "scale": "smoke"})
    return rows


def _table_after(md: str, heading_line: str) -> list[list[str]]:
    """Cells of the first Markdown table after ``heading_line``."""
    lines = md[md.index(heading_line):].splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("| "))
    out = []
    for ln in lines[start:]:
        if not ln.startswith("|"):
            break
        if not ln.startswith("|---"):
            out.append([c.strip() for c in re.split(r"(?<!\\)\|", ln)[1:-1]])
    return out


def test_comparison_opens_with_counts_equal_to_the_rows(tmp_path):
    from collections import Counter

    from repro.engine.compare.compare import VERDICTS, write_comparison
    from repro.engine.report.report import paper_name

    rows = _synthetic_rows()
    md_path, csv_path = write_comparison(rows, tmp_path)
    md = md_path.read_text()
    first_table = md.index("\n|")
    assert "##" not in md[:first_table]  # the counts table comes before any section
    table = _table_after(md, "# Reported vs reproduced")
    assert table[0] == ["paper", *VERDICTS, "total"]
    with open(csv_path, newline="") as f:
        written = list(csv.DictReader(f))
    for line in table[1:-1]:
        c = Counter(r["verdict"] for r in written if paper_name(r["paper_file"]) == line[0])
        assert [int(x) for x in line[1:]] == [c[v] for v in VERDICTS] + [sum(c.values())]
    assert [line[0] for line in table[1:-1]] == [paper_name(p) for p in ("000", "002", "003")]
    total = Counter(r["verdict"] for r in written)
    assert table[-1] == ["**all**", "3", "2", "3", "0", "3", "11"]
    assert [int(x) for x in table[-1][1:-1]] == [total[v] for v in VERDICTS]


def test_comparison_lists_every_deviating_row_with_its_cause_and_evidence(tmp_path):
    from repro.engine.compare.compare import write_comparison

    rows = _synthetic_rows()
    md = write_comparison(rows, tmp_path)[0].read_text()
    assert "3 rows deviate; each has a cause and the evidence for that row" in md
    listed = _table_after(md, "| experiment | key | metric | reported | reproduced | n ours/")
    assert [(r[0], r[1]) for r in listed[1:]] == [
        (r["experiment"], r["key"]) for r in rows if r["verdict"] == "deviates"]
    # hand-made rows without any reading: unexplained, and the evidence says nothing changes
    # them; no docs link is attached to them automatically
    assert {r[-2] for r in listed[1:]} == {"unexplained"}
    assert all(r[-1].startswith("no reading or diagnostic of the package changes this row")
               for r in listed[1:])
    counts = _table_after(md, "Per table, the verdicts and the causes")
    assert counts[0][-1] == "cause: unexplained"
    assert md.index("## Deviating rows") < md.index("## p000.t1")


def test_comparison_without_deviations_says_so(tmp_path):
    from repro.engine.compare.compare import write_comparison

    rows = [r for r in _synthetic_rows() if r["verdict"] != "deviates"]
    md = write_comparison(rows, tmp_path)[0].read_text()
    assert "## Deviating rows\n\nNo row deviates." in md


def test_an_agreement_row_is_judged_on_its_printed_number():
    # a relative difference of 1.08e-2 against a printed 3.92e-4 deviates, however
    # far below the 5e-2 the paper's agreement statement allows (that statement is a claim)
    row = ReportedRow("demo_table1", "p.txt", "1", (("method", "A vs B"),),
                      "relative_difference", "3.92e-4", 1.6e-3)
    out = verdict_for(row, _rep([1.08e-2]), "")
    assert out["verdict"] == "deviates" and out["tolerance"] == pytest.approx(1.6e-3)
    assert verdict_for(row, _rep([1.5e-3]), "")["verdict"] == "match"
    with pytest.raises(TypeError):
        Reproduced("demo_table1", {"method": "A"}, "relative_difference", (0.01,), at_most=5e-2)


def test_substitute_data_is_counted_apart_and_refused_without_a_linked_entry(tmp_path):
    row = _row("0.27", 0.01)
    sub = replace(_rep([0.9]), substitute_data="docs/deviations.md#constrfl-table-1-data")
    out = verdict_for(row, sub, "")
    assert out["verdict"] == "substitute_data" and out["reproduced"] == 0.9
    assert "#constrfl-table-1-data" in out["reason"] and "0.9" in out["reason"]
    from repro.engine.compare.compare import VERDICTS, check_substitute_link, summary
    assert "substitute_data" in VERDICTS
    counts = summary([{**out, "paper_file": "p.txt"},
                      {**verdict_for(row, _rep([0.27]), ""), "paper_file": "p.txt"}])
    assert counts["p.txt"] == {"substitute_data": 1, "match": 1}
    with pytest.raises(ValueError, match="links no entry"):
        verdict_for(row, replace(sub, substitute_data="docs/deviations.md#no-such-entry"), "")
    with pytest.raises(ValueError, match="must be 'docs/deviations.md#"):
        verdict_for(row, replace(sub, substitute_data="see the paper"), "")
    # the link is said once, also where the experiment's note is the same link
    same = verdict_for(row, replace(sub, note="docs/deviations.md#constrfl-table-1-data"), "")
    assert same["reason"].count("#constrfl-table-1-data") == 1
    dev = tmp_path / "deviations.md"
    dev.write_text("# Deviations\n\n### demo: private CSVs (A1)\n")
    check_substitute_link("docs/deviations.md#demo-private-csvs-a1", "row", dev)
    with pytest.raises(ValueError, match="links no entry"):
        check_substitute_link("docs/deviations.md#demo-private-csvs", "row", dev)
    # an installed wheel has no docs/: the link's form is still checked, its entry cannot be
    missing = tmp_path / "no-docs" / "deviations.md"
    check_substitute_link("docs/deviations.md#demo-private-csvs", "row", missing)
    with pytest.raises(ValueError, match="must be 'docs/deviations.md#"):
        check_substitute_link("see the paper", "row", missing)
