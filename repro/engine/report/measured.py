"""A reproduced number beside the paper's: :class:`Measured` and how its digits are shown.

A :class:`Measured` cell holds our values over seeds and the text the paper prints for the
same cell; Markdown and LaTeX show it as ``ours (paper)`` (``82.82 ± 0.39 (83.0 ± 0.0)``;
``(—)`` where the paper prints nothing), with ours to the paper's printed precision + 1 digit
(:func:`printed_decimals`); a CSV gives it as five numbers (:meth:`Measured.csv_cells`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from repro.engine.report.seedstats import SeedValues

NO_PAPER_VALUE = "—"
MEASURED_NOTE = ("Each cell: ours (paper), ours = mean ± sample std over seeds; (—): the paper "
                 "prints no value for this cell.")
MEASURED_PARTS = ("mean", "std", "n", "paper", "paper std")


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


def mean_std(values: Sequence[float], digits: int = 4) -> str:
    """``"m ± s"`` over seeds (sample std, ddof=1); a single value prints alone."""
    vals = np.asarray(values, dtype=float)
    if vals.size == 0:
        return "not run"
    if vals.size == 1:
        return f"{vals[0]:.{digits}f}"
    return f"{vals.mean():.{digits}f} ± {vals.std(ddof=1):.{digits}f}"


def four_digits(x: object) -> str:
    """A number to four significant digits (``0.29731`` -> ``0.2973``); anything else as
    written: how a reason or a Markdown table quotes a value without a printed precision.
    """
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)
