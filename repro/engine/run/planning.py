"""Which cells an experiment has at a scale, and which of them the results folder holds.

A :class:`PlannedCell` is one cell's config (as its reading gives it), record key (config,
data and code identity: :mod:`repro.engine.run.code_identity`) and seed (the base config only).
:func:`plan` lists them; :func:`collect` reads the saved records back in grid order,
representing a cell without a current record by its newest *stale* one (made by other code,
:func:`stale_records`), never shown as current; :func:`auto_scale` resolves ``--scale auto``;
:func:`is_complete` says whether records cover a scale's full protocol;
:func:`auto_elsewhere` says why ``--scale auto`` leaves an experiment's cells to another
machine (``Experiment.elsewhere``). Nothing here computes a cell
(:mod:`repro.engine.run.runner`) or takes a lock (:mod:`repro.engine.run.locks`).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from repro.core import paths
from repro.core.data.store import record
from repro.engine.experiment import Experiment, cell_seed, read_as
from repro.engine.readings import Reading
from repro.engine.records.records import (
    STATUS_FAILED,
    STATUS_NOT_RUN,
    RunRecord,
    canonical_json,
    load_record,
    record_key,
    record_path,
    scan_records,
)
from repro.engine.run.code_identity import code_hash, git_commit, stale_note


def results_dir() -> Path:
    """Where records go by default: decided by :func:`repro.core.paths.results_dir`."""
    return paths.results_dir()


def data_sha256(exp: Experiment) -> dict[str, str]:
    return {f"{d}/{f}": record(d, f).sha256 for d, f in exp.data}


@dataclass(frozen=True)
class PlannedCell:
    config: dict
    key: str
    seed: int
    code: str = ""
    commit: str = ""
    accelerator: str = ""  # the model it runs on here (Experiment.accelerator), "" the CPU


def plan(exp: Experiment, scale: str, reading: Reading | None = None) -> list[PlannedCell]:
    """The cells of ``exp`` at ``scale`` under ``reading`` (default: the primary) with their
    record keys (the config the reading gives, data and code identity) and seeds (the base
    config's identity only, so neither a code edit nor a reading changes a seed; a reading that
    changes nothing gives exactly the keys and seeds of an experiment without readings).
    """
    reading = exp.primary_reading if reading is None else reading
    shas = data_sha256(exp)
    code, commit = code_hash(exp), git_commit()
    out = []
    for base, c in exp.reading_configs(scale, reading):
        acc = exp.accelerator(c) if exp.accelerator is not None else ""
        out.append(PlannedCell(c, record_key(exp.name, c, shas, code, acc),
                               cell_seed(exp.name, base), code, commit, acc))
    return out


def plan_readings(exp: Experiment, scale: str, which: str | None = "all") -> list[PlannedCell]:
    """The cells of every selected reading, each once (a cell no reading touches is shared)."""
    seen: dict[str, PlannedCell] = {}
    for reading in exp.select_readings(which):
        for cell in plan(exp, scale, reading):
            seen.setdefault(cell.key, cell)
    return list(seen.values())


def stale_records(exp: Experiment, scale: str, out: Path | None = None,
                  cells: list[PlannedCell] | None = None) -> dict[str, RunRecord]:
    """Planned key -> the record shown for a cell that has no current record (default cells:
    the primary reading's): the best record of the same config and data at another key.

    A record of this code made on an accelerator this machine lacks (the cell names a device
    and plans no accelerator here) is this code's result: shown as current (``stale_note``
    ``""``) if it was made on the accelerator model that made most of the grid's such records,
    so a grid shows one model's numbers. Any other is marked and never shown as current: made
    by other code (``stale (code <hash>)``), or on another accelerator than this machine's or
    than the rest of the grid's. A ``not_run`` record at the planned key (nothing computed,
    e.g. a GPU cell on a CPU machine) does not hide a result found this way.
    """
    out = Path(out) if out is not None else results_dir()
    cells = plan(exp, scale) if cells is None else cells
    by_ident: dict[str, list[RunRecord]] = {}
    for rec in scan_records(out, exp.name):
        by_ident.setdefault(canonical_json([rec.config, rec.data]), []).append(rec)
    shas = data_sha256(exp)
    found = []
    for c in cells:
        old = [r for r in by_ident.get(canonical_json([c.config, shas]), []) if r.key != c.key]
        if old:
            found.append((c, old))
    models = Counter(r.accelerator for c, old in found for r in old
                     if _elsewhere(r, c) and r.ok)
    chosen = max(models, key=lambda m: (models[m], m)) if models else ""

    def current(r: RunRecord, c: PlannedCell) -> bool:
        return _elsewhere(r, c) and r.accelerator == chosen

    stale = {}
    for c, old in found:
        here = load_record(record_path(out, exp.name, c.key))
        if here is not None and here.status != STATUS_NOT_RUN:
            continue
        if here is not None:  # a not_run record: only a result replaces it
            old = [r for r in old if r.ok or diverged(r)]
            if not old:
                continue
        rec = max(old, key=lambda r: (current(r, c), str(r.timings.get("finished", ""))))
        rec.stale_note = ("" if current(rec, c) else stale_note(rec.code)
                          if rec.code != c.code or rec.accelerator == c.accelerator else
                          f"stale (made on {rec.accelerator or 'the CPU'}, not on "
                          f"{c.accelerator or chosen or 'the CPU'} as "
                          f"{'here' if c.accelerator else 'the rest of the grid'})")
        stale[c.key] = rec
    return stale


def _elsewhere(rec: RunRecord, cell: PlannedCell) -> bool:
    """Whether ``rec`` is this code's result of ``cell`` made on an accelerator this machine
    lacks: the cell's config names a device other than the CPU, no accelerator is planned for
    it here, and ``rec`` was made by the same code on a named accelerator.
    """
    return (rec.code == cell.code and bool(rec.code) and bool(rec.accelerator)
            and not cell.accelerator and str(cell.config.get("device", "cpu")) != "cpu")


def auto_scale(exp: Experiment, scale: str, out: Path | None = None) -> str:
    """:meth:`Experiment.resolve_scale`, except that ``auto`` is ``extended`` where the
    experiment declares it and the results folder holds a record with a result of one of its
    ``extended`` cells (a current or a stale one): records of the larger budget, once brought
    here, are what the figures, claims and ``repro run`` use, and a partial set is finished by
    the next run on a machine that can. Without such a record ``auto`` stays
    ``reduced`` (or ``paper``).
    """
    if (scale == "auto" and "extended" in exp.scales
            and any(r.ok for r in collect(exp, "extended", out))):
        return "extended"
    return exp.resolve_scale(scale)


def auto_elsewhere(exp: Experiment, requested: str, resolved: str) -> str:
    """Why ``--scale requested`` (resolved to ``resolved``) leaves ``exp``'s cells to another
    machine, or ``""``: its ``Experiment.elsewhere`` hook, consulted under ``auto`` only.

    ``elsewhere(scale)`` (``scale`` as :func:`auto_scale` resolved it) is ``""`` where the cells
    run here, else the reason they do not (what they need, how to run them anyway); the runner
    then records each such cell ``not_run`` with that reason without computing it
    (:func:`repro.engine.run.runner.run_experiments`; fedmm's reduced figure cells on a machine that
    would run them on its CPU, 20-45 CPU-min each). An explicit ``--scale`` never consults it:
    ``repro run NAME --scale reduced`` computes them wherever it is run. The hook is a policy
    of where to run, not part of any cell's computation: it changes no config, key or seed.
    """
    why = exp.elsewhere
    return why(resolved) if requested == "auto" and why is not None else ""


def collect(exp: Experiment, scale: str, out: Path | None = None, *,
            include_stale: bool = True, reading: Reading | None = None) -> list[RunRecord]:
    """The saved records of ``exp`` at ``scale`` under ``reading`` (default: the primary), in
    grid order (cells never run are absent), read as the reading reads them
    (:func:`read_records`).

    A cell without a current record is represented by its newest stale record (made by other
    code, e.g. a GPU sweep this machine cannot redo) unless ``include_stale`` is False; such a
    record carries ``stale_note == "stale (code <hash>)"`` and is never shown as current.
    """
    out = Path(out) if out is not None else results_dir()
    reading = exp.primary_reading if reading is None else reading
    cells = plan(exp, scale, reading)
    stale = stale_records(exp, scale, out, cells) if include_stale else {}
    recs = []
    for c in cells:
        rec = stale.get(c.key) or load_record(record_path(out, exp.name, c.key))
        if rec is not None:
            recs.append(rec)
    return read_records(recs, reading)


DIVERGED = "failed: DivergenceError: "  # the reason the runner gives such a failure


def diverged(rec: RunRecord) -> bool:
    """Whether ``rec`` failed with the named :class:`repro.core.validation.DivergenceError`: the
    algorithm as written left the floats at this cell (constrfl's monks-1 n = 20, say). A cell
    is deterministic (same config, data and code: bitwise the same record), so it diverges at
    the same round again: its outcome is final like a ``not_run`` for missing data. The next
    run does not retry it (``--force`` does), ``repro run`` exits 0 for it and names it, and it
    does not keep a complete run's outputs out of ``figures/`` (:func:`is_complete`); every
    table and the comparison still show the cell without a value, with this reason.
    """
    return rec.status == STATUS_FAILED and rec.reason.startswith(DIVERGED)


def is_complete(exp: Experiment, scale: str, records: list[RunRecord],
                reading: Reading | None = None) -> bool:
    """Whether ``records`` (as :func:`collect` returns them) hold a record of every cell of
    ``exp`` at ``scale`` under ``reading`` (default: the primary) and none of them failed
    other than by a named divergence (:func:`diverged`): the full protocol of what they render
    (a cell recorded ``not_run``, e.g. data unavailable, or diverged is final). Only such
    outputs may replace a complete run's (:func:`repro.core.paths.outputs_place`).
    """
    if scale not in exp.scales:
        return False
    reading = exp.primary_reading if reading is None else reading
    return (len(records) == len(plan(exp, scale, reading))
            and not any(r.status == STATUS_FAILED and not diverged(r) for r in records))


def read_records(records: list[RunRecord], reading: Reading) -> list[RunRecord]:
    """:func:`repro.engine.experiment.read_as`, per record on the reported metrics it carries.

    A metric reading may name metrics that only some cells report (Fair VFL's post-processed
    ``eo_acc`` exists on FedBCD records only): a record is re-read on the reported metrics it
    has, and one that has a reported metric but not its stand-in is the error of ``read_as``.
    """
    if not reading.metrics:
        return records
    return [read_as([r], dataclasses.replace(
        reading, metrics={k: v for k, v in reading.metrics.items() if k in r.metrics}))[0]
        for r in records]
