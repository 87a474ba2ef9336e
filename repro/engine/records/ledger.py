"""The cells ledger: every rendered cell's numbers, committed beside the tables.

``repro figures`` writes, beside an experiment's tables, ``cells/<experiment>.csv``: one row per
cell it rendered from (every reading's cells), with the cell's key, seed, code identity,
commit, config, its wall time, every metric at full precision (JSON, the record's own numbers),
the sha256 of its curves (bitwise) and a summary of each curve to compare it within tolerance
(:func:`curve_summary`). The ledger is committed with the figures, so anyone can pick a
committed number and recompute the cell that made it without the run records (which are not
committed): ``repro verify`` and ``repro compare NAME --against-committed`` read it.

A ledger written before the curve summaries existed (no ``curves`` column) is read all the
same; its curves can only be compared bitwise, and the commands that read it say so
(:attr:`LedgerRow.old_format`).
"""

from __future__ import annotations

import csv
import fnmatch
import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from repro.engine.records.records import RunRecord, canonical_json

__all__ = ["COLUMNS", "LEDGER_DIR", "LedgerRow", "curve_summary", "curves_sha256",
           "json_number", "read_ledger", "write_ledger"]

LEDGER_DIR = "cells"
COLUMNS = ("experiment", "scale", "key", "seed", "code", "commit", "wall_s", "config",
           "metrics", "curves_sha256", "curves")
CURVE_POINTS = 9  # values kept per curve, evenly spaced from its first to its last
SUMMARY_PARTS = ("min", "max", "mean")


def json_number(x: float):
    """A number as JSON: finite floats exactly (repr round-trips), non-finite as strings."""
    x = float(x)
    return x if math.isfinite(x) else repr(x)


def curves_sha256(curves: dict[str, list[float]]) -> str:
    """sha256 of the curves, bitwise (float64 bytes in key order)."""
    h = hashlib.sha256()
    for k in sorted(curves):
        h.update(k.encode() + b"\0")
        h.update(np.asarray(curves[k], dtype=np.float64).tobytes())
    return h.hexdigest()


def curve_points(length: int) -> list[int]:
    """The indices a summary keeps: every one of a short curve, else :data:`CURVE_POINTS`
    evenly spaced from the first to the last.
    """
    if length <= CURVE_POINTS:
        return list(range(length))
    return sorted({int(i) for i in np.linspace(0, length - 1, CURVE_POINTS).round()})


def curve_summary(values: list[float]) -> dict[str, object]:
    """What the ledger keeps of a curve: its length, its minimum, maximum and mean, and its
    values at :func:`curve_points` (each at full precision). A change anywhere moves the
    sha256; a change of more than round-off shows in these numbers unless it stays between
    the kept points and is too small to move the mean beyond its tolerance.
    """
    v = np.asarray(values, dtype=np.float64)
    out: dict[str, object] = {"n": int(v.size)}
    if v.size:
        out.update({"min": json_number(v.min()), "max": json_number(v.max()),
                    "mean": json_number(v.mean()),
                    "at": [json_number(v[i]) for i in curve_points(v.size)]})
    return out


def summary_values(summary: dict) -> dict[str, object]:
    """A summary as named values: ``n``, ``min``, ``max``, ``mean``, ``[i]`` per kept point."""
    out = {"n": summary.get("n", 0)}
    for part in SUMMARY_PARTS:
        if part in summary:
            out[part] = summary[part]
    n = int(summary.get("n", 0))
    for i, x in zip(curve_points(n), summary.get("at", []), strict=False):
        out[f"[{i}]"] = x
    return out


def write_ledger(exp, scale: str, records: list[RunRecord], out: Path) -> Path | None:
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
                        json.dumps({k: json_number(v) for k, v in sorted(r.metrics.items())}),
                        curves_sha256(r.curves),
                        json.dumps({k: curve_summary(v) for k, v in sorted(r.curves.items())},
                                   separators=(",", ":"))])
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
    curves: dict | None = None  # name -> curve_summary; None in a ledger of the old format

    @property
    def old_format(self) -> bool:
        """Written before the curve summaries: its curves compare bitwise only."""
        return self.curves is None

    @property
    def identity(self) -> tuple[str, str]:
        """The cell's scale and config: what a record of today's code is matched by."""
        return self.scale, canonical_json(self.config)


def read_ledger(figures: Path, pattern: str = "*") -> list[LedgerRow]:
    """Every ledger row under ``figures/cells/`` of the experiments matching ``pattern``."""
    rows = []
    for path in sorted((Path(figures) / LEDGER_DIR).glob("*.csv")):
        if not fnmatch.fnmatchcase(path.stem, pattern):
            continue
        with open(path, newline="") as f:
            for line, r in enumerate(csv.DictReader(f), start=2):
                try:
                    curves = json.loads(r["curves"]) if r.get("curves") is not None else None
                    rows.append(LedgerRow(
                        r["experiment"], r["scale"], r["key"], int(r["seed"]), r["code"],
                        r["commit"], float(r["wall_s"]), json.loads(r["config"]),
                        json.loads(r["metrics"]), r["curves_sha256"], f"{path}:{line}",
                        curves))
                except (KeyError, ValueError, TypeError) as exc:
                    raise ValueError(f"{path}:{line}: not a ledger row ({exc}); rewrite the "
                                     f"ledger with `repro figures`") from None
    return rows


def ledger_experiments(figures: Path) -> list[str]:
    """The experiments with a ledger file under ``figures/cells/``."""
    return sorted(p.stem for p in (Path(figures) / LEDGER_DIR).glob("*.csv"))
