"""Tables: one in-memory form, written as Markdown, CSV and LaTeX side by side; the papers
named by title and year.

A reproduced number is a :class:`Measured` cell: its values over seeds and the value the paper
prints for the same cell. Markdown and LaTeX show it as ``ours (paper)``
(``82.82 ± 0.39 (83.0 ± 0.0)``; ``(—)`` where the paper prints nothing for that cell); the CSV
gives each such column as numbers in separate columns: ``<col> mean``, ``<col> std``,
``<col> n``, ``<col> paper``, ``<col> paper std``.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections import Counter
from collections.abc import Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import ClassVar

import numpy as np

from repro.engine.reported import REPORTED_DIR as REPORTED_DIR  # re-exported: tests read it
from repro.engine.reported import reported_files
from repro.engine.seedstats import SeedValues

NO_PAPER_VALUE = "—"
MEASURED_NOTE = ("Each cell: ours (paper), ours = mean ± sample std over seeds; (—): the paper "
                 "prints no value for this cell.")
_MEASURED_PARTS = ("mean", "std", "n", "paper", "paper std")


@dataclass(frozen=True)
class Paper:
    """One paper file of ``shared/papers/``, named as a reader would cite it."""

    file_id: str  # the three-digit prefix of the paper file, e.g. "003"
    title: str
    authors: str
    year: int
    package: str
    version: str = ""  # "[C] conference version" where one paper has two versions

    @property
    def name(self) -> str:
        """``Title (year)``, with the version where there is one."""
        return f"{self.title} ({self.year}{', ' + self.version if self.version else ''})"

    @property
    def citation(self) -> str:
        return f"{self.authors}, *{self.title}* ({self.year}" + (
            f", {self.version})" if self.version else ")")


# The papers, declared by their packages' ``experiments/__init__.py`` (:func:`declare_paper`):
# the engine lists none, so a new paper edits no list of the engine.
_DECLARED: list[Paper] = []


def declare_paper(paper: Paper) -> Paper:
    """Make ``paper`` known (to :func:`paper_of` and the comparison) from a paper package's
    ``experiments`` module; declaring the same paper again is harmless, another paper under a
    known file id is an error.
    """
    for p in _DECLARED:  # not known_papers(): that would import the packages being imported
        if p.file_id == paper.file_id and p.version == paper.version:
            if p != paper:
                raise ValueError(f"paper file id {paper.file_id!r} is already {p.name}")
            return paper
    _DECLARED.append(paper)
    return paper


def known_papers() -> tuple[Paper, ...]:
    """The papers the discovered packages declare (:func:`declare_paper`)."""
    from repro.engine.registry import load_all

    load_all()  # imports every paper's experiments package, which declares its paper(s)
    return tuple(_DECLARED)


def paper_of(paper_file: str) -> Paper:
    """The paper of a reported row's ``paper_file`` (``"003_733a...txt"`` or ``"003"``)."""
    prefix = Path(str(paper_file)).name.split("_", 1)[0]
    for p in known_papers():
        if p.file_id == prefix:
            return p
    raise ValueError(f"paper_file {paper_file!r} names no paper declared by a package (known: "
                     f"{', '.join(p.file_id for p in known_papers())}); declare it with "
                     f"repro.engine.report.declare_paper in the paper's experiments module")


def paper_name(paper_file: str) -> str:
    """``Title (year, version)`` of a reported row's ``paper_file``."""
    return paper_of(paper_file).name


def papers_of(package: str) -> list[Paper]:
    """The papers a package reproduces (fairvfl: the two versions 000 and 001)."""
    return [p for p in known_papers() if p.package == package]


def package_papers(package: str) -> str:
    """``Title (year, version); ...`` of a package's papers ("" for ``core``)."""
    return "; ".join(p.name for p in papers_of(package))


def smoke_banner(rows: Sequence[dict]) -> str:
    """A one-paragraph warning when any verdict (a row with ``experiment``, ``scale`` and a
    ``verdict`` other than ``not_run``) comes from smoke-scale records, naming those
    experiments; ``""`` when none does.
    """
    judged = [r for r in rows if r.get("verdict") != "not_run" and r.get("scale")]
    smoke = sorted({r["experiment"] for r in judged if r["scale"] == "smoke"})
    if not smoke:
        return ""
    every = len(smoke) == len({r["experiment"] for r in judged})
    which = ("every experiment judged here" if every else
             f"{len(smoke)} experiment{'s' if len(smoke) > 1 else ''} ({', '.join(smoke)})")
    return (f"**SMOKE SCALE: these verdicts are not the reproduction.** The verdicts of {which} "
            "come from smoke runs (seconds-long versions with fewer rounds and seeds, "
            "subsampled data) that test the pipeline; only `paper`-scale records (or "
            "`reduced` or `extended`, where an experiment declares them) reproduce the papers: "
            "`make paper-figures`.")


