"""The identity of the code an experiment's cells execute: part of every record's key.

``code_hash(exp)`` is the sha256 of the source of

- the experiment's own package (``repro/<paper>/``, every module except those that only turn
  records into output: ``render.py``, ``claims.py``, ``reproduce.py``), or, for an
  experiment defined in a single module outside a paper package (a plugin), that module;
- the core computational modules every cell may call and the engine's cell context
  (:data:`CORE_MODULES`, the data loaders ``repro/core/data/*.py``).

The command line, the runner, the renderers, compare/report/plotting, the claims and the docs
are not part of it: editing them leaves records current. Any edit of a hashed file, a comment
included, makes the records stale and costs a rerun; the rerun shows the numbers unchanged.

Seeds do not depend on the code (:func:`repro.engine.experiment.cell_seed` reads the cell's
config only), so a rerun after a comment edit gives bitwise-equal numbers.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

from repro.engine.experiment import Experiment

_REPRO = Path(__file__).resolve().parents[1]  # the installed package, for its own sources
CORE_MODULES = ("core/groundtruth.py", "core/metrics.py", "core/partition.py",
                "core/projections.py", "core/validation.py", "engine/experiment.py")
OUTPUT_ONLY = frozenset({"render.py", "claims.py", "reproduce.py"})
SHORT = 12  # hex digits shown in `stale (code ...)`


def _module_file(exp: Experiment) -> Path:
    mod = sys.modules.get(exp.run_cell.__module__)
    if mod is None or getattr(mod, "__file__", None) is None:
        raise ValueError(f"{exp.name}: cannot find the source of its run_cell module "
                         f"{exp.run_cell.__module__!r}; define run_cell in a module file")
    return Path(mod.__file__).resolve()


def code_files(exp: Experiment) -> list[Path]:
    """The source files whose text is ``exp``'s code identity, sorted."""
    own = _module_file(exp)
    files = {_REPRO / m for m in CORE_MODULES} | set((_REPRO / "core" / "data").glob("*.py"))
    try:
        rel = own.relative_to(_REPRO)
    except ValueError:
        rel = None
    if rel is not None and len(rel.parts) > 1 and rel.parts[0] not in ("core", "engine"):
        package = _REPRO / rel.parts[0]
        files |= {p for p in package.rglob("*.py")
                  if p.name not in OUTPUT_ONLY and "__pycache__" not in p.parts}
    else:
        files.add(own)
    return sorted(files)


def _label(path: Path) -> str:
    try:
        return path.relative_to(_REPRO.parent).as_posix()
    except ValueError:
        return path.name


@cache
def _hash_of(exp_name: str, files: tuple[Path, ...]) -> str:
    h = hashlib.sha256()
    for path in files:
        h.update(_label(path).encode() + b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def code_hash(exp: Experiment) -> str:
    """sha256 (64 hex digits) of the sources of :func:`code_files`; cached per process."""
    return _hash_of(exp.name, tuple(code_files(exp)))


def clear_cache() -> None:
    """Forget computed hashes and the commit (after editing a source file in this process)."""
    _hash_of.cache_clear()
    git_commit.cache_clear()


@cache
def git_commit() -> str:
    """The checkout's commit (``+dirty`` when the package's files differ from it); for an
    installed wheel the commit it was built from (:func:`built_commit`), ``""`` if none.
    ``$FEDREPRO_COMMIT`` names it for a copy of a checkout without its ``.git`` (a lent GPU
    machine gets the working tree only: ``scripts/gpu_fedmm_extended.sh``); the record's code
    hash still says which code ran.
    """
    from repro.core.paths import is_checkout

    if os.environ.get("FEDREPRO_COMMIT"):
        return os.environ["FEDREPRO_COMMIT"]
    root = _REPRO.parent
    if not (is_checkout(root) and (root / ".git").exists()):
        return built_commit()
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"],
                                capture_output=True, text=True, timeout=10, check=True
                                ).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--",
                                "repro"], capture_output=True, text=True, timeout=10,
                               check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    return commit + ("+dirty" if dirty else "")


BUILD_COMMIT_FILE = "_build_commit.txt"


def built_commit() -> str:
    """The commit an installed wheel was built from (written into it by setup.py), ``""`` when
    none was recorded (built from a tree without git).
    """
    try:
        return (_REPRO / BUILD_COMMIT_FILE).read_text().strip()
    except OSError:
        return ""


def stale_note(code: str) -> str:
    """How a record made by other code is marked wherever it is shown."""
    return f"stale (code {code[:SHORT] if code else 'unknown'})"


# The note of the records being rendered, when any is stale: report.write_table adds it to the
# table's caption, plotting.save_figure to the figure's title (set by `repro figures`).
RENDERING_STALE: contextvars.ContextVar[str] = contextvars.ContextVar("rendering_stale",
                                                                     default="")


@contextlib.contextmanager
def rendering_stale(note: str):
    """Mark every table and figure written inside the block with ``note`` (if not empty)."""
    token = RENDERING_STALE.set(note)
    try:
        yield
    finally:
        RENDERING_STALE.reset(token)
