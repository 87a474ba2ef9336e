"""Fitted readings: an unstated setting chosen on declared calibration rows, judged on the rest.

Where a paper leaves a setting open (a run length, a formula, which published code), several
readings run, one per value of the setting (or a diagnostic's settings, :class:`repro.engine.
causes.Diagnostic`, whose rows carry their setting's label as their reading). A
:class:`FittedReading` declares, in code and before any fit, the search space (the
``candidates``: reading ids of one experiment), which of the experiment's rows calibrate it
(``calibration``: e.g. a table's baseline rows, or one dataset) and, optionally, the groups it
is fitted in separately (``group``: e.g. per dataset). :func:`fit` picks, per group, the
candidate with the most calibration rows reproduced (match or within noise; ties: the smaller
summed gap in units of each row's own width, then the declared order) and judges the other rows
the setting bears on (``applies``), the *held-out* rows, under that choice. The fitted reading
never replaces the primary: the comparison shows, per table, its search space, its calibration
rows, its held-out rows and how many of those it reproduces, and a deviating primary row it
reproduces while held out has the cause ``setting identified`` (:mod:`repro.engine.compare.causes`).

Everything is computed from comparison rows (their verdicts, numbers and widths), so a fit is
the same whether the rows were just judged or read back from ``comparison.csv``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["FitResult", "FittedReading", "declare_fitted", "fit", "fit_all", "fitted_readings",
           "key_of"]

OK = ("match", "within_noise")


def _all(_row: dict) -> bool:
    return True


def _one(_row: dict) -> str:
    return ""


@dataclass(frozen=True)
class FittedReading:
    """One unstated setting, fitted (module docstring). ``calibration_text``, ``group_text``:
    the calibration rows and the grouping in words, for the comparison.
    """

    id: str
    experiment: str
    setting: str
    candidates: tuple[str, ...]
    calibration: Callable[[dict], bool]
    calibration_text: str
    applies: Callable[[dict], bool] = _all
    group: Callable[[dict], str] = _one
    group_text: str = ""

    def __post_init__(self) -> None:
        if len(self.candidates) < 2 or len(set(self.candidates)) != len(self.candidates):
            raise ValueError(f"fitted reading {self.id}: the search space needs at least two "
                             f"distinct candidate readings, got {self.candidates}")


@dataclass
class FitResult:
    """What :func:`fit` found: per group the chosen candidate, the calibration counts of every
    candidate (``{candidate: (ok, total)}``), and the held-out rows under the choice.
    """

    reading: FittedReading
    chosen: dict[str, str] = field(default_factory=dict)
    calibration: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)
    held_out: dict[tuple, dict] = field(default_factory=dict)   # row id -> chosen row
    groups: dict[tuple, str] = field(default_factory=dict)      # row id -> group

    def held_out_row(self, row: dict) -> dict | None:
        """The chosen candidate's row for ``row`` where ``row`` is held out of this fit."""
        if row["experiment"] != self.reading.experiment:
            return None
        return self.held_out.get(_row_id(row))

    def held_out_counts(self, group: str | None = None) -> tuple[int, int]:
        rows = [r for i, r in self.held_out.items() if group is None or self.groups[i] == group]
        return sum(r["verdict"] in OK for r in rows), len(rows)

    def calibration_counts(self, group: str | None = None) -> tuple[int, int]:
        ok = total = 0
        for g, chosen in self.chosen.items():
            if group is None or g == group:
                k, n = self.calibration[g][chosen]
                ok, total = ok + k, total + n
        return ok, total

    def choice_text(self, row: dict) -> str:
        g = self.groups[_row_id(row)]
        k, n = self.calibration_counts(g)
        m, total = self.held_out_counts(g)
        where = f" for {g}" if g else ""
        return (f"chose {self.chosen[g]}{where} on its {n} calibration rows ({k} reproduced); "
                f"held out: {m} of {total} reproduced")

    def tables(self) -> list[str]:
        return sorted({str(i[0]) for i in self.held_out} | {str(i[0]) for i in self.groups})


_FITTED: dict[str, FittedReading] = {}


def declare_fitted(*readings: FittedReading) -> None:
    """Register fitted readings (by id; a second, different one is an error)."""
    for f in readings:
        if f.id in _FITTED and _FITTED[f.id] != f:
            raise ValueError(f"two fitted readings named {f.id}")
        _FITTED[f.id] = f


def fitted_readings() -> dict[str, FittedReading]:
    return dict(_FITTED)


def _row_id(r: dict) -> tuple:
    return (r["table"], r["key"], r["metric"])


def key_of(row: dict) -> dict[str, str]:
    """A comparison row's key as a dict: ``"dataset=adult;method=EO"`` -> ``{"dataset":
    "adult", "method": "EO"}``.
    """
    return dict(kv.split("=", 1) for kv in str(row.get("key", "")).split(";") if "=" in kv)


def _num(x) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def gap(row: dict) -> float:
    """|ours - printed| in units of the row's own width (its match width, or its 2σ_diff where
    wider); inf where the row has no number.
    """
    d = abs(_num(row.get("reproduced")) - _num(row.get("reported")))
    width = max(_num(row.get("tolerance")) if row.get("tolerance") != "" else 0.0,
                2 * _num(row.get("sigma_diff")) if row.get("sigma_diff") != "" else 0.0)
    if math.isnan(d):
        return math.inf
    return d / width if width > 0 and not math.isnan(width) else math.inf


def fit(reading: FittedReading, rows: list[dict]) -> FitResult | None:
    """Fit ``reading`` on ``rows`` (comparison rows of every reading); None where no candidate
    has judged rows of its experiment.
    """
    judged = ("match", "within_noise", "deviates")
    per: dict[str, dict[tuple, dict]] = defaultdict(dict)
    for r in rows:
        if (r["experiment"] == reading.experiment and r.get("reading") in reading.candidates
                and r["verdict"] in judged and reading.applies(r)):
            per[r["reading"]][_row_id(r)] = r
    present = [c for c in reading.candidates if per.get(c)]
    if not present:
        return None
    out = FitResult(reading)
    ids = sorted({i for c in present for i in per[c]})
    by_group: dict[str, list[tuple]] = defaultdict(list)
    for i in ids:
        any_row = next(per[c][i] for c in present if i in per[c])
        g = reading.group(any_row)
        out.groups[i] = g
        by_group[g].append((i, reading.calibration(any_row)))
    for g, members in sorted(by_group.items()):
        cal = [i for i, is_cal in members if is_cal]
        scores = {}
        out.calibration[g] = {}
        for order, c in enumerate(present):
            got = [per[c][i] for i in cal if i in per[c]]
            ok = sum(r["verdict"] in OK for r in got)
            out.calibration[g][c] = (ok, len(got))
            scores[c] = (-ok, sum(min(gap(r), 1e6) for r in got), order)
        if not cal:
            continue
        chosen = min(present, key=lambda c: scores[c])
        out.chosen[g] = chosen
        for i, is_cal in members:
            if not is_cal and i in per[chosen]:
                out.held_out[i] = per[chosen][i]
    return out


def fit_all(rows: list[dict]) -> list[FitResult]:
    """Every declared fitted reading fitted on ``rows`` (those with rows)."""
    return [f for f in (fit(r, rows) for r in _FITTED.values()) if f is not None]