@dataclass(frozen=True)
class Measured(SeedValues):
    """A reproduced cell: ``values`` over seeds, beside the ``paper``'s printed text for it.

    ``paper`` is None where the paper prints no value for the cell (an ablation row, a
    column of ours); ``paper_std`` the paper's printed std, if any; ``digits`` the decimals
    shown for ours.
    """

    values: tuple[float, ...]
    paper: str | None = None
    paper_std: str | None = None
    digits: int = 4
    # the table caption's note on what a cell shows; a subclass with another statistic
    # (e.g. a population std) says so here
    note: ClassVar[str] = MEASURED_NOTE

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", tuple(float(v) for v in self.values))


    @property
    def paper_text(self) -> str:
        if self.paper is None:
            return NO_PAPER_VALUE
        return self.paper + (f" ± {self.paper_std}" if self.paper_std else "")

    @property
    def shown_digits(self) -> int:
        """Decimals shown for ours: the paper's printed precision + 1 digit where it prints a
        value in fixed notation, else ``digits`` (the CSV keeps full precision).
        """
        printed = printed_decimals(self.paper)
        return self.digits if printed is None else printed + 1

    def __str__(self) -> str:
        return f"{mean_std(self.values, self.shown_digits)} ({self.paper_text})"

    def csv_cells(self) -> list[object]:
        """``mean, std, n, paper, paper std`` as numbers (empty where there is none)."""
        return [_number(self.mean), _number(self.std), self.n,
                "" if self.paper is None else _number(_float(self.paper)),
                "" if not self.paper_std else _number(_float(self.paper_std))]


def printed_decimals(text: str | None) -> int | None:
    """Decimals of a number printed in fixed notation (``"83.0"`` -> 1, ``"56"`` -> 0); None
    for no value, scientific notation or text (``"NA"``).
    """
    m = re.fullmatch(r"\s*[-+]?\d+(?:\.(\d*))?\s*%?\s*", str(text)) if text is not None else None
    return None if m is None else len(m.group(1) or "")


def round_to_printed(x: float, printed: str | None, digits: int = 4) -> str:
    """``x`` shown to the printed precision of ``printed`` + 1 digit (``digits`` decimals where
    ``printed`` is not a number in fixed notation); md files only, CSVs keep full precision.
    """
    d = printed_decimals(printed)
    return f"{x:.{digits if d is None else d + 1}f}"


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan


def _number(x: float) -> object:
    return "" if math.isnan(x) else x


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
        with open(path, newline="") as f:
            self.rows = [{k: (v or "").strip() for k, v in r.items()} for r in csv.DictReader(f)]
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


@dataclass
class Table:
    """A titled grid of already formatted cells (strings) or numbers."""

    title: str
    columns: list[str]
    rows: list[list[object]] = field(default_factory=list)
    caption: str = ""

    def add(self, *cells: object) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"row has {len(cells)} cells, table has {len(self.columns)} columns")
        self.rows.append(list(cells))

    def _measured_columns(self) -> list[bool]:
        return [any(isinstance(r[j], Measured) for r in self.rows)
                for j in range(len(self.columns))]

    def _full_caption(self) -> str:
        notes = dict.fromkeys(c.note for r in self.rows for c in r if isinstance(c, Measured))
        return " ".join(p for p in (self.caption, *notes) if p)

    def to_markdown(self) -> str:
        head = "| " + " | ".join(self.columns) + " |"
        sep = "|" + "|".join("---" for _ in self.columns) + "|"
        body = ["| " + " | ".join(_md(c) for c in r) + " |" for r in self.rows]
        parts = [f"### {self.title}", ""]
        caption = self._full_caption()
        if caption:
            parts += [caption, ""]
        return "\n".join(parts + [head, sep, *body]) + "\n"

    def to_csv(self) -> str:
        """One column per plain column; five numeric columns per column of
        :class:`Measured` cells (a plain cell there, e.g. "not run", leaves them empty).
        """
        measured = self._measured_columns()
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        header: list[str] = []
        for col, m in zip(self.columns, measured, strict=True):
            header += [f"{col} {p}" for p in _MEASURED_PARTS] if m else [col]
        w.writerow(header)
        for r in self.rows:
            out: list[object] = []
            for c, m in zip(r, measured, strict=True):
                if not m:
                    out.append(_plain(c))
                elif isinstance(c, Measured):
                    out += c.csv_cells()
                else:
                    out += [""] * len(_MEASURED_PARTS)
            w.writerow(out)
        return buf.getvalue()

    def to_latex(self) -> str:
        spec = "l" * len(self.columns)
        caption = _tex(self.title) + (". " + _tex(self._full_caption())
                                      if self._full_caption() else "")
        lines = [r"\begin{table}[t]", r"\centering", rf"\caption{{{caption}}}",
                 rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
                 " & ".join(_tex(c) for c in self.columns) + r" \\", r"\midrule"]
        lines += [" & ".join(_tex(_plain(c)) for c in r) + r" \\" for r in self.rows]
        lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
        return "\n".join(lines) + "\n"


