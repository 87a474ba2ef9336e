"""``repro verify``: recompute committed cells and say, per cell, how they agree.

:func:`verify` recomputes a sample of the ledger's rows (:mod:`repro.engine.records.ledger`) with
today's code and holds each value to the committed one within the tolerance of
:mod:`repro.engine.compare.tolerance` (:func:`repro.engine.compare.agreement.cell_agreement`). Per
cell:
``bitwise equal``, ``equal within tolerance`` (with the largest difference and its bound),
``different`` (each value beyond its bound, both numbers), ``curves unchecked`` (an old-format
ledger whose curves differ bitwise) or ``stale code`` (the code identity of the cell's import
closure moved since the ledger was written: the cell is recomputed all the same and the
agreement shown, but a stale row never counts as agreeing). Exit status 0 when every cell
drawn is bitwise equal or equal within tolerance.
"""

from __future__ import annotations

import difflib
import math
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from repro.core import paths
from repro.engine.compare.agreement import (
    CellAgreement,
    cell_agreement,
    largest_line,
    tolerance_line,
)
from repro.engine.compare.tolerance import BEYOND, BITWISE, WITHIN, tolerance_for
from repro.engine.experiment import Experiment
from repro.engine.records.ledger import (
    LEDGER_DIR,
    LedgerRow,
    curves_sha256,
    ledger_experiments,
    read_ledger,
    write_ledger,
)
from repro.engine.records.records import canonical_json
from repro.engine.registry import load_all

__all__ = ["AGREE", "DIFFERENT", "EQUAL", "LEDGER_DIR", "STALE", "WITHIN_TOLERANCE",
           "LedgerRow", "Outcome", "curves_sha256", "read_ledger", "verify", "write_ledger"]

EQUAL, WITHIN_TOLERANCE, DIFFERENT, STALE = BITWISE, WITHIN, BEYOND, "stale code"
AGREE = (EQUAL, WITHIN_TOLERANCE)
SHOWN = 6  # differing values printed per cell


@dataclass
class Outcome:
    row: LedgerRow
    verdict: str
    cell: CellAgreement = field(default_factory=CellAgreement)
    note: str = ""
    seconds: float = math.nan

    @property
    def differences(self) -> list[tuple[str, object, object]]:
        """``(name, committed, recomputed)`` of every value beyond its tolerance."""
        return [(a.name, a.committed, a.now) for a in self.cell.beyond]

    def line(self) -> str:
        cell = f"{self.row.experiment} {self.row.key[:12]} {canonical_json(self.row.config)}"
        if len(cell) > 150:
            cell = cell[:147] + "..."
        text = f"{self.verdict:<22} {cell} ({self.seconds:.1f} s)\n    {largest_line(self.cell)}"
        for a in self.cell.beyond[:SHOWN]:
            bound = f", bound {a.bound:.3g}" if math.isfinite(a.delta) else ""
            text += f"\n    {a.name}: committed {a.committed!r}, recomputed {a.now!r}{bound}"
        if len(self.cell.beyond) > SHOWN:
            text += f"\n    ... and {len(self.cell.beyond) - SHOWN} more"
        for note in (self.cell.note, self.note):
            if note:
                text += f"\n    {note}"
        if self.verdict == DIFFERENT:
            notes = {tol_note(self.row.experiment, a.name) for a in self.cell.beyond}
            text += "".join(f"\n    {n}" for n in sorted(notes - {""}))
        return text


def tol_note(experiment: str, name: str) -> str:
    """What the tolerance of a differing value adds (non-convex training), else ``""``."""
    return tolerance_for(experiment, name.removeprefix("curve ").split(" ")[0]).note


def recomputable_here(row: LedgerRow) -> bool:
    """Whether this machine can recompute the row's cell: its config names no device (the
    CPU), the CPU, or CUDA where a CUDA GPU is present (fedmm's extended cells were made on a
    lent GPU; on a CPU machine they are not_run, "needs an accelerator", never recomputed).
    """
    device = str(row.config.get("device", "cpu"))
    if device == "cpu":
        return True
    import torch

    return device.startswith("cuda") and torch.cuda.is_available()


