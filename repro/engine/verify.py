"""Spot-checks of committed results: a ledger of every rendered cell, and ``repro verify``.

``repro figures`` writes, beside an experiment's tables, ``cells/<experiment>.csv``: one row per
cell it rendered from (every reading's cells), with the cell's key, seed, code identity, commit,
config, its wall time, every metric at full precision (JSON, the record's own numbers) and the
sha256 of its curves. The ledger is committed with the figures, so anyone can pick a committed
number and recompute the cell that made it without the run records (which are not committed).

:func:`verify` recomputes a sample of ledger rows with today's code and says, per cell,
``equal`` (every metric bitwise, the curves' hash too), ``different`` (with both numbers of
each differing metric) or ``stale code`` (the code identity of the cell's import closure moved
since the ledger was written: the cell is recomputed all the same and the comparison shown, but
a stale row is never counted as equal).
"""

from __future__ import annotations

import csv
import fnmatch
import hashlib
import json
import math
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from repro.core import paths
from repro.engine.experiment import Experiment
from repro.engine.records import RunRecord, canonical_json
from repro.engine.registry import load_all

__all__ = ["LEDGER_DIR", "LedgerRow", "Outcome", "read_ledger", "verify", "write_ledger"]

LEDGER_DIR = "cells"
COLUMNS = ("experiment", "scale", "key", "seed", "code", "commit", "wall_s", "config",
           "metrics", "curves_sha256")
EQUAL, DIFFERENT, STALE = "equal", "different", "stale code"


def _number(x: float):
    """A metric as JSON: finite floats exactly (repr round-trips), non-finite as strings."""
    x = float(x)
    return x if math.isfinite(x) else repr(x)


def curves_sha256(curves: dict[str, list[float]]) -> str:
    """sha256 of the curves, bitwise (float64 bytes in key order)."""
    h = hashlib.sha256()
    for k in sorted(curves):
        h.update(k.encode() + b"\0")
        h.update(np.asarray(curves[k], dtype=np.float64).tobytes())
    return h.hexdigest()


def write_ledger(exp: Experiment, scale: str, records: list[RunRecord], out: Path) -> Path | None:
    """Write ``out/cells/<experiment>.csv`` from the records with a result (None: none)."""
    ok = sorted((r for r in records if r.ok), key=lambda r: r.key)
    if not ok:
        return None
    folder = Path(out) / LEDGER_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{exp.name}.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for r in ok:
            w.writerow([exp.name, scale, r.key, r.seed, r.code, r.commit,
                        f"{float(r.timings.get('wall_s', math.nan)):.3f}",
                        canonical_json(r.config),
                        json.dumps({k: _number(v) for k, v in sorted(r.metrics.items())}),
                        curves_sha256(r.curves)])
    return path


@dataclass(frozen=True)
class LedgerRow:
    experiment: str
    scale: str
    key: str
    seed: int
    code: str
    commit: str
    wall_s: float
    config: dict
    metrics: dict
    curves_sha256: str
    where: str = ""  # file:line, for messages


def read_ledger(figures: Path, pattern: str = "*") -> list[LedgerRow]:
    """Every ledger row under ``figures/cells/`` of the experiments matching ``pattern``."""
    rows = []
    for path in sorted((Path(figures) / LEDGER_DIR).glob("*.csv")):
        if not fnmatch.fnmatchcase(path.stem, pattern):
            continue
        with open(path, newline="") as f:
            for line, r in enumerate(csv.DictReader(f), start=2):
                try:
                    rows.append(LedgerRow(
                        r["experiment"], r["scale"], r["key"], int(r["seed"]), r["code"],
                        r["commit"], float(r["wall_s"]), json.loads(r["config"]),
                        json.loads(r["metrics"]), r["curves_sha256"], f"{path}:{line}"))
                except (KeyError, ValueError) as exc:
                    raise ValueError(f"{path}:{line}: not a ledger row ({exc}); rewrite the "
                                     f"ledger with `repro figures`") from None
    return rows


@dataclass
class Outcome:
    row: LedgerRow
    verdict: str
    differences: list[tuple[str, object, object]] = field(default_factory=list)
    note: str = ""
    seconds: float = math.nan

    def line(self) -> str:
        cell = f"{self.row.experiment} {self.row.key[:12]} {canonical_json(self.row.config)}"
        if len(cell) > 150:
            cell = cell[:147] + "..."
        text = f"{self.verdict:<10} {cell} ({self.seconds:.1f} s)"
        for name, committed, now in self.differences[:6]:
            text += f"\n    {name}: committed {committed!r}, recomputed {now!r}"
        if len(self.differences) > 6:
            text += f"\n    ... and {len(self.differences) - 6} more"
        if self.note:
            text += f"\n    {self.note}"
        return text


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


def _compare(row: LedgerRow, rec: RunRecord) -> list[tuple[str, object, object]]:
    diffs = []
    now = {k: _number(v) for k, v in rec.metrics.items()}
    for name in sorted(set(row.metrics) | set(now)):
        if row.metrics.get(name, "absent") != now.get(name, "absent"):
            diffs.append((name, row.metrics.get(name, "absent"), now.get(name, "absent")))
    if rec.ok and curves_sha256(rec.curves) != row.curves_sha256:
        diffs.append(("curves (sha256)", row.curves_sha256[:12], curves_sha256(rec.curves)[:12]))
    if not rec.ok:
        diffs.append(("status", "ok", f"{rec.status}: {rec.reason.splitlines()[0][:100]}"))
    return diffs


def verify_row(row: LedgerRow, exps: dict[str, Experiment]) -> Outcome:
    """Recompute one ledger row's cell with today's code (in a temporary results folder)."""
    from repro.engine.executors import limit_threads
    from repro.engine.planning import plan_readings
    from repro.engine.runner import compute_cell

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
    diffs = _compare(row, rec)
    notes = []
    if cell.seed != row.seed:
        diffs.append(("seed", row.seed, cell.seed))
    verdict = DIFFERENT if diffs else EQUAL
    if cell.code != row.code:
        verdict = STALE
        notes.append(f"code {row.code[:12]} in the ledger, {cell.code[:12]} now; the "
                     f"recomputation {'differs' if diffs else 'is equal'}")
    return Outcome(row, verdict, diffs, "; ".join(notes),
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


def verify_command(name: str, sample: int, seed: int, max_seconds: float,
                   out: Path | None) -> int:
    """``repro verify``: recompute a sample of the ledger's cells and print one line each,
    then the counts; the exit status (0 when every recomputed cell is equal, 2 without a
    ledger row, else 1).
    """
    figures = paths.figures_dir(out)
    rows = read_ledger(figures, name)
    if not rows:
        print(f"no ledger rows for {name!r} under {figures / 'cells'} (written by "
              "`repro figures`)", file=sys.stderr)
        return 2
    chosen = sample_rows(rows, sample if sample > 0 else len(rows), seed, max_seconds)
    away = sum(not recomputable_here(r) for r in rows)
    away_text = (f"; {away} made on an accelerator this machine lacks are not drawn" if away
                 else "")
    print(f"recomputing {len(chosen)} of {len(rows)} committed cells ({figures / 'cells'}"
          f"{away_text})", flush=True)
    outcomes = verify(chosen, load_all(), echo=lambda o: print(o.line(), flush=True))
    counts = {}
    for o in outcomes:
        counts[o.verdict] = counts.get(o.verdict, 0) + 1
    print(", ".join(f"{n} {v}" for v, n in sorted(counts.items())))
    return 0 if counts.get(EQUAL, 0) == len(outcomes) else 1
