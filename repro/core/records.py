"""Run records: what one cell of an experiment produced, saved as JSON.

A :class:`RunRecord` holds the cell's config, its derived seed, scalar metrics, per-round
curves, timings and the versions of everything that could change the numbers. Records are
written atomically (temporary file + ``os.replace``) so that a run killed at any instant leaves
either the whole record or none of it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import platform
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


def record_key(experiment: str, config: dict, data_sha256: dict[str, str]) -> str:
    """Hash of config + package version + data sha256s: where the record lives on disk."""
    ident = canonical_json({
        "experiment": experiment,
        "config": config,
        "fedrepro": versions()["fedrepro"],
        "data": data_sha256,
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

    @property
    def ok(self) -> bool:
        return self.status == STATUS_OK

    def to_json(self) -> str:
        d = _plain(dataclasses.asdict(self))
        d["metrics"] = {k: _json_float(v) for k, v in d["metrics"].items()}
        d["curves"] = {k: [_json_float(v) for v in vs] for k, vs in d["curves"].items()}
        return json.dumps(d, indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> RunRecord:
        d = json.loads(text)
        d["metrics"] = {k: _from_json_float(v) for k, v in d["metrics"].items()}
        d["curves"] = {k: [_from_json_float(v) for v in vs] for k, vs in d["curves"].items()}
        return cls(**d)

    def without_timings(self) -> dict:
        d = dataclasses.asdict(self)
        d.pop("timings")
        return d


def record_path(results_dir: Path, experiment: str, key: str) -> Path:
    return Path(results_dir) / experiment / f"{key}.json"


def save_record(rec: RunRecord, results_dir: Path) -> Path:
    """Write ``rec`` atomically; return its path."""
    path = record_path(results_dir, rec.experiment, rec.key)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
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
    """The record at ``path``, or None if there is none (a torn write never exists)."""
    try:
        return RunRecord.from_json(Path(path).read_text())
    except FileNotFoundError:
        return None
