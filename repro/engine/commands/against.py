"""``repro compare NAME --against-committed``: how a rerun agrees with the committed results.

It reads the committed figures folder (``figures/`` of the checkout, or ``--out``) and writes
nothing. Per cell: the current record of each committed ledger row (matched by scale and config,
so a record of other code is found too) held to it within the tolerance of
:mod:`repro.engine.compare.tolerance`. Per row: each committed ``comparison.csv`` row of the named
experiments against the same row recomputed from the current records, its reproduced mean and
std within the tolerance of the row's metric, its verdict the same or not. The exit status is
0 when every cell and row agrees, 1 when one does not, 2 when nothing committed matches.

The tolerance of a row's mean and std: each seed's value may move by ``k u (|x_i| + s)``, and
``|x_i| <= |mean| + sqrt(n) std``, so both are held to ``k u (|mean| + sqrt(n) std + s)``.
"""

from __future__ import annotations

import csv
import math
import sys
from pathlib import Path

from repro.core import paths
from repro.engine.compare.agreement import cell_agreement, largest_line, tolerance_line
from repro.engine.compare.tolerance import (
    BEYOND,
    BITWISE,
    WITHIN,
    Agreement,
    Tolerance,
    tolerance_for,
)
from repro.engine.records.ledger import LEDGER_DIR, read_ledger
from repro.engine.records.records import canonical_json

__all__ = ["against_committed", "row_agreements", "row_bound"]

_ROW_ID = ("experiment", "table", "key", "metric", "reading")


def _row_id(r: dict) -> tuple:
    return tuple(str(r.get(k, "")) for k in _ROW_ID)


def _num(x: object) -> float | None:
    try:
        return float(x) if x not in ("", None) else None
    except (TypeError, ValueError):
        return None


def row_bound(tol: Tolerance, mean: float, std: float, n: float) -> float:
    """The bound on |Δ| of a mean over ``n`` seeds (and of its std)."""
    spread = math.sqrt(max(n, 1.0)) * std if math.isfinite(std) else 0.0
    return tol.k * tol.u * (abs(mean) + spread + tol.s)


def _value(col: str, a: object, b: object, bound: float) -> Agreement:
    x, y = _num(a), _num(b)
    if x is None or y is None:
        same = (x is None and y is None) or str(a) == str(b)
        return Agreement(col, a, b, BITWISE if same else BEYOND, 0.0 if same else math.inf,
                         bound)
    if x == y or (math.isnan(x) and math.isnan(y)):
        return Agreement(col, a, b, BITWISE, 0.0, bound)
    delta = abs(y - x) if math.isfinite(x) and math.isfinite(y) else math.inf
    return Agreement(col, a, b, WITHIN if delta <= bound else BEYOND, delta, bound)


def row_agreements(committed: dict, now: dict) -> list[Agreement]:
    """A committed comparison row against its recomputation: reproduced mean and std within
    :func:`row_bound`, verdict exactly.
    """
    tol = tolerance_for(committed["experiment"], str(committed["metric"]))
    mean, std = _num(committed.get("reproduced")), _num(committed.get("reproduced_std"))
    bound = row_bound(tol, mean or 0.0, std or 0.0, _num(committed.get("n_seeds")) or 1.0)
    out = [_value(col, committed.get(col, ""), now.get(col, ""), bound)
           for col in ("reproduced", "reproduced_std")]
    same = str(committed.get("verdict", "")) == str(now.get("verdict", ""))
    out.append(Agreement("verdict", committed.get("verdict", ""), now.get("verdict", ""),
                         BITWISE if same else BEYOND, 0.0 if same else math.inf, 0.0))
    return out


def _status(values: list[Agreement]) -> str:
    if any(a.status == BEYOND for a in values):
        return BEYOND
    return WITHIN if any(a.status == WITHIN for a in values) else BITWISE


def _counts(statuses: list[str]) -> str:
    return ", ".join(f"{statuses.count(s)} {s}" for s in (BITWISE, WITHIN, BEYOND)
                     if statuses.count(s)) or "none"


