"""Where and how cells execute: the joblib executors, one thread per worker, and Ctrl-C.

:func:`executor` configures joblib for a backend (``loky`` local processes; ``dask`` or
``ray`` clusters, the ``dist`` extra); :func:`limit_threads` gives a cell one BLAS/torch
thread, so ``--jobs 1`` and ``--jobs N`` give bitwise-equal numbers, and keeps freed memory
in the process (:func:`keep_freed_memory`). Signals:
:func:`interrupt_wins` turns whatever the pool raises after a SIGINT into that interrupt in the
parent, and :func:`quiet_worker_interrupt` makes a worker stop at once on Ctrl-C, without a
traceback of its own (:func:`mark_main_process` tells the parent from its workers).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator

from joblib import parallel_config

BACKENDS = ("loky", "dask", "ray")
_MAIN_PID = "FEDREPRO_MAIN_PID"


def limit_threads() -> contextlib.AbstractContextManager:
    """One BLAS/torch thread for the cell (and, once per process, :func:`keep_freed_memory`)."""
    from threadpoolctl import threadpool_limits

    keep_freed_memory()

    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover - torch is a runtime dependency
        pass
    return threadpool_limits(limits=1)


_MALLOC_TUNED: list[bool] = []
# glibc's mallopt parameters (malloc.h) and the largest mmap threshold it accepts on 64-bit
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3
_MMAP_THRESHOLD_MAX = 32 * 2 ** 20


def keep_freed_memory() -> bool:
    """Tell glibc's malloc to keep memory the process frees (once per process; True if set).

    By default a freed block above the mmap threshold goes back to the OS, and the next array
    of that size (a Newton step's row arrays, a round's stacked models) is faulted in anew,
    page by page: several percent of a cell's CPU time, in the kernel. Blocks up to 32 MiB are
    served from the heap instead and the heap is never trimmed, so the pages stay mapped
    (memory is held at the process's peak, which a cell reaches on its first round anyway).
    Only where memory comes from changes, never a number: the kernels do not depend on the
    alignment of their operands (tests/core/test_kernels.py). Without glibc (macOS, musl)
    nothing is set.
    """
    if _MALLOC_TUNED:
        return _MALLOC_TUNED[0]
    ok = False
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
        mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
        ok = all(mallopt(param, value) == 1 for param, value in (
            (_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_MAX), (_M_TRIM_THRESHOLD, 2 ** 30),
            (_M_TOP_PAD, 64 * 2 ** 20)))
    except (OSError, AttributeError):
        ok = False
    _MALLOC_TUNED.append(ok)
    return ok


def _exit_quietly(signum, frame) -> None:  # pragma: no cover - runs in a worker
    os._exit(128 + signum)


@contextlib.contextmanager
def interrupt_wins() -> Iterator[None]:
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


def mark_main_process() -> None:
    """Record this process as the sweep's parent (its workers inherit the mark)."""
    os.environ[_MAIN_PID] = str(os.getpid())


def quiet_worker_interrupt() -> None:
    """In a worker (not the marked parent): Ctrl-C reaches the whole process group; the worker
    stops at once without a traceback of its own (its lock turns stale and is taken over by
    the next run) and the parent prints the one line.
    """
    if (os.environ.get(_MAIN_PID, str(os.getpid())) != str(os.getpid())
            and threading.current_thread() is threading.main_thread()):
        signal.signal(signal.SIGINT, _exit_quietly)


@contextlib.contextmanager
def executor(backend: str, jobs: int, address: str | None = None) -> Iterator[None]:
    """Joblib configuration for ``backend``; cluster backends need the ``dist`` extra.

    ``address`` names an existing cluster (a Dask scheduler such as ``tcp://host:8786``, or a
    Ray head such as ``ray://host:10001``); without it ``DASK_SCHEDULER_ADDRESS`` /
    ``RAY_ADDRESS`` are used, and failing those a local cluster of ``jobs`` workers is started.
    """
    check_executor(backend, jobs)
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


def check_executor(backend: str, jobs: int) -> None:
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
