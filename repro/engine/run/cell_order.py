"""The order a sweep hands its cells to the workers: longest first.

With a few long cells (a minute or two each) among a thousand short ones, the order decides the
sweep's wall time on a few workers: started last, a long cell runs alone while the other workers
idle; started first, the short cells fill in around it (longest-processing-time-first, within
4/3 of the best schedule's makespan). A cell's cost is its wall time in the committed cell
ledger (``figures/cells/<experiment>.csv``, written by ``repro figures``), looked up by its
key (the config's hash, which does not change with the code); a cell the ledger lacks costs
its experiment's median there, or, for an experiment without a ledger, the median of every
ledger row. Only the order changes: every cell runs, and its record does not depend on when.
"""

from __future__ import annotations

import csv
import statistics
from collections.abc import Sequence
from pathlib import Path

__all__ = ["ledger_costs", "longest_first"]


def ledger_costs(figures: Path) -> dict[str, dict[str, float]]:
    """``{experiment: {cell key: recorded wall seconds}}`` from ``figures/cells/*.csv``
    (empty where there is no ledger; an unreadable row is skipped: the order is a hint).
    """
    out: dict[str, dict[str, float]] = {}
    for path in sorted((Path(figures) / "cells").glob("*.csv")):
        try:
            with open(path, newline="") as f:
                for row in csv.DictReader(f):
                    try:
                        out.setdefault(row["experiment"], {})[row["key"]] = float(row["wall_s"])
                    except (KeyError, TypeError, ValueError):
                        continue
        except OSError:
            continue
    return out


def longest_first(todo: Sequence, costs: dict[str, dict[str, float]]) -> list:
    """``todo`` (pairs ``(experiment, cell)`` with ``.name`` and ``.key``) sorted by estimated
    cost, longest first; equal costs keep their planned order (a stable sort).
    """
    every = [s for per in costs.values() for s in per.values()]
    default = statistics.median(every) if every else 0.0
    medians = {name: statistics.median(per.values()) for name, per in costs.items() if per}

    def cost(item) -> float:
        exp, cell = item
        per = costs.get(exp.name, {})
        return per.get(cell.key, medians.get(exp.name, default))

    return sorted(todo, key=cost, reverse=True)
