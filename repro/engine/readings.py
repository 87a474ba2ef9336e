"""Readings of a paper: where its text supports more than one way to run an item.

A :class:`Reading` names one way, with its textual basis (paper file, place, the quoted words,
the spec's A-number) and what it implies for a cell: ``overrides`` merged into the configs it
``applies_to`` (a cell identity, so its record key) and, for a *metric* reading that reuses the
same runs, ``metrics``: which recorded metric stands for which reported one.

Exactly one reading of an experiment is ``primary``; it is chosen by the text before any run
(the paper's own settings appendix wins over generic notation in an algorithm box; where two
passages conflict both become readings), never because its numbers fit better. An experiment
that declares none has the implicit primary :data:`AS_WRITTEN`, which changes nothing: its
cells, seeds and record keys are exactly those of the package before readings existed.

Seeds come from a cell's *base* config (before any override), so the readings of one cell share
their randomness (partition, initial model, streams keyed the same way) and the paired
difference between readings measures the reading, not the seed; the record key comes from the
config a reading gives, so a reading changes the key of the cells it touches and only those.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["AS_WRITTEN", "Reading", "apply_reading", "check_readings", "select_readings"]


@dataclass(frozen=True)
class Reading:
    """One reading of a paper item.

    Parameters
    ----------
    id : short name used on the command line (``--reading ID``) and in ``comparison.csv``.
    title : one line.
    basis : the textual basis: paper file, section or line, and the quoted words.
    spec : the anchors of the ``docs/decisions.md`` entries that settle it (comma-separated,
        e.g. ``"relfair-local-work"``), or ``""``.
    overrides : config entries this reading sets (part of the cell identity).
    applies_to : ``config -> bool``: the cells the overrides touch (default: all).
    metrics : reported metric -> recorded metric that stands for it under this reading (a
        metric reading: the same runs, read another way).
    primary : the reading chosen by the text before any run; exactly one per experiment.
    """

    id: str
    title: str
    basis: str = ""
    spec: str = ""
    overrides: Mapping[str, Any] = field(default_factory=dict)
    applies_to: Callable[[dict], bool] | None = None
    metrics: Mapping[str, str] = field(default_factory=dict)
    primary: bool = False

    def __post_init__(self) -> None:
        if not self.id or not self.id.replace("-", "").replace("_", "").isalnum():
            raise ValueError(f"reading id must be a non-empty word (letters, digits, '-', '_'), "
                             f"got {self.id!r}")

    def apply(self, config: Mapping[str, Any]) -> dict:
        """The config this reading gives ``config`` (a copy; unchanged where it does not
        apply).
        """
        base = dict(config)
        if not self.overrides or (self.applies_to is not None and not self.applies_to(base)):
            return base
        return {**base, **self.overrides}


AS_WRITTEN = Reading("as-written", "the package's one reading (no alternatives declared)",
                     primary=True)


def apply_reading(reading: Reading, config: Mapping[str, Any]) -> dict:
    return reading.apply(config)


def check_readings(name: str, readings: tuple[Reading, ...]) -> None:
    """Raise ``ValueError`` naming the experiment unless the readings have distinct ids and,
    when any are declared, exactly one is primary.
    """
    if not readings:
        return
    ids = [r.id for r in readings]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{name}: reading ids must be distinct, got {ids}")
    primary = [r.id for r in readings if r.primary]
    if len(primary) != 1:
        raise ValueError(f"{name}: exactly one reading must be primary (chosen by the text "
                         f"before any run), got {primary or 'none'} among {ids}")


def select_readings(name: str, readings: tuple[Reading, ...], which: str | None
                    ) -> tuple[Reading, ...]:
    """``which``: ``None`` or ``"all"`` -> every reading (primary first); ``"primary"`` -> the
    primary; else the reading with that id (an unknown id is an error listing the known).
    """
    ordered = tuple(sorted(readings or (AS_WRITTEN,), key=lambda r: not r.primary))
    if which in (None, "all"):
        return ordered
    if which == "primary":
        return ordered[:1]
    chosen = tuple(r for r in ordered if r.id == which)
    if not chosen:
        raise ValueError(f"{name} has no reading {which!r}; it declares "
                         f"{', '.join(r.id for r in ordered)} (or use 'all' / 'primary')")
    return chosen
