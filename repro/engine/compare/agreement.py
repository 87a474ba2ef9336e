"""How a recomputed cell agrees with its committed ledger row, value by value.

:func:`cell_agreement` holds every metric and every curve summary of a record to the committed
ones within the tolerance of :mod:`repro.engine.compare.tolerance` and gives one verdict for the
cell:
``bitwise equal`` (every value and the curves' sha256), ``equal within tolerance`` (with the
largest difference), ``different`` (the values beyond it), or, for a ledger of the old format
whose curves differ bitwise, ``curves unchecked`` (that ledger keeps only their hash; its
metrics are still compared).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from repro.engine.compare.tolerance import (
    BEYOND,
    BITWISE,
    FORM,
    WITHIN,
    Agreement,
    agreement,
    tolerance_for,
)
from repro.engine.records.ledger import (
    LedgerRow,
    curve_summary,
    curves_sha256,
    json_number,
    summary_values,
)

__all__ = ["CURVES_UNCHECKED", "CellAgreement", "cell_agreement", "largest_line",
           "tolerance_line"]

CURVES_UNCHECKED = "curves unchecked"
ABSENT = "absent"


def tolerance_line() -> str:
    """The sentence every command that compares with tolerance prints first."""
    return (f"tolerance per value: {FORM}, x the committed value, u the unit round-off of the "
            "computation's precision, k and s declared per metric (counts and flags: exact); "
            "see docs/usage.md#verify-tolerance")


@dataclass
class CellAgreement:
    """Every value of one cell against the committed ledger row."""

    values: list[Agreement] = field(default_factory=list)
    curves_bitwise: bool = True
    old_format: bool = False
    note: str = ""

    @property
    def beyond(self) -> list[Agreement]:
        return [a for a in self.values if a.status == BEYOND]

    @property
    def verdict(self) -> str:
        if self.beyond:
            return BEYOND
        if self.old_format and not self.curves_bitwise:
            return CURVES_UNCHECKED
        if any(a.status == WITHIN for a in self.values) or not self.curves_bitwise:
            return WITHIN
        return BITWISE

    @property
    def largest(self) -> Agreement | None:
        """The value furthest from the committed one, relative to its bound."""
        moved = [a for a in self.values if a.delta > 0]
        return max(moved, key=lambda a: (a.ratio(), a.delta)) if moved else None


def largest_line(cell: CellAgreement) -> str:
    """``largest |Δ| 2.2e-15 at alg1_feasibility (bound 6.3e-13, 0.35% of it)`` or ``0``."""
    a = cell.largest
    if a is None:
        return "largest |Δ| 0"
    if math.isinf(a.delta):
        return f"largest |Δ| at {a.name}: committed {a.committed!r}, recomputed {a.now!r}"
    share = f"{100 * a.ratio():.2g}% of it" if a.bound > 0 else "exact"
    return f"largest |Δ| {a.delta:.3g} at {a.name} (bound {a.bound:.3g}, {share})"


def _metric_agreements(row: LedgerRow, metrics: dict) -> list[Agreement]:
    now = {k: json_number(v) for k, v in metrics.items()}
    return [agreement(name, row.metrics.get(name, ABSENT), now.get(name, ABSENT),
                      tolerance_for(row.experiment, name))
            for name in sorted(set(row.metrics) | set(now))]


def _curve_agreements(row: LedgerRow, curves: dict) -> list[Agreement]:
    out = []
    committed = row.curves or {}
    for name in sorted(set(committed) | set(curves)):
        tol = tolerance_for(row.experiment, name)
        if name not in committed or name not in curves:
            out.append(agreement(f"curve {name}", "present" if name in committed else ABSENT,
                                 "present" if name in curves else ABSENT, tol))
            continue
        old = summary_values(committed[name])
        new = summary_values(curve_summary(curves[name]))
        if old["n"] != new["n"]:
            out.append(agreement(f"curve {name} length", old["n"], new["n"],
                                 tolerance_for(row.experiment, "rounds")))
            continue
        out += [agreement(f"curve {name} {part}", old[part], new.get(part, ABSENT), tol)
                for part in old if part != "n"]
    return out


def cell_agreement(row: LedgerRow, metrics: dict, curves: dict, status: str = "ok",
                   reason: str = "") -> CellAgreement:
    """The record's ``metrics`` and ``curves`` against ``row`` (``status`` not ``ok``: the cell
    ended without a result, a difference in itself).
    """
    cell = CellAgreement(old_format=row.old_format)
    if status != "ok":
        first = reason.splitlines()[0][:100] if reason else ""
        cell.values.append(Agreement("status", "ok", f"{status}: {first}", BEYOND, math.inf,
                                     0.0))
        return cell
    cell.values = _metric_agreements(row, metrics)
    cell.curves_bitwise = curves_sha256(curves) == row.curves_sha256
    if not cell.curves_bitwise:
        if row.old_format:
            cell.note = ("curves differ bitwise; this ledger is of the old format (their sha256 "
                         "only), so they cannot be compared within tolerance: rewrite it with "
                         "`repro figures` on records of the committed run")
        else:
            moved = _curve_agreements(row, curves)
            cell.values += moved
            if all(a.status == BITWISE for a in moved):
                cell.note = ("curves differ bitwise between the points the ledger keeps, "
                             "equal at those")
    return cell
