"""Table 1's reproduced numbers, one per (task, method, metric), addressed like the rows of
``repro/reported/relfair_table1.csv``.

Tolerances (specs/relfair.md §6): accuracies and Gini +-0.03 absolute; R_AB +-20 % of the
reported value (``rel_tolerance``: the comparison reads the reported value, not this module).
"""

from __future__ import annotations

from repro.engine.experiment import Reproduced
from repro.engine.query import by
from repro.engine.records import RunRecord
from repro.relfair.experiments._cells import (
    CAUSE_NOTES,
    DEV,
    DEVIATION_NOTE,
    METRICS,
)

__all__ = ["PAPER_RUNS", "table1_reproduce"]

PAPER_RUNS = 1   # specs/relfair.md §6: the paper's numbers are single runs


def _tolerances(metric: str) -> dict:
    return {"rel_tolerance": 0.2} if metric == "R_AB" else {"tolerance": 0.03}


def table1_reproduce(records: list[RunRecord]) -> list[Reproduced]:
    out = []
    for (task, method), recs in sorted(by(records, "task", "method").items()):
        for metric in METRICS:
            values = tuple(r.metrics[metric] for r in sorted(recs, key=lambda r: r.config["seed"]))
            out.append(Reproduced("relfair_table1", {"task": task, "method": method}, metric,
                                  values, **_tolerances(metric), over="seeds",
                                  n_paper=PAPER_RUNS,
                                  note=f"see {DEV}#{CAUSE_NOTES[method]} and "
                                       f"{DEVIATION_NOTE}"))
    return out
