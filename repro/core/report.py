"""Tables: one in-memory form, written as Markdown, CSV and LaTeX side by side."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


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

    def to_markdown(self) -> str:
        head = "| " + " | ".join(self.columns) + " |"
        sep = "|" + "|".join("---" for _ in self.columns) + "|"
        body = ["| " + " | ".join(_md(c) for c in r) + " |" for r in self.rows]
        parts = [f"### {self.title}", ""]
        if self.caption:
            parts += [self.caption, ""]
        return "\n".join(parts + [head, sep, *body]) + "\n"

    def to_csv(self) -> str:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(self.columns)
        w.writerows([[_plain(c) for c in r] for r in self.rows])
        return buf.getvalue()

    def to_latex(self) -> str:
        spec = "l" * len(self.columns)
        caption = _tex(self.title) + (". " + _tex(self.caption) if self.caption else "")
        lines = [r"\begin{table}[t]", r"\centering", rf"\caption{{{caption}}}",
                 rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
                 " & ".join(_tex(c) for c in self.columns) + r" \\", r"\midrule"]
        lines += [" & ".join(_tex(_plain(c)) for c in r) + r" \\" for r in self.rows]
        lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
        return "\n".join(lines) + "\n"


def write_table(table: Table, out_dir: Path, stem: str) -> list[Path]:
    """Write ``<stem>.md``, ``<stem>.csv`` and ``<stem>.tex`` into ``out_dir``."""
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
                "\\": r"\textbackslash{}", "±": r"$\pm$"}


def _tex(c: object) -> str:
    return "".join(_TEX_ESCAPES.get(ch, ch) for ch in str(c))
