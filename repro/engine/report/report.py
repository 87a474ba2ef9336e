"""Tables: one in-memory form, written as Markdown, CSV and LaTeX side by side; the papers
named by title and year.

A reproduced number is a :class:`Measured` cell (:mod:`repro.engine.report.measured`): its values
over
seeds and the value the paper prints for the same cell (:mod:`repro.engine.compare.reported`).
Markdown and LaTeX show it as ``ours (paper)`` (``82.82 ± 0.39 (83.0 ± 0.0)``; ``(—)`` where
the paper prints nothing for that cell); the CSV gives each such column as numbers in separate
columns: ``<col> mean``, ``<col> std``, ``<col> n``, ``<col> paper``, ``<col> paper std``.
"""

from __future__ import annotations

import csv
import io
import math
from collections import Counter
from collections.abc import Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from repro.engine.compare.reported import REPORTED_DIR, PaperValues, paper_values

# a table's cells and the paper's values for them, re-exported: the renderers import them here
from repro.engine.report.measured import (
    MEASURED_NOTE,
    MEASURED_PARTS,
    NO_PAPER_VALUE,
    Measured,
    mean_std,
    printed_decimals,
    round_to_printed,
)

__all__ = ["MEASURED_NOTE", "NO_PAPER_VALUE", "REPORTED_DIR", "Measured", "Paper", "PaperValues",
           "Table", "coverage_of", "coverage_text", "declare_paper", "known_papers",
           "mean_std", "package_papers", "paper_name", "paper_of", "paper_values", "papers_of",
           "partial_title", "printed_decimals", "rendering_coverage", "round_to_printed",
           "smoke_banner", "write_table"]


@dataclass(frozen=True)
class Paper:
    """One paper file (``000_*.txt`` ...), named as a reader would cite it."""

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
                     f"repro.engine.report.report.declare_paper in the paper's experiments module")


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
            header += [f"{col} {p}" for p in MEASURED_PARTS] if m else [col]
        w.writerow(header)
        for r in self.rows:
            out: list[object] = []
            for c, m in zip(r, measured, strict=True):
                if not m:
                    out.append(_plain(c))
                elif isinstance(c, Measured):
                    out += c.csv_cells()
                else:
                    out += [""] * len(MEASURED_PARTS)
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
    from repro.engine.records.records import canonical_json

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
    declares there (``""`` where it declares none it can list), with how many of the cells
    without a result diverged (a named divergence: final, a rerun gives it again).
    """
    from repro.engine.run.planning import diverged

    try:
        declared = exp.configs(scale)
    except (ValueError, KeyError, OSError):  # an undeclared scale, a data-dependent grid
        return ""
    text = coverage_text(declared, [r.config for r in records if getattr(r, "ok", False)])
    n_div = sum(diverged(r) for r in records)
    return text + (f" ({n_div} diverged: final, no result to show)" if text and n_div else "")


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
    from repro.engine.run.code_identity import RENDERING_STALE

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