def _cells(exp, scale: str, recs: list, committed: Path) -> list[str]:
    """One line per committed ledger row of ``exp`` (and per record it lacks); statuses."""
    rows = read_ledger(committed, exp.name)
    by_id = {(scale, canonical_json(r.config)): r for r in recs}
    statuses, lines = [], []
    for row in rows:
        rec = by_id.pop(row.identity, None)
        label = f"{row.key[:12]} {canonical_json(row.config)}"
        label = label if len(label) <= 110 else label[:107] + "..."
        if rec is None:
            statuses.append("no record")
            lines.append(f"  no record here   {label} (run `repro run {exp.name} --scale "
                         f"{row.scale}`)")
            continue
        cell = cell_agreement(row, rec.metrics, rec.curves, rec.status, rec.reason)
        statuses.append(cell.verdict)
        lines.append(f"  {cell.verdict:<22} {label}: {largest_line(cell)}"
                     + (f"; {cell.note}" if cell.note else ""))
    for rec in by_id.values():
        if rec.ok:
            statuses.append("not committed")
            lines.append(f"  not committed    {rec.key[:12]} {canonical_json(rec.config)}")
    head = (f"{exp.name} [{scale}] cells: {len(rows)} committed in "
            f"{committed / LEDGER_DIR / (exp.name + '.csv')}: "
            + ", ".join(f"{statuses.count(s)} {s}" for s in dict.fromkeys(statuses)))
    if not rows and not lines:
        return [f"{exp.name} [{scale}] cells: no committed ledger ({committed / LEDGER_DIR})"], []
    return [head, *lines], statuses


def _rows(now_rows: list[dict], names: set[str], committed: Path):
    path = committed / "comparison.csv"
    if not path.is_file():
        return [f"rows: no committed {path}"], []
    with open(path, newline="") as f:
        old = [r for r in csv.DictReader(f) if r["experiment"] in names]
    now = {_row_id(r): r for r in now_rows if r["experiment"] in names}
    lines, statuses = [], []
    for r in old:
        new = now.get(_row_id(r))
        label = (f"{r['experiment']} table {r['table']} | {r['key']} | {r['metric']}"
                 + ("" if str(r.get("primary")) == "True" else f" | reading {r['reading']}"))
        if new is None:
            statuses.append("not recomputed")
            lines.append(f"  not recomputed   {label}")
            continue
        values = row_agreements(r, new)
        status = _status(values)
        statuses.append(status)
        mean = values[0]
        moved = "; ".join(f"{a.name}: committed {a.committed}, now {a.now}"
                          + (f", |Δ| {a.delta:.3g} (bound {a.bound:.3g})"
                             if math.isfinite(a.delta) else "")
                          for a in values if a.status != BITWISE)
        lines.append(f"  {status:<22} {label}: {r['verdict']}"
                     + (f", now {new['verdict']}" if new["verdict"] != r["verdict"] else "")
                     + (f"; {moved}" if moved else f"; reproduced {mean.committed}"))
    head = (f"rows: {len(old)} committed in {path}: "
            + ", ".join(f"{statuses.count(s)} {s}" for s in dict.fromkeys(statuses)))
    return [head, *lines], statuses


def against_committed(names: list[str], scale: str, results: Path | None,
                      out: Path | None) -> int:
    """Print how the current records of ``names`` agree with the committed figures folder."""
    from repro.engine.commands.compare_run import alternative_readings, collected
    from repro.engine.commands.figures_run import every_reading
    from repro.engine.compare.compare import compare_readings
    from repro.engine.registry import load_all

    committed = paths.figures_dir(out)
    exps, records = collected(scale, results, names)
    alternatives = alternative_readings(results, exps, records)
    print(f"the current records of {', '.join(sorted(exps))} against the committed results "
          f"in {committed} (nothing is written)")
    print(tolerance_line())
    statuses = []
    for name, exp in exps.items():
        s, recs = records[name]
        lines, st = _cells(exp, s, every_reading(exp, s, results, recs), committed)
        statuses += st
        print("\n".join(lines))
    now_rows = compare_readings(load_all(), records, alternatives)
    lines, st = _rows(now_rows, set(exps), committed)
    print("\n".join(lines))
    agree = sum(s in (BITWISE, WITHIN) for s in st)
    print(f"rows: {agree} of {len(st)} committed rows agree within tolerance "
          f"({_counts(st)}); cells: {sum(s in (BITWISE, WITHIN) for s in statuses)} of "
          f"{len(statuses)} agree")
    if not st and not statuses:
        print("nothing committed to compare with", file=sys.stderr)
        return 2
    ok = all(s in (BITWISE, WITHIN) for s in st + statuses)
    return 0 if ok else 1
