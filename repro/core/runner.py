"""Run an experiment's cells: skip those already recorded, execute the rest in parallel.

Each cell runs in a worker with one BLAS/torch thread, so ``--jobs 1`` and ``--jobs N`` give
bitwise-equal numbers; its record is written by the worker as soon as the cell finishes, so an
interrupted sweep keeps everything it finished and a rerun computes only what is missing.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from joblib import Parallel, delayed, parallel_config

from repro.core import paths
from repro.core.data.store import DataFileMissing, record
from repro.core.experiment import CellResult, Experiment, RunContext, cell_seed
from repro.core.progress import LOGGER, cell_bar, worker_logging
from repro.core.records import (
    STATUS_FAILED,
    STATUS_NOT_RUN,
    RunRecord,
    load_record,
    record_key,
    record_path,
    save_record,
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


def plan(exp: Experiment, scale: str) -> list[PlannedCell]:
    shas = data_sha256(exp)
    return [PlannedCell(c, record_key(exp.name, c, shas), cell_seed(exp.name, c))
            for c in exp.configs(scale)]


def _limit_threads() -> contextlib.AbstractContextManager:
    from threadpoolctl import threadpool_limits

    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover - torch is a runtime dependency
        pass
    return threadpool_limits(limits=1)


def run_cell(exp: Experiment, cell: PlannedCell, out: Path, keep_going: bool = False
             ) -> RunRecord:
    """Run one cell in this process and save its record.

    An exception propagates (naming the cell), unless ``keep_going``: then the cell's record
    has status ``failed`` and the error as its reason, and a later run retries it."""
    worker_logging()
    ctx = RunContext(exp.name, cell.config, cell.seed)
    rec = RunRecord(experiment=exp.name, config=cell.config, key=cell.key, seed=cell.seed,
                    versions=versions(), data=data_sha256(exp))
    t0 = time.perf_counter()
    with _limit_threads():
        try:
            result = exp.run_cell(dict(cell.config), ctx)
        except DataFileMissing as exc:
            rec.status = STATUS_NOT_RUN
            rec.reason = "data unavailable: " + str(exc).splitlines()[0]
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
    rec.timings = {"wall_s": time.perf_counter() - t0,
                   "finished": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    save_record(rec, out)
    LOGGER.info("%s %s -> %s (%.2fs)", exp.name, cell.config, rec.status, rec.timings["wall_s"])
    return rec


@contextlib.contextmanager
def executor(backend: str, jobs: int, address: str | None = None) -> Iterator[None]:
    """joblib configuration for ``backend``; cluster backends need the ``dist`` extra.

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


def run_experiments(experiments: list[Experiment], scale: str = "smoke", *, jobs: int = 1,
                    backend: str = "loky", force: bool = False, out: Path | None = None,
                    progress: bool = True, address: str | None = None,
                    keep_going: bool = False) -> list[SweepSummary]:
    """Run every cell of ``experiments`` at ``scale`` that has no record yet.

    All missing cells of all experiments go through one executor with one progress bar (with
    its estimate of the time left). Records that exist are loaded, not recomputed, unless
    ``force``; cells whose earlier record says ``not_run`` are retried, so placing missing data
    and rerunning fills them in. With ``keep_going`` a cell that raises is recorded as
    ``failed`` (and retried by the next run) instead of stopping the sweep.
    """
    _check_executor(backend, jobs)
    out = Path(out) if out is not None else results_dir()
    plans = [(exp, exp.resolve_scale(scale)) for exp in experiments]
    plans = [(exp, s, plan(exp, s)) for exp, s in plans]
    done: dict[tuple[str, str], RunRecord] = {}
    todo: list[tuple[Experiment, PlannedCell]] = []
    for exp, _, cells in plans:
        for cell in cells:
            rec = None if force else load_record(record_path(out, exp.name, cell.key))
            if rec is not None and rec.ok:
                done[(exp.name, cell.key)] = rec
            else:
                todo.append((exp, cell))
    desc = plans[0][0].name if len(plans) == 1 else f"{len(plans)} experiments"
    bar = cell_bar(len(todo), f"{desc} [{scale}]", enabled=progress)
    try:
        if jobs == 1 and backend == "loky":
            for exp, c in todo:
                rec = run_cell(exp, c, out, keep_going)
                done[(exp.name, rec.key)] = rec
                bar.update()
        elif todo:
            with executor(backend, jobs, address):
                # Ray's joblib backend returns lists only: the bar then moves at the end, while
                # records are still written by the workers as each cell finishes.
                order = "list" if backend == "ray" else "generator_unordered"
                for rec in Parallel(return_as=order)(
                        delayed(run_cell)(exp, c, out, keep_going) for exp, c in todo):
                    done[(rec.experiment, rec.key)] = rec
                    bar.update()
    finally:
        bar.close()
    computed = Counter(exp.name for exp, _ in todo)
    summaries = []
    for exp, s, cells in plans:
        records = [done[(exp.name, c.key)] for c in cells]
        summaries.append(SweepSummary(exp.name, s, computed[exp.name],
                                      len(cells) - computed[exp.name],
                                      sum(not r.ok for r in records), records))
    return summaries


def run_experiment(exp: Experiment, scale: str = "smoke", **kwargs) -> SweepSummary:
    """:func:`run_experiments` for one experiment."""
    return run_experiments([exp], scale, **kwargs)[0]


def collect(exp: Experiment, scale: str, out: Path | None = None) -> list[RunRecord]:
    """The saved records of ``exp`` at ``scale``, in grid order (cells never run are absent)."""
    out = Path(out) if out is not None else results_dir()
    recs = (load_record(record_path(out, exp.name, c.key)) for c in plan(exp, scale))
    return [r for r in recs if r is not None]