# "from 2 of 3 cells": set while a table or figure is rendered from fewer cells (or seeds)
# than its experiment declares (:func:`rendering_coverage`); titles and captions say so.
RENDERING_COVERAGE: ContextVar[str] = ContextVar("rendering_coverage", default="")
_SEED_KEYS = ("seed", "trial")


def coverage_text(declared: Sequence[dict], recorded: Sequence[dict]) -> str:
    """``"from k of N cells"`` (and ``", as few as k of N seeds per mean"`` where a group of
    cells that differ only in their seed has fewer results than the largest declared group)
    when ``recorded`` (the configs of the cells with a result) are fewer than the ``declared``
    configs; ``""`` when complete. Counted, not matched: a reading adds its settings to a
    record's config, so a record's config need not equal its declared cell's.
    """
    from repro.engine.records import canonical_json

    k, n = min(len(recorded), len(declared)), len(declared)
    if n == 0 or k == n:
        return ""
    text = f"from {k} of {n} cells"

    def groups(configs: Sequence[dict]) -> Counter:
        return Counter(canonical_json({a: b for a, b in c.items() if a not in _SEED_KEYS})
                       for c in configs if any(s in c for s in _SEED_KEYS))

    want, have = groups(declared), groups(recorded)
    if want and have:
        seeds, fewest = max(want.values()), min(have.values())
        if fewest < seeds:
            text += f", as few as {fewest} of {seeds} seeds per mean"
    return text


def coverage_of(exp, scale: str, records: Sequence) -> str:
    """:func:`coverage_text` of an experiment's records at ``scale`` against the cells it
    declares there (``""`` where it declares none it can list).
    """
    try:
        declared = exp.configs(scale)
    except (ValueError, KeyError, OSError):  # an undeclared scale, a data-dependent grid
        return ""
    return coverage_text(declared, [r.config for r in records if getattr(r, "ok", False)])


@contextmanager
def rendering_coverage(text: str):
    """Within: every table written and figure saved says ``text`` (see :func:`coverage_text`)
    in its title and caption.
    """
    token = RENDERING_COVERAGE.set(text)
    try:
        yield
    finally:
        RENDERING_COVERAGE.reset(token)


def partial_title(title: str) -> str:
    """``title`` with ``[partial: from k of N cells]`` where the rendering is partial."""
    cov = RENDERING_COVERAGE.get()
    return f"{title} [partial: {cov}]" if cov and cov not in title else title


def write_table(table: Table, out_dir: Path, stem: str) -> list[Path]:
    """Write ``<stem>.md``, ``<stem>.csv`` and ``<stem>.tex`` into ``out_dir``.

    Rendered from stale records (``repro figures`` sets the note), the caption says so; from
    fewer cells or seeds than declared (:func:`rendering_coverage`), title and caption say so.
    """
    from repro.engine.code_identity import RENDERING_STALE

    if RENDERING_STALE.get() and RENDERING_STALE.get() not in table.caption:
        table.caption = " ".join(filter(None, (f"**{RENDERING_STALE.get()}**: made by other "
                                               "code than this checkout's.", table.caption)))
    cov = RENDERING_COVERAGE.get()
    if cov and cov not in table.caption:
        table.title = partial_title(table.title)
        table.caption = " ".join(filter(None, (
            f"**Partial: rendered {cov}** that the experiment declares at this scale; the "
            "missing cells have no result (run `repro run` again, or see the run's log).",
            table.caption)))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext, text in (("md", table.to_markdown()), ("csv", table.to_csv()),
                      ("tex", table.to_latex())):
        p = out_dir / f"{stem}.{ext}"
        p.write_text(text)
        paths.append(p)
    return paths


def mean_std(values: Sequence[float], digits: int = 4) -> str:
    """``"m ± s"`` over seeds (sample std, ddof=1); a single value prints alone."""
    vals = np.asarray(values, dtype=float)
    if vals.size == 0:
        return "not run"
    if vals.size == 1:
        return f"{vals[0]:.{digits}f}"
    return f"{vals.mean():.{digits}f} ± {vals.std(ddof=1):.{digits}f}"


def _plain(c: object) -> object:
    if isinstance(c, float) and math.isnan(c):
        return "nan"
    return c


def _md(c: object) -> str:
    return str(_plain(c)).replace("|", r"\|")


_TEX_ESCAPES = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
                "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                "\\": r"\textbackslash{}", "±": r"$\pm$", "—": "---"}


def _tex(c: object) -> str:
    return "".join(_TEX_ESCAPES.get(ch, ch) for ch in str(c))
