"""The record query shared by the Fair VFL claims, tables and reproduced rows."""

from __future__ import annotations


def mean_over_seeds(records, metric: str, **match) -> tuple[float, ...]:
    """Values of ``metric`` over the records whose config matches ``match`` (sorted by seed)."""
    rows = [r for r in records if r.ok and all(r.config.get(k) == v for k, v in match.items())]
    return tuple(float(r.metrics[metric]) for r in sorted(rows, key=lambda r: r.config["seed"])
                 if metric in r.metrics)
