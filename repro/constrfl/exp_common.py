"""Pieces shared by the constrfl experiments: statistics as the evaluation scripts print them,
and table cells that show them beside the paper's printed value."""

from __future__ import annotations

import math

import numpy as np

from repro.engine.report import Measured, paper_values

__all__ = ["PopMeasured", "paper_cell", "paper_d", "pop_mean_std"]


def pop_mean_std(values) -> tuple[float, float]:
    """Mean and POPULATION std (ddof = 0): what the reference evaluation scripts print."""
    v = np.asarray(values, dtype=float)
    return float(v.mean()), float(v.std())


class PopMeasured(Measured):
    """A constrfl table cell, ``ours (paper)``: ours = ``mean ± population std`` (ddof = 0,
    what the reference evaluation scripts print and the paper's tables report), the mean to
    ``digits`` significant digits (the values span 1e-8 to 50), the std to 3; a single value
    (one trial, a count) prints alone, its std 0 in the CSV."""

    note = ("Each cell: ours (paper), ours = mean ± population std (ddof = 0, as the "
            "authors' evaluation scripts and the paper print it); (—): the paper prints no "
            "value for this cell; a single value (one trial, a count) prints alone.")

    @property
    def std(self) -> float:
        return float(np.std(self.values)) if self.values else math.nan

    def __str__(self) -> str:
        ours = ("not run" if not self.values else f"{self.mean:.{self.digits}g}"
                + (f" ± {self.std:.3g}" if self.n > 1 else ""))
        return f"{ours} ({self.paper_text})"


def paper_cell(values, stem: str, metric: str, digits: int = 4, **key) -> PopMeasured:
    """``values`` beside the value ``repro/reported/<stem>.csv`` prints for ``metric`` at
    ``key`` (``(—)`` where it prints none, e.g. an ``n`` the paper did not run)."""
    hit = paper_values(stem).get(metric, **key)
    return PopMeasured(tuple(values), *(hit or (None, None)), digits=digits)


def paper_d(stem: str, dataset: str) -> str | None:
    """The feature dimension ``d`` the paper prints for ``dataset`` in ``<stem>``'s rows."""
    ds = {r["d"] for r in paper_values(stem).rows if r.get("dataset") == dataset}
    if len(ds) > 1:
        raise ValueError(f"{stem}: dataset {dataset!r} has several d values {sorted(ds)}")
    return ds.pop() if ds else None
