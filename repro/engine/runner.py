"""Run an experiment's cells: skip those already recorded, execute the rest in parallel.

Each cell runs in a worker with one BLAS/torch thread, so ``--jobs 1`` and ``--jobs N`` give
bitwise-equal numbers; its record is written by the worker as soon as the cell finishes, so an
interrupted sweep keeps everything it finished and a rerun computes only what is missing.

A record's key includes the hash of the code its cells execute
(:mod:`repro.engine.code_identity`): after an edit the old records are *stale*, the cells are
recomputed, and the count of stale records is reported. A worker claims a cell with an
exclusive lock file ``<key>.lock`` (its pid and host) before computing it, so a second run on
the same results folder skips cells being computed elsewhere; the lock of a process that no
longer exists is taken over. The results folder is checked for writability before any compute.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import socket
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from joblib import Parallel, delayed, parallel_config

from repro.core import paths
from repro.core.data.store import DataFileMissing, record
from repro.engine.code_identity import code_hash, git_commit, stale_note
from repro.engine.experiment import (
    CellResult,
    Experiment,
    NeedsAccelerator,
    RunContext,
    cell_seed,
    read_as,
)
from repro.engine.progress import LOGGER, cell_bar, worker_logging
from repro.engine.readings import Reading
from repro.engine.records import (
    STATUS_FAILED,
    STATUS_NOT_RUN,
    RunRecord,
    canonical_json,
    load_record,
    record_key,
    record_path,
    save_record,
    scan_records,
    versions,
)

BACKENDS = ("loky", "dask", "ray")


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


def plan(exp: Experiment, scale: str, reading: Reading | None = None) -> list[PlannedCell]:
    """The cells of ``exp`` at ``scale`` under ``reading`` (default: the primary) with their
    record keys (the config the reading gives, data and code identity) and seeds (the base
    config's identity only, so neither a code edit nor a reading changes a seed; a reading that
    changes nothing gives exactly the keys and seeds of an experiment without readings).
    """
    reading = exp.primary_reading if reading is None else reading
    shas = data_sha256(exp)
    code, commit = code_hash(exp), git_commit()
    return [PlannedCell(c, record_key(exp.name, c, shas, code), cell_seed(exp.name, base), code,
                        commit) for base, c in exp.reading_configs(scale, reading)]


def plan_readings(exp: Experiment, scale: str, which: str | None = "all") -> list[PlannedCell]:
    """The cells of every selected reading, each once (a cell no reading touches is shared)."""
    seen: dict[str, PlannedCell] = {}
    for reading in exp.select_readings(which):
        for cell in plan(exp, scale, reading):
            seen.setdefault(cell.key, cell)
    return list(seen.values())


def stale_records(exp: Experiment, scale: str, out: Path | None = None,
                  cells: list[PlannedCell] | None = None) -> dict[str, RunRecord]:
    """Planned key -> the newest record of that cell made by other code (same config and data,
    another key), for the cells that have no current record (default cells: the primary
    reading's).
    """
    out = Path(out) if out is not None else results_dir()
    cells = plan(exp, scale) if cells is None else cells
    current = {c.key for c in cells if record_path(out, exp.name, c.key).is_file()}
    by_ident: dict[str, list[RunRecord]] = {}
    for rec in scan_records(out, exp.name):
        by_ident.setdefault(canonical_json([rec.config, rec.data]), []).append(rec)
    shas = data_sha256(exp)
    stale = {}
    for c in cells:
        if c.key in current:
            continue
        old = [r for r in by_ident.get(canonical_json([c.config, shas]), []) if r.key != c.key]
        if old:
            rec = max(old, key=lambda r: str(r.timings.get("finished", "")))
            rec.stale_note = stale_note(rec.code)
            stale[c.key] = rec
    return stale


def lock_path(out: Path, experiment: str, key: str) -> Path:
    return record_path(out, experiment, key).with_suffix(".lock")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def _lock_holder(lock: Path) -> dict | None:
    """The live holder of ``lock`` as ``{"pid", "host"}``, or None when it is free or stale
    (a dead process on this host, or an unreadable lock older than a minute).
    """
    try:
        holder = json.loads(lock.read_text())
        pid, host = int(holder["pid"]), str(holder["host"])
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError):
        # just created and not yet written by its holder, or torn by a kill while writing
        try:
            young = time.time() - lock.stat().st_mtime < 60
        except FileNotFoundError:
            return None
        return {"pid": "?", "host": "?"} if young else None
    if host == socket.gethostname() and not _pid_alive(pid):
        return None
    return holder


def claim(lock: Path) -> dict | None:
    """Take the exclusive lock of a cell: None when this process now holds it, else the live
    holder.

    Created with ``O_EXCL`` so that of two processes exactly one wins; a stale lock (a dead
    process on this host) is replaced atomically and the claim retried.
    """
    lock.parent.mkdir(parents=True, exist_ok=True)
    me = json.dumps({"pid": os.getpid(), "host": socket.gethostname()})
    for _ in range(3):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            holder = _lock_holder(lock)
            if holder is not None:
                return holder
            # stale: move it away under a unique name, then race for a fresh one
            aside = lock.with_name(f".stale-{os.getpid()}-{lock.name}")
            try:
                seen = lock.read_text()
                os.replace(lock, aside)
            except FileNotFoundError:
                continue
            if aside.read_text() != seen:  # another process took it over meanwhile: give back
                os.replace(aside, lock)
                continue
            os.unlink(aside)
            continue
        with os.fdopen(fd, "w") as f:
            f.write(me)
        return None
    holder = _lock_holder(lock)
    return holder or {"pid": -1, "host": "?"}


def release(lock: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(lock)


class ResultsNotWritable(RuntimeError):
    """The results folder cannot be written: said before any cell is computed."""


def check_writable(out: Path) -> None:
    """Create ``out`` if needed and write and remove a file in it, or raise
    :class:`ResultsNotWritable` naming the folder and the remedy.
    """
    try:
        Path(out).mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=out, prefix=".write-test-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ResultsNotWritable(
            f"results folder {out} is not writable ({type(exc).__name__}: {exc.strerror or exc})"
            "; nothing was computed. Choose another with --results DIR or $FEDREPRO_RESULTS "
            "(`repro where` shows the places in use)") from None


def _limit_threads() -> contextlib.AbstractContextManager:
    from threadpoolctl import threadpool_limits

    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover - torch is a runtime dependency
        pass
    return threadpool_limits(limits=1)


COMPUTED, CACHED, BUSY = "computed", "cached", "busy"
BUSY_REASON = "being computed by another process"


def _exit_quietly(signum, frame) -> None:  # pragma: no cover - runs in a worker
    os._exit(128 + signum)


@contextlib.contextmanager
def _interrupt_wins() -> Iterator[None]:
    """Ctrl-C stops the workers too, and the pool may report their exit before the parent
    sees its own KeyboardInterrupt: whatever is raised after a SIGINT becomes that.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    seen: list[int] = []

    def on_sigint(signum, frame):
        seen.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    except Exception:
        if seen:
            raise KeyboardInterrupt from None
        raise
    finally:
        signal.signal(signal.SIGINT, previous)

_MAIN_PID = "FEDREPRO_MAIN_PID"


def run_cell(exp: Experiment, cell: PlannedCell, out: Path, keep_going: bool = False,
             force: bool = False) -> tuple[RunRecord, str]:
    """Claim one cell, run it in this process and save its record: ``(record, how)``.

    ``how`` is ``computed``; ``cached`` when another process finished the cell since it was
    planned; ``busy`` when another live process holds its lock (the record returned then is
    not saved: status ``not_run``, the holder in its reason). An exception propagates (naming
    the cell), unless ``keep_going``: then the cell's record has status ``failed`` and the
    error as its reason, and a later run retries it.
    """
    worker_logging()
    if (os.environ.get(_MAIN_PID, str(os.getpid())) != str(os.getpid())
            and threading.current_thread() is threading.main_thread()):
        # a worker: Ctrl-C reaches the whole process group; the worker stops at once without
        # a traceback of its own (its lock turns stale and is taken over by the next run) and
        # the parent prints the one line
        signal.signal(signal.SIGINT, _exit_quietly)
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
        if done is not None and done.ok:
            return done, CACHED
        return _compute(exp, cell, out, keep_going), COMPUTED
    finally:
        release(lock)


def _compute(exp: Experiment, cell: PlannedCell, out: Path, keep_going: bool) -> RunRecord:
    ctx = RunContext(exp.name, cell.config, cell.seed, code=cell.code, results=Path(out))
    rec = RunRecord(experiment=exp.name, config=cell.config, key=cell.key, seed=cell.seed,
                    versions=versions(), data=data_sha256(exp), code=cell.code,
                    commit=cell.commit)
    t0 = time.perf_counter()
    with _limit_threads():
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
            rec.reason = f"failed: {type(exc).__name__}: " + (str(exc).splitlines() or [""])[0]
            result = None
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


@contextlib.contextmanager
def executor(backend: str, jobs: int, address: str | None = None) -> Iterator[None]:
    """Joblib configuration for ``backend``; cluster backends need the ``dist`` extra.

    ``address`` names an existing cluster (a Dask scheduler such as ``tcp://host:8786``, or a
    Ray head such as ``ray://host:10001``); without it ``DASK_SCHEDULER_ADDRESS`` /
    ``RAY_ADDRESS`` are used, and failing those a local cluster of ``jobs`` workers is started.
    """
    _check_executor(backend, jobs)
    if backend == "loky":
        with parallel_config(backend="loky", n_jobs=jobs, inner_max_num_threads=1):
            yield
        return
    try:
        if backend == "dask":
            from dask.distributed import Client, LocalCluster
        else:
            import ray
            from ray.util.joblib import register_ray
    except ImportError as exc:
        raise RuntimeError(
            f"--backend {backend} needs the 'dist' extra: pip install 'fedrepro[dist]' "
            f"(or `make setup EXTRAS=dev,dist`); import failed: {exc}") from exc
    if backend == "dask":
        address = address or os.environ.get("DASK_SCHEDULER_ADDRESS")
        cluster = None if address else LocalCluster(n_workers=jobs, threads_per_worker=1,
                                                    processes=True, dashboard_address=None)
        client = Client(address or cluster)
        try:
            with parallel_config(backend="dask", n_jobs=jobs):
                yield
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    else:
        address = address or os.environ.get("RAY_ADDRESS")
        ray.init(address=address, num_cpus=None if address else jobs,
                 include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
        register_ray()
        try:
            with parallel_config(backend="ray", n_jobs=jobs):
                yield
        finally:
            ray.shutdown()


def _check_executor(backend: str, jobs: int) -> None:
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")


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
    them in. With ``keep_going`` a cell that raises is recorded as ``failed`` (and retried by
    the next run) instead of stopping the sweep. The results folder is checked for
    writability before any compute. ``reading``: the readings run (``all`` (default),
    ``primary`` or a reading id; see :mod:`repro.engine.readings`); a cell shared by several
    readings runs once.
    """
    _check_executor(backend, jobs)
    out = Path(out) if out is not None else results_dir()
    plans = [(exp, auto_scale(exp, scale, out)) for exp in experiments]
    plans = [(exp, s, plan_readings(exp, s, reading)) for exp, s in plans]
    check_writable(out)
    done: dict[tuple[str, str], RunRecord] = {}
    todo: list[tuple[Experiment, PlannedCell]] = []
    stale: Counter = Counter()
    shared: dict[str, list[tuple[Experiment, PlannedCell]]] = {}  # computed cell -> copies
    first: dict[str, tuple[Experiment, PlannedCell]] = {}
    for exp, s, cells in plans:
        old = {} if force else stale_records(exp, s, out, cells)
        shas = data_sha256(exp) if exp.shared_cells else {}
        for cell in cells:
            rec = None if force else load_record(record_path(out, exp.name, cell.key))
            if rec is not None and rec.ok:
                done[(exp.name, cell.key)] = rec
                continue
            stale[exp.name] += cell.key in old
            if exp.shared_cells:
                ident = canonical_json([exp.shared_cells, cell.config, shas, cell.code])
                if ident in first:  # the same run, planned by another experiment of the group
                    fe, fc = first[ident]
                    shared.setdefault(f"{fe.name}/{fc.key}", []).append((exp, cell))
                    continue
                first[ident] = (exp, cell)
            todo.append((exp, cell))
    desc = plans[0][0].name if len(plans) == 1 else f"{len(plans)} experiments"
    n_shared = sum(map(len, shared.values()))
    bar = cell_bar(len(todo) + n_shared, f"{desc} [{scale}]", enabled=progress)
    how: Counter = Counter()
    os.environ[_MAIN_PID] = str(os.getpid())
    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(_interrupt_wins())
            if jobs == 1 and backend == "loky":
                results = (run_cell(exp, c, out, keep_going, force) for exp, c in todo)
            elif todo:
                stack.enter_context(executor(backend, jobs, address))
                # Ray's joblib backend returns lists only: the bar then moves at the end, while
                # records are still written by the workers as each cell finishes.
                order = "list" if backend == "ray" else "generator_unordered"
                results = Parallel(return_as=order)(
                    delayed(run_cell)(exp, c, out, keep_going, force) for exp, c in todo)
            else:
                results = ()
            for rec, kind in results:
                done[(rec.experiment, rec.key)] = rec
                how[(rec.experiment, kind)] += 1
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
    finally:
        bar.close()
    summaries = []
    for exp, s, cells in plans:
        records = [done[(exp.name, c.key)] for c in cells]
        computed, busy = how[(exp.name, COMPUTED)], how[(exp.name, BUSY)]
        summaries.append(SweepSummary(exp.name, s, computed, len(cells) - computed - busy,
                                      sum(not r.ok for r in records), records,
                                      stale=stale[exp.name], busy=busy))
    return summaries


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


def auto_scale(exp: Experiment, scale: str, out: Path | None = None) -> str:
    """:meth:`Experiment.resolve_scale`, except that ``auto`` is ``extended`` where the
    experiment declares it and the results folder holds a record with a result of one of its
    ``extended`` cells (a current or a stale one): records of the larger budget, once brought
    here, are what the figures, claims and ``repro run`` use, and a partial set is finished by
    the next run on a machine that can (issue #20). Without such a record ``auto`` stays
    ``reduced`` (or ``paper``).
    """
    if (scale == "auto" and "extended" in exp.scales
            and any(r.ok for r in collect(exp, "extended", out))):
        return "extended"
    return exp.resolve_scale(scale)


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
        rec = load_record(record_path(out, exp.name, c.key)) or stale.get(c.key)
        if rec is not None:
            recs.append(rec)
    return read_records(recs, reading)


def is_complete(exp: Experiment, scale: str, records: list[RunRecord],
                reading: Reading | None = None) -> bool:
    """Whether ``records`` (as :func:`collect` returns them) hold a record of every cell of
    ``exp`` at ``scale`` under ``reading`` (default: the primary) and none of them failed: the
    full protocol of what they render (a cell recorded ``not_run``, e.g. data unavailable, is
    final). Only such outputs may replace a complete run's (:func:`repro.core.paths.
    outputs_place`).
    """
    if scale not in exp.scales:
        return False
    reading = exp.primary_reading if reading is None else reading
    return (len(records) == len(plan(exp, scale, reading))
            and not any(r.status == "failed" for r in records))


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
