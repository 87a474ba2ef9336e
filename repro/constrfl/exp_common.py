"""Pieces shared by the constrfl experiments: statistics as the evaluation scripts print them,
and values at the paper's printed precision."""

from __future__ import annotations

from decimal import Decimal

import numpy as np

__all__ = ["at_printed_precision", "fmt", "pop_mean_std"]


def pop_mean_std(values) -> tuple[float, float]:
    """Mean and POPULATION std (ddof = 0): what the reference evaluation scripts print."""
    v = np.asarray(values, dtype=float)
    return float(v.mean()), float(v.std())


def fmt(values, digits: int = 4) -> str:
    """``mean (std)`` in the paper's layout."""
    if len(values) == 0:
        return "not run"
    m, s = pop_mean_std(values)
    return f"{m:.{digits}g} ({s:.3g})"


def at_printed_precision(values, printed: str) -> tuple[float, ...]:
    """Round every per-trial value to the decimal place of the paper's printed ``printed``.

    The paper prints objective means with two decimals but their std with three significant
    digits (often 1e-5), and the comparison uses that std as its tolerance; comparing at the
    printed precision is the only reading under which a printed "-0.23" can be matched
    (docs/deviations.md, "constrfl: objective rows compared at the printed precision").
    """
    exp = Decimal(printed).as_tuple().exponent
    return tuple(float(round(float(v), -int(exp))) for v in values)
