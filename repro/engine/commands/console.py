"""What the command line does to its own process around a command: loky's resource-tracker
warning filter, the interrupt test, silent output once the reader of a pipe has left, and
warnings as one line each.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings

__all__ = ["WORKER_RESTART", "WORKER_RESTART_NOTE", "interrupted", "one_line_warnings",
           "quiet_tracker_after_interrupt", "silence_output"]


# joblib's loky backend starts a resource tracker, a process that ignores SIGINT and, once the
# workers are gone, unlinks what they had registered. After a Ctrl-C the workers' own cleanup
# may already have removed those files, and the tracker then warns, e.g.
# "resource_tracker: /dev/shm/...: FileNotFoundError(2, ...)", on the terminal after the
# one-line interrupt message. The tracker reads its warning filters from
# the interpreter flags it is started with (``sys.warnoptions``), so one filter here, set
# before any worker exists, silences that module alone; nothing else is filtered.
_TRACKER_FILTER = "ignore::UserWarning:joblib.externals.loky.backend.resource_tracker"


def quiet_tracker_after_interrupt() -> None:
    """Pass a warning filter for loky's resource tracker on to the processes it starts."""
    if _TRACKER_FILTER not in sys.warnoptions:
        sys.warnoptions.append(_TRACKER_FILTER)


def interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` was raised while a KeyboardInterrupt unwound (its context chain)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__context__ or exc.__cause__
    return False


def silence_output() -> None:
    """Point stdout and stderr at /dev/null: the reader of the pipe is gone, and the
    interpreter's flush at exit would otherwise print a BrokenPipeError of its own.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            os.dup2(devnull, stream.fileno())
        except (OSError, ValueError, AttributeError):  # not a real file (a test's capture)
            pass
    os.close(devnull)
    sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - the interpreter flushes at exit


# joblib's loky executor restarts a worker whose memory grew by more than 300 MB over its
# jobs (its leak guard: the worker returns its job's result first, then exits, and a new one
# is started; no job is lost) and says so with a UserWarning, "A worker stopped while some
# jobs were given to the executor ...", printed with its source line, a bare
# `warnings.warn(`. Our cells hold data sets and torch models, so the guard fires in long
# sweeps: it is explained once, in one line, instead.
WORKER_RESTART = "A worker stopped while some jobs were given to the executor"
WORKER_RESTART_NOTE = (
    "note: joblib restarted a worker process whose memory had grown by more than 300 MB "
    "(its leak guard; the worker returned its cell's result before it stopped, no cell is "
    "lost)")


@contextlib.contextmanager
def one_line_warnings():
    """Warnings as one line each (``file:line: Category: message``, no source line), the
    loky worker restart as :data:`WORKER_RESTART_NOTE`, once.
    """
    original = warnings.showwarning
    said = []

    def show(message, category, filename, lineno, file=None, line=None):
        text = str(message)
        if text.startswith(WORKER_RESTART):
            if said:
                return
            said.append(1)
            text = WORKER_RESTART_NOTE
        else:
            text = f"{filename}:{lineno}: {category.__name__}: {text}"
        from tqdm.auto import tqdm

        try:
            tqdm.write(text, file=file or sys.stderr)  # below any progress bar
        except OSError:
            pass

    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = original
