"""Mean and spread over independent runs of a cell's values, written once for every cell type.

A value list is indexed by independent runs (seeds or trials), never by clients or rounds:
the spread of such a list is the noise of the reported statistic, the only spread a verdict
may use (:mod:`repro.engine.compare.verdict`). A type that also carries ``converged`` (one boolean
per
run, e.g. an ADMM stop that was not certified) counts only the converged runs in ``mean``,
``std`` and ``n``; ``n_runs`` counts them all.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["INDEPENDENT", "SeedValues", "check_over"]

# What a value list may be indexed by: independent runs of the whole protocol.
INDEPENDENT = ("seeds", "trials", "runs")


def check_over(over: str, where: str) -> None:
    """Refuse a value list that is not one value per independent run (``over`` names what
    the values are taken over, e.g. ``"trials x clients"`` for a list pooled over clients).
    """
    if over not in INDEPENDENT:
        raise ValueError(
            f"{where}: values taken over {over!r} are not independent runs; their std mixes "
            f"client (or round) spread into the noise of the reported statistic. Give one value "
            f"per run (e.g. each trial's mean over clients) and say over which: one of "
            f"{', '.join(INDEPENDENT)}")


class SeedValues:
    """Mixin for a dataclass with a ``values`` tuple (one number per seed or trial).

    ``mean`` is nan without values; ``std`` is the sample std (``ddof=1``) and nan for fewer
    than two values (a single seed has no measured spread). With a ``converged`` tuple (one
    boolean per value) only the converged values count.
    """

    values: tuple

    @property
    def kept(self) -> tuple:
        """The values that count: all of them, or the converged ones."""
        conv = getattr(self, "converged", None)
        if conv is None:
            return tuple(self.values)
        return tuple(v for v, ok in zip(self.values, conv, strict=True) if ok)

    @property
    def n_runs(self) -> int:
        """Every run that gave a value, converged or not."""
        return len(self.values)

    @property
    def n(self) -> int:
        return len(self.kept)

    @property
    def mean(self) -> float:
        kept = self.kept
        return float(np.mean(kept)) if kept else math.nan

    @property
    def std(self) -> float:
        kept = self.kept
        return float(np.std(kept, ddof=1)) if len(kept) > 1 else math.nan
