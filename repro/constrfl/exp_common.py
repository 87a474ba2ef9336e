"""Pieces shared by the constrfl experiments: statistics as the evaluation scripts print them."""

from __future__ import annotations

import numpy as np

__all__ = ["fmt", "pop_mean_std"]


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
