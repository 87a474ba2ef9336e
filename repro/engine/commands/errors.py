"""How the command line says that a command ended in an exception.

Two kinds, told apart by where the exception arose (its innermost traceback frame):

- *expected*: a ``KeyError``, ``ValueError``, ``RuntimeError`` or ``FloatingPointError`` that
  a ``raise`` statement of fedrepro's own code raised on purpose, with a message that says what
  is wrong and the remedy (an unknown experiment, a scale the experiment does not declare, an
  output folder that cannot be written, ``--jobs 0``). It is said as that message alone:
  ``repro run: error: no experiment matches 'nope'; known: ...``.
- *unexpected*: anything else: an exception of another type, one raised implicitly (a
  ``KeyError`` of a ``dict`` lookup, an ``AttributeError``), or one raised inside a library. It
  is said with its type and the ``file:line`` where it arose, e.g. ``repro compare: error:
  KeyError: 'FedAvgM' (at repro/relfair/experiments/reproduce.py:34)``, then the notes it
  carries (the cell it ran in), and a pointer to ``-v``, which prints the full traceback first.
"""

from __future__ import annotations

import linecache
import re
import traceback
from pathlib import Path

import repro

EXPECTED_TYPES = (KeyError, ValueError, RuntimeError, FloatingPointError)
_PACKAGE = Path(repro.__file__).resolve().parent  # repro/
_ROOT = _PACKAGE.parent  # the checkout (or site-packages), whose relative paths are shown


def _frames(exc: BaseException) -> tuple[list[tuple[str, int]], bool]:
    """``(file, line)`` of every frame that led to ``exc``, innermost last, and whether they
    are a worker's: an exception a joblib/loky worker raised is raised again in the parent
    from joblib's own code, its real frames in the text of its cause (``_RemoteTraceback``).
    """
    remote = getattr(exc.__cause__, "tb", None)
    if isinstance(remote, str) and "Traceback" in remote:
        found = [(f, int(n)) for f, n in re.findall(r'File "(.+?)", line (\d+)', remote)]
        if found:
            return found, True
    return [(f.filename, f.lineno) for f in traceback.extract_tb(exc.__traceback__)], False


def _ours(filename: str) -> bool:
    try:
        Path(filename).resolve().relative_to(_PACKAGE)
    except ValueError:
        return False
    return True


def is_expected(exc: BaseException) -> bool:
    """Whether ``exc`` is an error fedrepro raised on purpose with a message for the user: one
    of :data:`EXPECTED_TYPES`, whose innermost frame is a ``raise`` statement in ``repro/``.
    """
    frames, _ = _frames(exc)
    if not isinstance(exc, EXPECTED_TYPES) or not frames:
        return False
    filename, lineno = frames[-1]
    line = linecache.getline(filename, lineno).lstrip()
    return _ours(filename) and line.startswith("raise")


def place(filename: str, lineno: int) -> str:
    """``repro/relfair/experiments/reproduce.py:34``: relative to the folder holding the
    ``repro`` package where the file is under it, else the path as the traceback gives it.
    """
    path = Path(filename)
    try:
        shown = path.resolve().relative_to(_ROOT).as_posix()
    except ValueError:
        shown = filename
    return f"{shown}:{lineno}"


def where(exc: BaseException) -> str:
    """Where ``exc`` arose: its innermost frame (``in a worker`` where a worker process raised
    it), and, when that is outside ``repro/`` (a library), the innermost frame of ``repro/``
    that led there.
    """
    frames, remote = _frames(exc)
    if not frames:
        return "place unknown"
    text = place(*frames[-1]) + (" in a worker" if remote else "")
    if not _ours(frames[-1][0]):
        ours = [f for f in frames if _ours(f[0])]
        if ours:
            text += f", called from {place(*ours[-1])}"
    return text


def error_lines(command: str, exc: BaseException, verbose: int = 0) -> list[str]:
    """The lines a command prints on stderr for ``exc`` (see the module docstring)."""
    if is_expected(exc):
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        return [f"repro {command}: error: {msg}"]
    lines = []
    if verbose:
        lines.append("".join(traceback.format_exception(exc)).rstrip("\n"))
    text = str(exc)  # a KeyError's is the key's repr: 'FedAvgM'
    lines.append(f"repro {command}: error: {type(exc).__name__}"
                 + (f": {text}" if text else "") + f" (at {where(exc)})")
    lines += [f"  {note}" for note in getattr(exc, "__notes__", [])]
    if not verbose:
        lines.append(f"  (an unexpected error: `repro -v {command} ...` prints its traceback)")
    return lines
