"""The record query shared by the Fair VFL claims, tables and reproduced rows, on the engine's
one query (:mod:`repro.engine.records.query`).
"""

from __future__ import annotations

from repro.engine.records.query import values, where


def mean_over_seeds(records, metric: str, **match) -> tuple[float, ...]:
    """Values of ``metric`` over the records that ran and whose config matches ``match``,
    sorted by seed; a record without the metric (e.g. ``eo_acc`` of a Fair VFL cell) is
    skipped.
    """
    rows = sorted(where(records, **match), key=lambda r: r.config["seed"])
    return values([r for r in rows if metric in r.metrics], metric)
