"""One query over run records: select by config, group by config fields, read a metric.

The papers' renderers, ``reproduce`` and claims all ask the same questions of a list of
:class:`~repro.engine.records.records.RunRecord`::

    where(records, dataset="adult", method="FairVFL")   # the records of those cells
    by(records, "dataset", "method")                    # {("adult", "FairVFL"): [...], ...}
    values(records, "accuracy")                         # one value per record, in order
    per_seed(records, "accuracy")                       # {seed: value}
    mean(records, "accuracy"), std(records, "accuracy") # over the records (seeds)

Only records that ran (``ok``) are considered unless ``ok_only=False``. ``mean`` and ``std``
are those of :class:`~repro.engine.report.seedstats.SeedValues` (``np.mean``; sample std, nan for
fewer than two values), so a table built from them shows the same digits as a ``Reproduced``
row built from the same values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from repro.engine.records.records import RunRecord
from repro.engine.report.seedstats import SeedValues

__all__ = ["by", "mean", "per_seed", "std", "values", "where"]

_MISSING = object()


def _matches(value: Any, want: Any) -> bool:
    if value is _MISSING:
        return False
    return bool(want(value)) if callable(want) else value == want


def where(records: Iterable[RunRecord], *, ok_only: bool = True,
          **match: Any) -> list[RunRecord]:
    """The records whose config has every ``field=value`` of ``match`` (a callable value is a
    predicate on the field, e.g. ``n=lambda n: n > 1``); a record lacking a field does not
    match. Order is kept.
    """
    return [r for r in records if (r.ok or not ok_only)
            and all(_matches(r.config.get(k, _MISSING), v) for k, v in match.items())]


def by(records: Iterable[RunRecord], *fields: str, ok_only: bool = True
       ) -> dict[tuple, list[RunRecord]]:
    """The records grouped by the values of config ``fields`` (a key is the tuple of those
    values, one per field), groups in order of first appearance; a record lacking a field is
    an error naming it.
    """
    if not fields:
        raise ValueError("by() needs at least one config field")
    out: dict[tuple, list[RunRecord]] = {}
    for r in records:
        if ok_only and not r.ok:
            continue
        missing = [f for f in fields if f not in r.config]
        if missing:
            raise KeyError(f"{r.experiment} record {r.key}: config has no field(s) {missing}")
        out.setdefault(tuple(r.config[f] for f in fields), []).append(r)
    return out


def values(records: Iterable[RunRecord], metric: str | Callable[[RunRecord], float], *,
           ok_only: bool = True) -> tuple[float, ...]:
    """``metric`` of each record, in order: a metric name, or a function of the record (e.g.
    the last point of a curve); a record lacking the metric is an error naming it.
    """
    out = []
    for r in records:
        if ok_only and not r.ok:
            continue
        if callable(metric):
            out.append(float(metric(r)))
        elif metric in r.metrics:
            out.append(float(r.metrics[metric]))
        else:
            raise KeyError(f"{r.experiment} record {r.key}: no metric {metric!r} "
                           f"(it has {sorted(r.metrics)})")
    return tuple(out)


def per_seed(records: Iterable[RunRecord], metric: str | Callable[[RunRecord], float], *,
             seed_field: str = "seed", ok_only: bool = True) -> dict[int, float]:
    """``{config[seed_field]: value}``; two records of one seed are an error (group first)."""
    recs = [r for r in records if r.ok or not ok_only]
    seeds = [int(r.config[seed_field]) for r in recs]
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"per_seed: several records share a {seed_field!r}; select or group "
                         f"them first (where/by)")
    return dict(zip(seeds, values(recs, metric, ok_only=False), strict=True))


class _Values(SeedValues):
    def __init__(self, vals: tuple[float, ...]) -> None:
        self.values = vals


def mean(records: Iterable[RunRecord], metric: str | Callable[[RunRecord], float], *,
         ok_only: bool = True) -> float:
    """Mean of ``metric`` over the records (nan when there are none)."""
    return _Values(values(records, metric, ok_only=ok_only)).mean


def std(records: Iterable[RunRecord], metric: str | Callable[[RunRecord], float], *,
        ok_only: bool = True) -> float:
    """Sample std (``ddof=1``) of ``metric`` over the records; nan for fewer than two."""
    return _Values(values(records, metric, ok_only=ok_only)).std
