"""Every printed number of ``repro/reported/`` against the papers' texts.

Each row of a reported CSV says where the paper prints it (``line``, ``cell``:
:mod:`repro.engine.compare.reported`). This test is the only code that reads the papers' texts:
they lie
in ``../shared/papers/`` beside the checkout (as CI has them). It fails, never skips, when they
are absent: a transcription that nothing checks is no transcription.

For each row: the cell at ``(line, cell)`` of the paper's file is the printed number, equal to
the row's ``value`` as a decimal and at the same precision (``.7080`` = ``0.7080``, not
``0.708``); the row's ``std`` is the number the paper prints beside it (``± s`` or ``(s)``), and
empty exactly where the paper prints none; the line lies inside the region of the row's table
(:data:`TABLES`, each region checked to hold its caption); no two rows share a place. A value
printed as a glyph that is no number (fedmm Table 2, W->D, FedAvgGDA CDAN) is ``NA``.
"""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest

from repro.engine.compare.reported import REPORTED_DIR, load_reported, read_reported

PAPERS = Path(__file__).resolve().parents[2].parent / "shared" / "papers"
NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
CELL = re.compile(rf"^(?P<v>{NUM})%?(?:\s*(?:±\s*(?P<s1>{NUM})|\(\s*(?P<s2>{NUM})\s*\)))?$")

# (paper file, table) -> (first line, last line, caption line, words the caption line starts with)
TABLES = {
    ("000_6d2fcaa5c94b2354.txt", "Table I"): (203, 212, 203, "TABLE I"),
    ("001_70acc2f5fa8635c9.txt", "Table 1"): (1150, 1166, 1166, "TABLE 1"),
    ("001_70acc2f5fa8635c9.txt", "Table 2"): (1167, 1183, 1183, "TABLE 2"),
    ("002_fd6ea8b278c89851.txt", "Table 1"): (343, 358, 358, "Table 1."),
    ("003_733a787503856876.txt", "1"): (360, 376, 360, "Table 1:"),
    ("003_733a787503856876.txt", "2"): (421, 429, 421, "Table 2:"),
    ("003_733a787503856876.txt", "3"): (1008, 1013, 1008, "Table 3:"),
    ("003_733a787503856876.txt", "4"): (1027, 1039, 1027, "Table 4:"),
    ("004_c8bdd02f5ea2bb8e.txt", "Table 1"): (410, 421, 421, "Table 1:"),
    ("004_c8bdd02f5ea2bb8e.txt", "Table 2"): (423, 433, 433, "Table 2:"),
}


def cells(line: str) -> list[str]:
    """A line's cells: tab-separated fields (blank-separated words where there is no tab),
    ``a/b`` as two cells.
    """
    out = []
    for part in (p.strip() for p in (line.split("\t") if "\t" in line else line.split())):
        if part:
            out += part.split("/") if re.fullmatch(r"\d+/\d+", part) else [part]
    return out


def same_number(printed: str | None, ours: str | None) -> bool:
    """Equal as decimals and printed to the same digit (None only equals None)."""
    if printed is None or ours is None:
        return printed is None and ours is None
    a, b = Decimal(printed), Decimal(ours)
    return a == b and a.as_tuple().exponent == b.as_tuple().exponent


def problems(paper_lines: dict[str, list[str]], directory: Path = REPORTED_DIR) -> list[str]:
    """What disagrees between the reported CSVs of ``directory`` and the papers' texts."""
    bad, seen = [], {}
    for path in sorted(Path(directory).glob("*.csv")):
        for i, r in enumerate(read_reported(path), start=2):
            bad += _row_problems(paper_lines, f"{path.name}:{i}", r, seen)
    return bad


