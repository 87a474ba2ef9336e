"""Run records: what one cell of an experiment produced, saved as JSON.

A :class:`RunRecord` holds the cell's config, its derived seed, scalar metrics, per-round
curves, timings, the versions of everything that could change the numbers and the identity of
the code that made it (:mod:`repro.engine.run.code_identity`; the git commit when there is one).
Records are written atomically (temporary file + ``os.replace``), mode 0644 so that other users
of a shared filesystem can read them, so that a run killed at any instant leaves either the
whole record or none of it.

A record that cannot be read (torn by hand, truncated, a field missing) is moved aside to
``<results>/<experiment>/quarantine/`` and named in one line on stderr; the cell counts as never
run, so the next run recomputes it and no command stops for it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import platform
import sys
import tempfile
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

STATUS_OK = "ok"
STATUS_NOT_RUN = "not_run"
STATUS_FAILED = "failed"  # the cell raised; kept with its error, retried on the next run


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no whitespace: the identity of a config."""
    return json.dumps(_plain(obj), sort_keys=True, separators=(",", ":"), allow_nan=False)


def _plain(obj: Any) -> Any:
    """Turn numpy scalars/arrays, tuples and dataclasses into JSON-native values."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return _plain(dataclasses.asdict(obj))
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _plain(obj.tolist())
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def _json_float(x: Any) -> Any:
    """NaN/inf are not JSON; store them as strings so a record never silently drops them."""
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)
    return x


def _from_json_float(x: Any) -> Any:
    if x in ("nan", "inf", "-inf"):
        return float(x)
    return x


@cache
def versions() -> dict[str, str]:
    """Versions of Python, the package and every numeric dependency that can change results."""
    out = {"python": platform.python_version()}
    for dist in ("fedrepro", "numpy", "scipy", "cvxpy", "clarabel", "torch"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def record_key(experiment: str, config: dict, data_sha256: dict[str, str],
               code: str = "", accelerator: str = "") -> str:
    """Hash of config + package version + data sha256s + code identity + the accelerator model
    the cell ran on (``""`` for the CPU, which leaves the key as it was before accelerators were
    named): where the record lives on disk. Two GPU models give different last bits, so their
    records never share a key. (The cell's seed is derived from the config alone, never from
    this key.)
    """
    ident = canonical_json({
        "experiment": experiment,
        "config": config,
        "fedrepro": versions()["fedrepro"],
        "data": data_sha256,
        **({"code": code} if code else {}),
        **({"accelerator": accelerator} if accelerator else {}),
    })
    return hashlib.sha256(ident.encode()).hexdigest()[:24]


@dataclass
class RunRecord:
    """Everything one cell produced.

    ``timings`` is the only field allowed to differ between two runs of the same cell.
    """

    experiment: str
    config: dict
    key: str
    seed: int
    status: str = STATUS_OK
    reason: str = ""
    metrics: dict[str, float] = field(default_factory=dict)
    curves: dict[str, list[float]] = field(default_factory=dict)
    timings: dict[str, float | str] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    data: dict[str, str] = field(default_factory=dict)
    code: str = ""  # sha256 of the sources the cell executed (repro.engine.run.code_identity)
    commit: str = ""  # git commit of the checkout that ran it ("" outside a checkout)
    # the accelerator model it ran on, part of its key (e.g. "NVIDIA H100 80GB HBM3"); "" for
    # the CPU, and then not written, so a CPU record's file is what it was before the field
    accelerator: str = ""
    # set when loaded: "" for a current record, "stale (code <hash>)" for one made by other
    # code that is shown because no current record exists; never saved
    stale_note: str = field(default="", compare=False, repr=False)

    @property
    def ok(self) -> bool:
        return self.status == STATUS_OK

    def to_json(self) -> str:
        d = _plain(dataclasses.asdict(self))
        d.pop("stale_note")
        if not d["accelerator"]:
            d.pop("accelerator")
        d["metrics"] = {k: _json_float(v) for k, v in d["metrics"].items()}
        d["curves"] = {k: [_json_float(v) for v in vs] for k, vs in d["curves"].items()}
        return json.dumps(d, indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> RunRecord:
        """Parse a record; :class:`BadRecord` says what is wrong with an unreadable one."""
        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BadRecord(f"not JSON: {exc}") from None
        if not isinstance(d, dict):
            raise BadRecord(f"not a JSON object but {type(d).__name__}")
        missing = [f for f in REQUIRED if f not in d]
        if missing:
            raise BadRecord("field(s) missing: " + ", ".join(missing))
        unknown = sorted(set(d) - {f.name for f in dataclasses.fields(cls)} - {"stale_note"})
        if unknown:
            raise BadRecord("unknown field(s): " + ", ".join(unknown))
        d.pop("stale_note", None)
        if d["status"] not in STATUSES:
            raise BadRecord(f"status {d['status']!r} is not one of {STATUSES}")
        for name in ("metrics", "curves", "config"):
            if not isinstance(d[name], dict):
                raise BadRecord(f"{name} is {type(d[name]).__name__}, not an object")
        try:
            d["metrics"] = {k: float(_from_json_float(v)) for k, v in d["metrics"].items()}
            d["curves"] = {k: [float(_from_json_float(v)) for v in vs]
                           for k, vs in d["curves"].items()}
        except (TypeError, ValueError) as exc:
            raise BadRecord(f"a metric or curve value is not a number: {exc}") from None
        return cls(**d)

    def without_timings(self) -> dict:
        d = dataclasses.asdict(self)
        d.pop("timings")
        d.pop("stale_note")
        return d


STATUSES = (STATUS_OK, STATUS_NOT_RUN, STATUS_FAILED)
REQUIRED = ("experiment", "config", "key", "seed", "status", "metrics", "curves")


class BadRecord(ValueError):
    """A record file that cannot be used; the message says what is wrong with it."""


def record_path(results_dir: Path, experiment: str, key: str) -> Path:
    return Path(results_dir) / experiment / f"{key}.json"


def save_record(rec: RunRecord, results_dir: Path) -> Path:
    """Write ``rec`` atomically; return its path."""
    path = record_path(results_dir, rec.experiment, rec.key)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        os.fchmod(fd, 0o644)  # mkstemp's 0600 would hide records from a shared cluster's users
        with os.fdopen(fd, "w") as f:
            f.write(rec.to_json())
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def load_record(path: Path) -> RunRecord | None:
    """The record at ``path``, or None if there is none (a torn write never exists).

    A file that is there but unusable is quarantined (:func:`quarantine`) and None returned,
    so the cell counts as never run.
    """
    path = Path(path)
    try:
        rec = RunRecord.from_json(path.read_text())
    except FileNotFoundError:
        return None
    except (BadRecord, UnicodeDecodeError) as exc:
        quarantine(path, str(exc))
        return None
    if rec.key != path.stem:
        quarantine(path, f"its key {rec.key!r} is not its file name")
        return None
    return rec


def quarantine(path: Path, what: str) -> Path | None:
    """Move a bad record to ``<its folder>/quarantine/`` and say so in one line on stderr."""
    dest = path.parent / "quarantine" / path.name
    try:
        dest.parent.mkdir(exist_ok=True)
        if dest.exists():  # an earlier bad copy of the same cell: keep both
            dest = dest.with_name(f"{path.stem}.{os.getpid()}.{dest.stat().st_mtime_ns}.json")
        os.replace(path, dest)
    except FileNotFoundError:  # another process moved it first
        return None
    except OSError as exc:
        print(f"bad record {path}: {what}; could not be moved aside ({exc}); ignored",
              file=sys.stderr)
        return None
    print(f"bad record {path}: {what}; moved to {dest}", file=sys.stderr)
    return dest


def scan_records(results_dir: Path, experiment: str) -> list[RunRecord]:
    """Every readable record in ``<results>/<experiment>/`` (bad ones are quarantined)."""
    folder = Path(results_dir) / experiment
    if not folder.is_dir():
        return []
    recs = (load_record(p) for p in sorted(folder.glob("*.json")) if not p.name.startswith("."))
    return [r for r in recs if r is not None]