def sample_rows(rows: list[LedgerRow], n: int, seed: int = 0,
                max_seconds: float = math.inf) -> list[LedgerRow]:
    """``n`` rows drawn without replacement (numpy, ``seed``) among those whose recorded wall
    time is at most ``max_seconds`` and whose cell this machine can recompute
    (:func:`recomputable_here`); all of them when fewer.
    """
    pool = [r for r in rows if not r.wall_s > max_seconds and recomputable_here(r)]
    if n >= len(pool):
        return pool
    idx = np.random.default_rng(seed).choice(len(pool), size=n, replace=False)
    return [pool[i] for i in sorted(idx)]


def verify_row(row: LedgerRow, exps: dict[str, Experiment]) -> Outcome:
    """Recompute one ledger row's cell with today's code (in a temporary results folder)."""
    from repro.engine.run.executors import limit_threads
    from repro.engine.run.planning import plan_readings
    from repro.engine.run.runner import compute_cell

    exp = exps.get(row.experiment)
    if exp is None:
        return Outcome(row, DIFFERENT, note=f"{row.where}: no experiment {row.experiment!r} "
                                             "is registered now")
    ident = canonical_json(row.config)
    cell = next((c for c in plan_readings(exp, row.scale, "all")
                 if canonical_json(c.config) == ident), None)
    if cell is None:
        return Outcome(row, DIFFERENT, note=f"{row.where}: today's {row.experiment} plans no "
                                             f"cell with this config at scale {row.scale}")
    with tempfile.TemporaryDirectory(prefix="fedrepro-verify-") as tmp, limit_threads():
        rec = compute_cell(exp, cell, Path(tmp), keep_going=True)
    agreed = cell_agreement(row, rec.metrics, rec.curves, rec.status, rec.reason)
    notes = []
    if cell.seed != row.seed:
        notes.append(f"seed {row.seed} in the ledger, {cell.seed} now")
    verdict = DIFFERENT if cell.seed != row.seed else agreed.verdict
    if cell.code != row.code:
        verdict = STALE
        notes.append(f"code {row.code[:12]} in the ledger, {cell.code[:12]} now; the "
                     f"recomputation is {agreed.verdict}")
    return Outcome(row, verdict, agreed, "; ".join(notes),
                   float(rec.timings.get("wall_s", math.nan)))


def verify(rows: list[LedgerRow], exps: dict[str, Experiment], echo=None) -> list[Outcome]:
    """:func:`verify_row` for each row, in order; ``echo(outcome)`` after each."""
    outcomes = []
    for row in rows:
        outcome = verify_row(row, exps)
        outcomes.append(outcome)
        if echo is not None:
            echo(outcome)
    return outcomes


def _no_rows(name: str, figures: Path) -> int:
    """Say there is nothing to verify for ``name``, with the names that come closest."""
    known = ledger_experiments(figures)
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    hint = (f"; did you mean {' or '.join(close)}?" if close else
            f"; ledgers here: {', '.join(known)}" if known else " (written by `repro figures`)")
    print(f"no ledger rows for {name!r} under {figures / LEDGER_DIR}{hint}", file=sys.stderr)
    return 2


def verify_command(name: str, sample: int, seed: int, max_seconds: float,
                   out: Path | None) -> int:
    """``repro verify``: recompute a sample of the ledger's cells and print two lines each,
    then the counts; the exit status (0 when every recomputed cell agrees within tolerance,
    2 without a ledger row, else 1).
    """
    figures = paths.figures_dir(out)
    rows = read_ledger(figures, name)
    if not rows:
        return _no_rows(name, figures)
    chosen = sample_rows(rows, sample if sample > 0 else len(rows), seed, max_seconds)
    away = sum(not recomputable_here(r) for r in rows)
    away_text = (f"; {away} made on an accelerator this machine lacks are not drawn" if away
                 else "")
    old = sum(r.old_format for r in rows)
    print(f"recomputing {len(chosen)} of {len(rows)} committed cells ({figures / LEDGER_DIR}"
          f"{away_text})", flush=True)
    print(tolerance_line(), flush=True)
    if old:
        print(f"{old} of these ledger rows are of the old format (curves kept as a sha256 "
              "only): their curves compare bitwise, not within tolerance", flush=True)
    outcomes = verify(chosen, load_all(), echo=lambda o: print(o.line(), flush=True))
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.verdict] = counts.get(o.verdict, 0) + 1
    print(", ".join(f"{n} {v}" for v, n in sorted(counts.items())))
    bad = [o for o in outcomes if o.verdict not in AGREE]
    for o in bad:
        print(f"not agreeing: {o.row.experiment} {o.row.key[:12]} ({o.verdict}; {o.row.where})")
    return 0 if not bad else 1
