"""Run an experiment's cells: skip those already recorded, execute the rest in parallel.

Each cell runs in a worker with one BLAS/torch thread (:mod:`repro.engine.run.executors`), so
``--jobs 1`` and ``--jobs N`` give bitwise-equal numbers; its record is written by the worker
as soon as the cell finishes, so an interrupted sweep keeps everything it finished and a rerun
computes only what is missing.

A record's key includes the hash of the code its cells execute
(:mod:`repro.engine.run.code_identity`): after an edit the old records are *stale*, the cells are
recomputed, and the count of stale records is reported. Which cells there are and which are
recorded is :mod:`repro.engine.run.planning`; a worker claims a cell with its lock file
(:mod:`repro.engine.run.locks`) before computing it, so a second run on the same results folder
skips cells being computed elsewhere. The results folder is checked for writability before
any compute. This module holds the sweep itself: claim, compute, save, share, summarize.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from joblib import Parallel, delayed

from repro.core.data.store import DataFileMissing
from repro.core.paths import figures_dir
from repro.core.validation import DivergenceError
from repro.engine.experiment import CellResult, Experiment, NeedsAccelerator, RunContext
from repro.engine.records.records import (
    STATUS_FAILED,
    STATUS_NOT_RUN,
    RunRecord,
    canonical_json,
    load_record,
    record_path,
    save_record,
    versions,
)
from repro.engine.report.why import plain_numbers
from repro.engine.run.cell_order import ledger_costs, longest_first
from repro.engine.run.executors import (
    BACKENDS,
    check_executor,
    executor,
    interrupt_wins,
    limit_threads,
    mark_main_process,
    quiet_worker_interrupt,
)
from repro.engine.run.locks import check_writable, claim, lock_path, release
from repro.engine.run.planning import (
    PlannedCell,
    auto_elsewhere,
    auto_scale,
    collect,
    data_sha256,
    diverged,
    is_complete,
    plan,
    plan_readings,
    read_records,
    results_dir,
    stale_records,
)
from repro.engine.run.progress import LOGGER, cell_bar, worker_logging

# the sweep, and (re-exported) what it plans and claims: ``repro.engine.run.runner`` stays the one
# import of a caller that runs cells
__all__ = ["BACKENDS", "BUSY_REASON", "PlannedCell", "SweepSummary", "auto_scale", "claim",
           "collect", "compute_cell", "data_sha256", "executor", "is_complete", "lock_path",
           "plan", "plan_readings", "read_records", "results_dir", "run_cell", "run_experiment",
           "run_experiments", "stale_records"]

COMPUTED, CACHED, BUSY = "computed", "cached", "busy"
BUSY_REASON = "being computed by another process"


def run_cell(exp: Experiment, cell: PlannedCell, out: Path, keep_going: bool = False,
             force: bool = False) -> tuple[RunRecord, str]:
    """Claim one cell, run it in this process and save its record: ``(record, how)``.

    ``how`` is ``computed``; ``cached`` when another process finished the cell since it was
    planned; ``busy`` when another live process holds its lock (the record returned then is
    not saved: status ``not_run``, the holder in its reason). An exception propagates (naming
    the cell), unless ``keep_going``: then the cell's record has status ``failed`` and the
    error as its reason, and a later run retries it, except a named divergence
    (:func:`repro.engine.run.planning.diverged`: deterministic, so final; ``force`` reruns it).
    """
    worker_logging()
    quiet_worker_interrupt()
    lock = lock_path(out, exp.name, cell.key)
    holder = claim(lock)
    if holder is not None:
        return RunRecord(experiment=exp.name, config=cell.config, key=cell.key, seed=cell.seed,
                         status=STATUS_NOT_RUN,
                         reason=f"{BUSY_REASON} (pid {holder['pid']} on "
                                f"{holder['host']}); rerun after it ends (if that process is "
                                f"gone and on another host, delete {lock})"), BUSY
    try:
        done = None if force else load_record(record_path(out, exp.name, cell.key))
        if done is not None and (done.ok or diverged(done)):  # a divergence is final
            return done, CACHED
        return compute_cell(exp, cell, out, keep_going), COMPUTED
    finally:
        release(lock)


def compute_cell(exp: Experiment, cell: PlannedCell, out: Path, keep_going: bool) -> RunRecord:
    ctx = RunContext(exp.name, cell.config, cell.seed, code=cell.code, results=Path(out))
    rec = RunRecord(experiment=exp.name, config=cell.config, key=cell.key, seed=cell.seed,
                    versions=versions(), data=data_sha256(exp), code=cell.code,
                    commit=cell.commit, accelerator=cell.accelerator)
    t0 = time.perf_counter()
    with limit_threads():
        try:
            result = exp.run_cell(dict(cell.config), ctx)
        except DataFileMissing as exc:
            rec.status = STATUS_NOT_RUN
            rec.reason = "data unavailable: " + str(exc)  # all of it: where looked, remedy
            result = None
        except NeedsAccelerator as exc:
            rec.status = STATUS_NOT_RUN
            rec.reason = "needs an accelerator: " + str(exc)
            result = None
        except Exception as exc:
            if not keep_going:
                if hasattr(exc, "add_note"):
                    exc.add_note(f"in cell {exp.name} {cell.config}")
                raise
            LOGGER.exception("%s %s failed", exp.name, cell.config)
            rec.status = STATUS_FAILED
            # a raw float repr in the message (9.347403948608557e+16) said to 4 digits
            rec.reason = f"failed: {type(exc).__name__}: " + plain_numbers(
                (str(exc).splitlines() or [""])[0])
            result = None
            if isinstance(exc, DivergenceError):  # the curves up to it: drawn as ended there
                rec.curves = {k: [float(x) for x in v] for k, v in ctx.curves.items()}
    if result is not None:
        if not isinstance(result, CellResult):
            raise TypeError(f"{exp.name}.run_cell must return CellResult, got {type(result)}")
        rec.metrics = {k: float(v) for k, v in result.metrics.items()}
        rec.curves = {k: [float(x) for x in v] for k, v in {**ctx.curves,
                                                               **result.curves}.items()}
    rec.timings = {**({k: float(v) for k, v in result.timings.items()} if result else {}),
                   "wall_s": time.perf_counter() - t0,
                   "finished": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    save_record(rec, out)
    return rec


@dataclass
class SweepSummary:
    experiment: str
    scale: str
    computed: int
    cached: int
    not_run: int
    records: list[RunRecord]
    stale: int = 0  # cells whose only records were made by other code (recomputed)
    busy: int = 0  # cells skipped: another live process holds their lock
    diverged: int = 0  # records of a named divergence (final; in computed or cached)
    diverged_now: int = 0  # of those, the ones computed by this sweep


def run_experiments(experiments: list[Experiment], scale: str = "smoke", *, jobs: int = 1,
                    backend: str = "loky", force: bool = False, out: Path | None = None,
                    progress: bool = True, address: str | None = None,
                    keep_going: bool = False, reading: str | None = "all"
                    ) -> list[SweepSummary]:
    """Run every cell of ``experiments`` at ``scale`` that has no current record.

    All missing cells of all experiments go through one executor with one progress bar (with
    its estimate of the time left). A cell planned by several experiments of one
    ``shared_cells`` group (same config, data and code) is computed once and its record saved
    for each of them (``timings['shared_from']`` names the computed one). Current records
    (same config, data and code) are loaded, not recomputed, unless ``force``; records made
    by other code are stale and their cells are recomputed (counted in ``stale``); cells whose
    earlier record says ``not_run`` are retried, so placing missing data and rerunning fills
    them in. Under ``scale="auto"``, an experiment whose registered hook says this machine
    leaves its cells to another one (``Experiment.elsewhere``)
    has its cells without a result recorded ``not_run`` with that reason, never computed.
    With ``keep_going`` a cell that raises is recorded as ``failed`` (and retried by
    the next run, unless it is a named divergence: final, like a not_run for missing data)
    instead of stopping the sweep. The results folder is checked for
    writability before any compute. ``reading``: the readings run (``all`` (default),
    ``primary`` or a reading id; see :mod:`repro.engine.readings`); a cell shared by several
    readings runs once.
    """
    check_executor(backend, jobs)
    out = Path(out) if out is not None else results_dir()
    plans = [(exp, auto_scale(exp, scale, out)) for exp in experiments]
    plans = [(exp, s, plan_readings(exp, s, reading)) for exp, s in plans]
    check_writable(out)
    done, how, todo, stale, shared = _triage(plans, scale, out, force)
    desc = plans[0][0].name if len(plans) == 1 else f"{len(plans)} experiments"
    n_shared = sum(map(len, shared.values()))
    bar = cell_bar(len(todo) + n_shared, f"{desc} [{scale}]", enabled=progress)
    mark_main_process()
    try:
        _execute(todo, shared, done, how, bar, out, jobs=jobs, backend=backend,
                 address=address, keep_going=keep_going, force=force)
    finally:
        bar.close()
    return _summaries(plans, done, how, stale)


def _triage(plans, scale: str, out: Path, force: bool):
    """Sort the planned cells: ``done`` (current records, divergences, cells left to another
    machine), ``todo`` (to compute), ``shared`` (copies of a computed cell, per computed cell)
    and the stale counts per experiment.
    """
    done: dict[tuple[str, str], RunRecord] = {}
    how: Counter = Counter()
    todo: list[tuple[Experiment, PlannedCell]] = []
    stale: Counter = Counter()
    shared: dict[str, list[tuple[Experiment, PlannedCell]]] = {}  # computed cell -> copies
    first: dict[str, tuple[Experiment, PlannedCell]] = {}
    for exp, s, cells in plans:
        away = auto_elsewhere(exp, scale, s)
        old = {} if force and not away else stale_records(exp, s, out, cells)
        shas = data_sha256(exp) if exp.shared_cells else {}
        for cell in cells:
            rec = None if force else load_record(record_path(out, exp.name, cell.key))
            if rec is not None and (rec.ok or diverged(rec)):  # a divergence is final
                done[(exp.name, cell.key)] = rec
                continue
            shown = old.get(cell.key)
            if (not force and shown is not None and not shown.stale_note
                    and (shown.ok or diverged(shown))):
                # this code's result, made on an accelerator this machine lacks: current here
                done[(exp.name, cell.key)] = shown
                continue
            if away:  # `auto` leaves it to another machine: not_run, never computed here
                done[(exp.name, cell.key)] = left_elsewhere(exp, cell, out, away,
                                                            old.get(cell.key))
                how[(exp.name, COMPUTED)] += 1
                continue
            stale[exp.name] += cell.key in old and bool(old[cell.key].stale_note)
            if exp.shared_cells:
                ident = canonical_json([exp.shared_cells, cell.config, shas, cell.code])
                if ident in first:  # the same run, planned by another experiment of the group
                    fe, fc = first[ident]
                    shared.setdefault(f"{fe.name}/{fc.key}", []).append((exp, cell))
                    continue
                first[ident] = (exp, cell)
            todo.append((exp, cell))
    return done, how, todo, stale, shared


def _results(todo, out: Path, stack, *, jobs: int, backend: str, address, keep_going: bool,
             force: bool):
    """``(record, how)`` per cell of ``todo``, in this process or through the executor."""
    if jobs == 1 and backend == "loky":
        return (run_cell(exp, c, out, keep_going, force) for exp, c in todo)
    if not todo:
        return ()
    todo = longest_first(todo, ledger_costs(figures_dir()))
    stack.enter_context(executor(backend, jobs, address))
    # Ray's joblib backend returns lists only: the bar then moves at the end, while
    # records are still written by the workers as each cell finishes.
    order = "list" if backend == "ray" else "generator_unordered"
    # one cell per dispatch: joblib's automatic batching, tuned on the sweep's
    # millisecond cells (not_run ones, short fairvfl ones), handed the last 13
    # relfair cells (~2 min each) to one worker as one batch and left the other
    # idle for ~25 min of a complete run (cells are seconds to minutes:
    # the dispatch overhead is nothing beside them)
    return Parallel(return_as=order, batch_size=1)(
        delayed(run_cell)(exp, c, out, keep_going, force) for exp, c in todo)


def _execute(todo, shared, done, how, bar, out: Path, **run) -> None:
    """Compute ``todo`` (``run``: jobs, backend, address, keep_going, force), filling ``done``
    and ``how`` as each cell ends, and save each computed cell's shared copies.
    """
    with contextlib.ExitStack() as stack:
        stack.enter_context(interrupt_wins())
        for rec, kind in _results(todo, out, stack, **run):
            done[(rec.experiment, rec.key)] = rec
            how[(rec.experiment, kind)] += 1
            if kind == COMPUTED and diverged(rec):
                how[(rec.experiment, "diverged_now")] += 1
            # -v: the line per cell, said here in the parent through the bar's write (a
            # worker's own line would be glued onto the bar, its timestamp split)
            LOGGER.info("%s %s -> %s%s", rec.experiment, rec.config,
                        rec.status if kind == COMPUTED else kind,
                        f" ({rec.timings['wall_s']:.2f}s)" if kind == COMPUTED else "")
            bar.update()
            for exp, cell in shared.pop(f"{rec.experiment}/{rec.key}", []):
                if kind == BUSY:  # not computed here: the copies stay to be computed
                    done[(exp.name, cell.key)] = RunRecord(
                        experiment=exp.name, config=cell.config, key=cell.key,
                        seed=cell.seed, status=STATUS_NOT_RUN, reason=rec.reason)
                    how[(exp.name, BUSY)] += 1
                else:
                    done[(exp.name, cell.key)] = _shared_copy(rec, exp, cell, out)
                    how[(exp.name, COMPUTED)] += 1
                bar.update()


def _summaries(plans, done, how, stale) -> list[SweepSummary]:
    """One :class:`SweepSummary` per experiment, from the cells' records and counts."""
    summaries = []
    for exp, s, cells in plans:
        records = [done[(exp.name, c.key)] for c in cells]
        computed, busy = how[(exp.name, COMPUTED)], how[(exp.name, BUSY)]
        summaries.append(SweepSummary(exp.name, s, computed, len(cells) - computed - busy,
                                      sum(not r.ok and not diverged(r) for r in records),
                                      records, stale=stale[exp.name], busy=busy,
                                      diverged=sum(diverged(r) for r in records),
                                      diverged_now=how[(exp.name, "diverged_now")]))
    return summaries


