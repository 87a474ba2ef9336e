"""Cell code of ``constrfl.adult_b_feature``: Table 2's cell on adult-b with a 39th feature.

Sec. 5.2 says every adult-b sample "has 39 features"; the rebuilt adult-b
(:func:`repro.constrfl.data.adult_b`, docs/decisions.md#constrfl-adult-b) has 38. Each candidate
of :data:`EXTRA` is a raw Adult column that the rebuild drops or binarizes, added z-scored before
``sex`` (which stays last, where the fairness constraint reads it): the capital gain and the
capital loss (the rebuild keeps only their indicators ``> 0``) and the education code (the
integer code of the sorted ``education`` categories; the rebuild keeps ``education-num``).

The cell is Table 2's (:func:`._fair.run_cell`) run unchanged, so a candidate's numbers differ
from the primary's by the data alone: the same hyperparameters, solvers, stopping tests and
evaluation. Only the data source of that cell is replaced, for the duration of one call and under
a lock, by the 39-feature adult-b; Table 2's cached 38-feature problems are bypassed, not
touched, and everything is restored on exit. Table 2's own cell code stays as it is, so its
records stay current.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from repro.constrfl.data import adult_b
from repro.constrfl.experiments import _fair
from repro.core.data.adult import load_adult
from repro.engine.experiment import CellResult, RunContext

__all__ = ["EXTRA", "adult_b_39", "run_cell"]

EXTRA = ("capital-gain", "capital-loss", "education")   # declared before any run
_LOCK = threading.Lock()


def adult_b_39(split: str, extra: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The rebuilt adult-b of ``split`` with the column ``extra`` (z-scored) before ``sex``."""
    if extra not in EXTRA:
        raise ValueError(f"adult-b: the 39th feature must be one of {EXTRA}, got {extra!r}")
    X, y, names = adult_b(split)
    ds = load_adult(split)
    keep = ~np.any(ds.X == "?", axis=1)       # the rows the rebuild keeps (its first step)
    col = ds.X[keep][:, list(ds.feature_names).index(extra)]
    if extra == "education":
        cats = sorted(set(col.tolist()))
        col = np.array([cats.index(v) for v in col])
    v = col.astype(float)
    v = (v - v.mean()) / v.std()
    if len(v) != len(y):
        raise ValueError(f"adult-b {split}: {len(v)} rows of {extra!r} against {len(y)} rows")
    return (np.concatenate([X[:, :-1], v[:, None], X[:, -1:]], axis=1), y,
            [*names[:-1], extra, names[-1]])


@contextmanager
def _with_feature(extra: str) -> Iterator[None]:
    with _LOCK:
        saved = _fair.adult_b, _fair.fair_problem
        _fair.adult_b = lambda split: adult_b_39(split, extra)
        _fair.fair_problem = saved[1].__wrapped__   # uncached: the cache holds 38-feature data
        try:
            yield
        finally:
            _fair.adult_b, _fair.fair_problem = saved


def run_cell(config: dict, ctx: RunContext) -> CellResult:
    """Table 2's cell for ``config`` (its fields) on adult-b with ``config["feature39"]``."""
    with _with_feature(config["feature39"]):
        return _fair.run_cell(config, ctx)
