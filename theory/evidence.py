"""What a check records besides its margin: the terms of its statement and how often each
bit, the named criteria, the code paths of the package it drove, and the paper's own setting.

A statement ``lhs <= a + b + c`` can hold on every instance while one of its terms is zero on
all of them; a bug that only changes that term is then invisible. So each check declares the
terms of its statement (:class:`Term`: a name, the numeric quantity measured and a threshold)
and reports, per instance, the value of each term's quantity; a term whose quantity never
exceeded its threshold fails the check (:class:`theory.result.CheckResult` reads the table
:meth:`Evidence.terms_table` writes).

Criteria are named after the statement they test (``"Lemma 5 (55)"``, ``"hypothesis: applied
step = 1/eta_t"``) and keep their worst margin, so a test can assert which statement a planted
bug broke and by how much. ``paths`` lists the package code paths the check drove, as the keys
of :mod:`theory.paths` (backend, local work, reference flags, dtype).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Evidence", "Term", "render_terms"]


@dataclass(frozen=True)
class Term:
    """A term of a statement: active on an instance when ``predicate`` (the quantity the check
    measures, in words) exceeds ``threshold`` there.
    """

    name: str
    predicate: str
    threshold: float

    def __post_init__(self) -> None:
        if not self.name or not self.predicate:
            raise ValueError("a term needs a name and a predicate")
        if not math.isfinite(self.threshold):
            raise ValueError(f"term {self.name!r}: threshold must be finite, got "
                             f"{self.threshold!r}")


class Evidence:
    """Collects a check's criteria, term activity and paths while it runs."""

    def __init__(self, terms: Sequence[Term]) -> None:
        names = [t.name for t in terms]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate term names in {names}")
        if not terms:
            raise ValueError("a check declares at least one term of its statement")
        self.terms = {t.name: t for t in terms}
        self._seen = dict.fromkeys(names, 0)
        self._active = dict.fromkeys(names, 0)
        self._max = dict.fromkeys(names, -math.inf)
        self.criteria: dict[str, float] = {}
        self.paths: list[str] = []

    # ------------------------------------------------------------------ terms
    def activity(self, name: str, measure) -> bool:
        """Record one instance of term ``name`` with the measured quantity ``measure`` (a number
        or an array, whose largest entry counts; NaN entries are ignored). Returns whether the
        term was active on it.
        """
        term = self.terms[name]
        values = np.asarray(measure, dtype=float).ravel()
        values = values[~np.isnan(values)]
        top = float(values.max()) if values.size else -math.inf
        self._seen[name] += 1
        active = top > term.threshold
        self._active[name] += int(active)
        self._max[name] = max(self._max[name], top)
        return active

    def terms_table(self) -> dict[str, dict]:
        """``{term: {predicate, threshold, active, instances, max}}`` (JSON-able)."""
        return {n: {"predicate": t.predicate, "threshold": t.threshold,
                    "active": self._active[n], "instances": self._seen[n],
                    "max": self._max[n] if math.isfinite(self._max[n]) else None}
                for n, t in self.terms.items()}

    # ------------------------------------------------------------------ criteria and paths
    def criterion(self, name: str, margin) -> float:
        """Keep the worst margin of criterion ``name`` (NaN counts as ``-inf``)."""
        m = float(margin)
        if math.isnan(m):
            m = -math.inf
        self.criteria[name] = min(self.criteria.get(name, math.inf), m)
        return self.criteria[name]

    def path(self, key: str) -> None:
        """The check drove the package on code path ``key`` (:mod:`theory.paths`)."""
        if key not in self.paths:
            self.paths.append(key)

    def worst(self, extra: Iterable[float] = ()) -> float:
        """The smallest margin over the criteria (and ``extra``); ``-inf`` when there is none."""
        values = [*self.criteria.values(), *extra]
        return float(min(values)) if values else -math.inf

    def fields(self) -> dict:
        """The keyword arguments of :class:`~theory.result.CheckResult` this evidence fills."""
        return {"criteria": dict(self.criteria), "terms": self.terms_table(),
                "paths": list(self.paths)}


def render_terms(results) -> list[str]:
    """The per-term activity table of theory.md: one row per (check, term)."""
    out = ["## Term activity", "",
           "Each check declares the terms of its statement with a measured quantity and a "
           "threshold; `active` counts the instances (runs, rounds or samples, as the check "
           "says) where the quantity exceeded the threshold, out of `instances`. A term active "
           "on none fails its check.", "",
           "| check | size | term | quantity | threshold | active / instances | largest |",
           "|---|---|---|---|---|---|---|"]
    def cell(text: str) -> str:  # a norm's bars would split the markdown cell
        return str(text).replace("|", "\\|")

    for r in results:
        for name, t in (getattr(r, "terms", None) or {}).items():
            top = t.get("max")
            out.append(f"| {r.name} | {r.size} | {cell(name)} | {cell(t['predicate'])} | "
                       f"{t['threshold']:.3g} | {t['active']} / {t['instances']} | "
                       f"{'-' if top is None else f'{top:.3g}'} |")
    return [*out, ""]
