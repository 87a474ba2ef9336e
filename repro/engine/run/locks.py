"""Claiming places in a results folder: the per-cell lock files and the writability check.

A worker claims a cell with an exclusive lock file ``<key>.lock`` beside its record (its pid
and host) before computing it, so a second run on the same results folder skips cells being
computed elsewhere; the lock of a process that no longer exists (on this host) is taken over.
:func:`check_writable` says, before any compute, that a results folder cannot be written.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from pathlib import Path

from repro.core.paths import probe_writable
from repro.engine.records.records import record_path


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
        probe_writable(Path(out))
    except OSError as exc:
        raise ResultsNotWritable(
            f"results folder {out} is not writable ({type(exc).__name__}: {exc.strerror or exc})"
            "; nothing was computed. Choose another with --results DIR or $FEDREPRO_RESULTS "
            "(`repro where` shows the places in use)") from None
