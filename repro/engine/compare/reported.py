"""The papers' printed numbers: the reported CSVs, found by discovery and parsed in one place.

A reported CSV (one row per printed number: ``paper_file, table, <key columns>, metric, value,
std, line, cell``) lives either in ``repro/reported/`` (the four papers of this repository) or
in a paper package's own ``reported/`` folder (``repro/<paper>/reported/<stem>.csv``), so a new
paper adds its CSVs beside its code and edits no list. A stem is the file name without
``.csv`` and must be unique over all those folders.

``line`` and ``cell`` say where the number is printed: the line of the paper's text file
(1-based) and the cell of that line (1-based; a line's cells are its tab-separated fields, or
its blank-separated words where it has no tab, and ``a/b`` counts as two cells). A test reads
the papers' texts and checks every value, std and place (``tests/engine/test_reported_places.py``:
the only code that reads them); a CSV without these columns is refused.

:func:`read_reported` is the one parser (every cell stripped of surrounding blanks); it serves
both readers: the renderers' :class:`PaperValues` (a table's printed value for one cell,
:func:`paper_values`) and the comparison's :class:`ReportedRow` list (:func:`load_reported`).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from repro.engine.report.measured import Measured

REPORTED_DIR = Path(__file__).resolve().parents[2] / "reported"
NON_KEY = ("paper_file", "table", "metric", "value", "std", "line", "cell")
PLACE = ("line", "cell")


def reported_dirs() -> list[Path]:
    """``repro/reported`` and every paper package's existing ``reported/`` folder."""
    from repro.engine.registry import paper_packages

    own = [folder / "reported" for _, folder in paper_packages()]
    return [REPORTED_DIR, *(d for d in own if d.is_dir())]


def reported_files(directories: list[Path] | None = None) -> dict[str, Path]:
    """Stem -> path of every reported CSV, sorted by stem; a stem found twice is an error."""
    found: dict[str, Path] = {}
    for folder in reported_dirs() if directories is None else directories:
        for path in Path(folder).glob("*.csv"):
            if path.stem in found:
                raise ValueError(f"reported table {path.stem!r} is in two places: "
                                 f"{found[path.stem]} and {path}; a stem must be unique")
            found[path.stem] = path
    return dict(sorted(found.items()))


def read_reported(path: Path) -> list[dict[str, str]]:
    """The rows of one reported CSV, in file order, as column -> text with surrounding blanks
    stripped (an empty or missing cell is ``""``).
    """
    with open(path, newline="") as f:
        return [{k: (v or "").strip() for k, v in r.items()} for r in csv.DictReader(f)]


@dataclass(frozen=True)
class ReportedRow:
    """One printed number of a reported CSV, as the comparison judges it."""

    stem: str
    paper_file: str
    table: str
    key: tuple[tuple[str, str], ...]
    metric: str
    text: str
    std: float | None
    line: int = 0
    cell: int = 0
    std_text: str = ""   # the std as printed (its precision), "" where none

    @property
    def place(self) -> str:
        """Where the paper prints it: ``<paper file>:<line>, cell <cell>``."""
        return f"{self.paper_file}:{self.line}, cell {self.cell}"

    @property
    def value(self) -> float:
        try:
            return float(self.text)
        except ValueError:
            return math.nan

    @property
    def key_text(self) -> str:
        return ";".join(f"{k}={v}" for k, v in self.key if v != "")


def load_reported(directory: Path | None = None) -> list[ReportedRow]:
    """Every row of the reported CSVs, by stem then file order: all of them
    (:func:`reported_files`), or those of one ``directory``.
    """
    rows = []
    for path in reported_files(None if directory is None else [Path(directory)]).values():
        for i, r in enumerate(read_reported(path), start=2):
            rows.append(ReportedRow(
                stem=path.stem, paper_file=r["paper_file"], table=r["table"],
                key=tuple((k, v) for k, v in r.items() if k not in NON_KEY),
                metric=r["metric"], text=r["value"],
                std=float(r["std"]) if r.get("std", "") else None, std_text=r.get("std", ""),
                line=_place(path, i, r, "line"), cell=_place(path, i, r, "cell")))
    return rows


def _place(path: Path, row: int, r: dict[str, str], column: str) -> int:
    """The row's ``line`` or ``cell`` (a positive integer), else an error naming the file, the
    row and the remedy.
    """
    text = r.get(column, "")
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{path}:{row}: column {column!r} is {text!r}; every printed number "
                         "carries where the paper prints it (columns 'line' and 'cell': the "
                         "line of the paper's text and the cell of that line, both from 1)")
    return int(text)


class PaperValues:
    """The printed values of one reported CSV (``repro/reported/<stem>.csv`` or a paper
    package's ``reported/<stem>.csv``; ``directory``: look only there), by key and metric.
    """

    def __init__(self, stem: str, directory: Path | None = None) -> None:
        if directory is not None:
            path = Path(directory) / f"{stem}.csv"
            known = sorted(p.stem for p in Path(directory).glob("*.csv"))
        else:
            files = reported_files()
            path, known = files.get(stem, REPORTED_DIR / f"{stem}.csv"), list(files)
        if not path.is_file():
            raise ValueError(f"{path}: no reported values for table {stem!r}; the stems are "
                             f"the file names of the reported CSVs: {', '.join(known)}")
        self.rows = read_reported(path)
        self.stem = stem

    def get(self, metric: str, **key: object) -> tuple[str, str | None] | None:
        """``(value, std)`` of the one row with this metric and key (``""`` = empty column),
        None where the paper prints no such row; ``ValueError`` if several rows match.
        """
        want = {k: "" if v is None else str(v) for k, v in key.items()}
        hits = [r for r in self.rows if r.get("metric") == metric
                and all(r.get(k, "") == v for k, v in want.items())]
        if len(hits) > 1:
            raise ValueError(f"{self.stem}: {len(hits)} reported rows match metric {metric!r} "
                             f"and {want}; name more key columns")
        if not hits:
            return None
        return hits[0]["value"], hits[0].get("std") or None

    def measured(self, values: Sequence[float], metric: str, digits: int = 4,
                 **key: object) -> Measured:
        """A :class:`Measured` cell of ``values`` beside the paper's value for this row."""
        hit = self.get(metric, **key)
        return Measured(tuple(values), *(hit if hit else (None, None)), digits=digits)


@lru_cache(maxsize=32)
def paper_values(stem: str) -> PaperValues:
    """:class:`PaperValues` of the reported CSV ``<stem>`` (read once per process)."""
    return PaperValues(stem)