def _row_problems(paper_lines, where: str, r: dict[str, str], seen: dict) -> list[str]:
    lines = paper_lines.get(r["paper_file"])
    if lines is None:
        return [f"{where}: no paper text {r['paper_file']}"]
    if not (r.get("line", "").isdigit() and r.get("cell", "").isdigit()):
        return [f"{where}: no place (line {r.get('line')!r}, cell {r.get('cell')!r})"]
    line, cell = int(r["line"]), int(r["cell"])
    lo, hi, _, _ = TABLES.get((r["paper_file"], r["table"]), (0, -1, 0, ""))
    if not lo <= line <= hi:
        return [f"{where}: line {line} is outside {r['table']} (lines {lo}-{hi})"]
    here = cells(lines[line - 1])
    if not 1 <= cell <= len(here):
        return [f"{where}: line {line} has {len(here)} cells, not {cell}"]
    text, bad = here[cell - 1], []
    m = CELL.match(text)
    std = r.get("std", "") or None
    if r["value"] == "NA":
        if m is not None:
            bad.append(f"{where}: NA, but the paper prints {text!r}")
    elif m is None or not same_number(m.group("v"), r["value"]):
        bad.append(f"{where}: value {r['value']}, the paper prints {text!r} at line {line}, "
                   f"cell {cell}")
    elif not same_number(m.group("s1") or m.group("s2"), std):
        bad.append(f"{where}: std {std}, the paper prints {text!r} at line {line}, cell {cell}")
    place = (r["paper_file"], line, cell)
    if place in seen:
        bad.append(f"{where}: the same place as {seen[place]}")
    seen[place] = where
    return bad


def paper_texts() -> dict[str, list[str]]:
    assert PAPERS.is_dir(), (
        f"the papers' texts are not at {PAPERS}: this test checks every number of "
        f"repro/reported/ against them and never skips; put the papers there (beside the "
        f"checkout, in shared/papers/, as CI has them)")
    return {p.name: p.read_text().splitlines() for p in PAPERS.glob("*.txt")}


def test_every_reported_number_is_printed_where_its_row_says():
    texts = paper_texts()
    assert problems(texts) == []
    rows = load_reported(REPORTED_DIR)
    assert len(rows) == 532
    assert {(r.paper_file, r.table) for r in rows} == set(TABLES)


def test_each_table_region_holds_its_caption():
    texts = paper_texts()
    for (paper, table), (lo, hi, caption, words) in TABLES.items():
        assert lo <= caption <= hi, (paper, table)
        assert texts[paper][caption - 1].startswith(words), (paper, table, caption)


@pytest.mark.parametrize("column, new", [("value", None), ("std", None), ("line", "+1"),
                                         ("cell", "+1")])
def test_any_single_change_of_a_value_std_or_place_is_caught(tmp_path, column, new):
    """Every row, one at a time: its value moved by one unit of its last digit (or to another
    precision), its std likewise (a std given where the paper prints none), its line or cell
    moved: each edit alone is a problem.
    """
    import csv

    texts = paper_texts()
    for path in sorted(REPORTED_DIR.glob("*.csv")):
        rows = read_reported(path)
        if column not in rows[0]:   # relfair's and fedmm's tables print no std: no column
            continue
        for i, r in enumerate(rows):
            if column in ("value", "std") and r[column] == "NA":
                continue
            edited = [dict(x) for x in rows]
            if column == "std" and not r.get("std"):
                edited[i][column] = "0.1"   # a std where the paper prints none
            else:
                edited[i][column] = (_nudged(r[column]) if new is None
                                     else str(int(r[column]) + 1))
            folder = tmp_path / column / f"{path.stem}_{i}"
            folder.mkdir(parents=True)
            with open(folder / path.name, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0]))
                w.writeheader()
                w.writerows(edited)
            assert problems(texts, folder), (path.name, i, column, edited[i][column])


def _nudged(text: str) -> str:
    """``text`` one unit of its last printed digit higher (``0.27`` -> ``0.28``)."""
    d = Decimal(text)
    return str(d + Decimal((0, (1,), d.as_tuple().exponent)))


def test_absent_texts_fail_and_do_not_skip(monkeypatch, tmp_path):
    monkeypatch.setitem(globals(), "PAPERS", tmp_path / "nowhere")
    with pytest.raises(AssertionError, match="never skips"):
        paper_texts()
