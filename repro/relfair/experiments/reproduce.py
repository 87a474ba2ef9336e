"""Table 1's reproduced numbers, one per (task, method, metric), addressed like the rows of
``repro/reported/relfair_table1.csv``.

Tolerances (specs/relfair.md §6): accuracies and Gini +-0.03 absolute; R_AB +-20 % of the
reported value (``rel_tolerance``: the comparison reads the reported value, not this module).

Reasons (issue #28): each method's cause entry (``CAUSE_NOTES``) was measured on Table 1's own
runs under one reading (:data:`MEASURED_UNDER`); it is cited, with its numbers recomputed from
the row's records, only for rows whose runs were made under that reading
(:func:`repro.engine.cited.cite`). Under any other reading the row says it is unexplained there
and which entry was not cited. SAFL's cells are the same under every reading (J.2 excludes it
from J), so its entry is cited under all of them.
"""

from __future__ import annotations

import numpy as np

from repro.engine.cited import CitationRefused, Measured, cite
from repro.engine.experiment import Reproduced
from repro.engine.query import by
from repro.engine.records import RunRecord
from repro.relfair.experiments._cells import (
    CAUSE_NOTES,
    DEV,
    DEVIATION_NOTE,
    METRICS,
    READINGS,
)

__all__ = ["MEASURED", "PAPER_RUNS", "table1_reproduce"]

PAPER_RUNS = 1   # specs/relfair.md §6: the paper's numbers are single runs
# the reading the three cause entries of docs/deviations.md were measured under (their text)
MEASURED_UNDER = next(r for r in READINGS if r.id == "steps")


def _mean(records, method: str, metric: str) -> float:
    vals = [r.metrics[metric] for r in records if r.config["method"] == method
            and r.config["task"] == "MNIST"]
    return float(np.mean(vals)) if vals else float("nan")


def _numbers(method: str, against: str | None):
    """The numbers a cause entry states: the method's MNIST acc_all and R_AB, beside
    ``against``'s acc_all where the entry compares with it, from the records handed in.
    """
    def numbers(records) -> dict[str, float]:
        out = {f"{method} acc_all": _mean(records, method, "acc_all")}
        if against:
            out[f"{against} acc_all"] = _mean(records, against, "acc_all")
        out[f"{method} R_AB"] = _mean(records, method, "R_AB")
        return out
    return numbers


# the methods each entry's numbers read: SAFL's entry reads SAFL only (its cells are the same
# under every reading), the others compare with a baseline run under the same reading
COMPARED = {"SAFL": None, "FedAvg": "DRFA"}
MEASURED = {m: Measured(CAUSE_NOTES[m], MEASURED_UNDER, "relfair.table1",
                        _numbers(m, COMPARED.get(m, "FedAvg")))
            for m in CAUSE_NOTES}


def _tolerances(metric: str) -> dict:
    return {"rel_tolerance": 0.2} if metric == "R_AB" else {"tolerance": 0.03}


def reason(method: str, recs: list[RunRecord], records: list[RunRecord]) -> str:
    """The row's reason: the method's measured cause where it may be cited, else unexplained
    under this reading (naming the entry not cited and why).
    """
    if method not in MEASURED:  # a method no cause entry was measured for
        return (f"unexplained: no cause entry of {DEV} was measured for {method}; see "
                f"{DEVIATION_NOTE}")
    against = COMPARED.get(method, "FedAvg")
    reads = [r for r in records if r.config["method"] in (method, against)]
    try:
        return f"{cite(MEASURED[method], recs, READINGS, reads)} and {DEVIATION_NOTE}"
    except CitationRefused as exc:
        return (f"unexplained under this reading; see {DEVIATION_NOTE} (not cited: {exc}; "
                f"the readings tried: {DEV}#relfair-readings-issue-15)")


def table1_reproduce(records: list[RunRecord]) -> list[Reproduced]:
    out = []
    for (task, method), recs in sorted(by(records, "task", "method").items()):
        note = reason(method, recs, records)
        for metric in METRICS:
            values = tuple(r.metrics[metric] for r in sorted(recs, key=lambda r: r.config["seed"]))
            out.append(Reproduced("relfair_table1", {"task": task, "method": method}, metric,
                                  values, **_tolerances(metric), over="seeds",
                                  n_paper=PAPER_RUNS, note=note))
    return out