def left_elsewhere(exp: Experiment, cell: PlannedCell, out: Path, why: str,
                   stale: RunRecord | None) -> RunRecord:
    """The record of a cell ``--scale auto`` leaves to another machine
    (``Experiment.elsewhere``): ``not_run``, ``needs an
    accelerator: <why>``, nothing computed. It is saved (so ``repro figures`` and ``repro
    compare`` say why, and the next run retries it, as for :class:`NeedsAccelerator`), except
    where a stale record with a result stands for the cell (e.g. brought from a GPU machine and
    made by older code): a ``not_run`` record at the current key would hide it.
    """
    rec = RunRecord(experiment=exp.name, config=cell.config, key=cell.key, seed=cell.seed,
                    status=STATUS_NOT_RUN, reason="needs an accelerator: " + why,
                    versions=versions(), data=data_sha256(exp), code=cell.code,
                    commit=cell.commit, accelerator=cell.accelerator,
                    timings={"wall_s": 0.0, "finished": datetime.now(timezone.utc).isoformat(
                        timespec="seconds")})
    if stale is None or not stale.ok:
        save_record(rec, out)
    return rec


def _shared_copy(rec: RunRecord, exp: Experiment, cell: PlannedCell, out: Path) -> RunRecord:
    """``rec`` (a cell computed for another experiment of ``exp.shared_cells``) saved as
    ``exp``'s record of the same cell: its own name, key and seed, the same results, and
    ``timings['shared_from']`` naming the record it copies.
    """
    copy = dataclasses.replace(rec, experiment=exp.name, key=cell.key, seed=cell.seed,
                               timings={**rec.timings,
                                        "shared_from": f"{rec.experiment}/{rec.key}"})
    save_record(copy, out)
    return copy


def run_experiment(exp: Experiment, scale: str = "smoke", **kwargs) -> SweepSummary:
    """:func:`run_experiments` for one experiment."""
    return run_experiments([exp], scale, **kwargs)[0]
