"""Deviation reasons that cite measurements: derived from runs, never written.

A ``docs/deviations.md`` entry that explains deviating rows with numbers was measured on some
runs: a registered experiment's records, under one reading, by some code. :class:`Measured`
declares that; :func:`cite` gives the reason of a row only where the row's own records were
made under the same reading as the measurement and the measurement's records are current
(made by the current code), and the reason's numbers are recomputed from those records, so a
reason cannot cite numbers that the row's runs contradict. Otherwise :class:`CitationRefused`
says why, and the caller writes "unexplained under reading R" with what was tried.

Which reading a record was made under is read from its config: the config entries that the
experiment's readings override (a reading that does not apply to a cell, e.g. relfair's SAFL
under ``epochs``, leaves it as every other reading does, so such a cell is under all of them).
A metric-only reading reads the same records as the reading it copies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from repro.engine.readings import Reading
from repro.engine.records.records import RunRecord

__all__ = ["CitationRefused", "Measured", "cite", "reading_of", "under"]

DEVIATIONS = "docs/deviations.md"


class CitationRefused(ValueError):
    """A measured cause that may not be cited for a row (another reading, stale code, no
    records); the message says which.
    """


@dataclass(frozen=True)
class Measured:
    """A ``docs/deviations.md`` entry backed by runs.

    ``anchor``: the entry; ``reading``: the reading its runs were made under; ``experiment``:
    the registered experiment whose records hold them; ``numbers``: ``records -> {name:
    value}``, the numbers the reason cites, recomputed from the records every time.
    """

    anchor: str
    reading: Reading
    experiment: str
    numbers: Callable[[list[RunRecord]], dict[str, float]]


def _expected(config: dict, reading: Reading, keys: set[str]) -> dict:
    applies = reading.applies_to is None or reading.applies_to(config)
    own = dict(reading.overrides) if applies else {}
    return {k: own.get(k) for k in keys}


def under(record: RunRecord, reading: Reading, readings: tuple[Reading, ...]) -> bool:
    """Whether ``record`` was made under ``reading`` (one of the experiment's ``readings``)."""
    keys = {k for r in readings for k in r.overrides}
    want = _expected(record.config, reading, keys)
    return all(record.config.get(k) == v for k, v in want.items())


def reading_of(records: list[RunRecord], readings: tuple[Reading, ...]) -> list[str]:
    """The ids of the readings every one of ``records`` was made under."""
    return [r.id for r in readings if records and all(under(x, r, readings) for x in records)]


def cite(entry: Measured, row_records: list[RunRecord], readings: tuple[Reading, ...],
         measured: list[RunRecord]) -> str:
    """The reason a row deviates, citing ``entry`` with its numbers recomputed from
    ``measured`` (the records of ``entry.experiment``); refuses (:class:`CitationRefused`)
    where the row's records were made under another reading than the measurement, where the
    measurement's records are stale or absent.
    """
    rid = entry.reading.id
    if not row_records or not all(under(r, entry.reading, readings) for r in row_records):
        made = reading_of(row_records, readings) or ["another reading"]
        raise CitationRefused(f"{DEVIATIONS}#{entry.anchor} was measured under reading {rid}; "
                              f"this row's runs are under {' / '.join(made)}")
    ok = [r for r in measured if r.ok and r.experiment == entry.experiment]
    if not ok:
        raise CitationRefused(f"no records of {entry.experiment}, which "
                              f"{DEVIATIONS}#{entry.anchor} cites")
    stale = sorted({r.stale_note for r in ok if r.stale_note})
    if stale:
        raise CitationRefused(f"the records of {entry.experiment} that {DEVIATIONS}#"
                              f"{entry.anchor} cites were made by other code ({stale[0]})")
    if not all(under(r, entry.reading, readings) for r in ok):
        raise CitationRefused(f"records of {entry.experiment} under another reading than {rid}")
    nums = ", ".join(f"{k} {v:.3g}" for k, v in entry.numbers(ok).items())
    return f"{nums} (these runs, reading {rid}); see {DEVIATIONS}#{entry.anchor}"
