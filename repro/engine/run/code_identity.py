"""The identity of the code an experiment's cells execute: part of every record's key.

``code_hash(exp)`` is the sha256 of the source of every ``repro/`` module in the *static import
closure* of the module that defines the experiment's ``run_cell`` (:func:`import_closure`):
that module, every ``repro`` module it imports (``import``/``from ... import``, at module level
or inside a function, relative or absolute; ``if TYPE_CHECKING:`` blocks excluded), and so on.
A name imported from a package resolves to its submodule where one exists, else to the
package's ``__init__.py``; a parent package's ``__init__.py`` is not part of a module's closure
unless something imports from it. The data loaders a cell uses are in the closure because its
modules import them (``repro/core/data/*.py``). For an experiment defined in a module outside
``repro/`` (a plugin), that module and the closure of its ``repro`` imports.

So an edit stales exactly the cells whose closure holds the edited module: a comment in a
relfair algorithm file stales relfair's training cells and not its geometry figures; an edit of
``repro/core/projections.py`` stales the papers that import it and no other. The renderers,
claims and ``reproduce`` modules, the command line, the runner, compare/report/plotting and the
docs are outside every closure (``tests/test_layout.py`` asserts it: a ``run_cell`` module never
imports them), so editing them leaves records current. Any edit of a module in the closure, a
comment included, makes the records stale and costs a rerun; the rerun shows the numbers
unchanged.

Seeds do not depend on the code (:func:`repro.engine.experiment.cell_seed` reads the cell's
config only), so a rerun after a comment edit gives bitwise-equal numbers.
"""

from __future__ import annotations

import ast
import contextlib
import contextvars
import hashlib
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

from repro.engine.experiment import Experiment

_REPRO = Path(__file__).resolve().parents[2]  # the installed package, for its own sources
# Modules that only turn records into output: no run_cell closure may hold them (layout test).
OUTPUT_ONLY = frozenset({"render.py", "claims.py", "reproduce.py"})
OUTPUT_ENGINE = frozenset({
    "engine/report/report.py",
    "engine/report/plotting.py",
    "engine/compare/compare.py",
    "engine/run/runner.py",
    "engine/run/planning.py",
    "engine/run/locks.py",
    "engine/run/executors.py",
    "engine/report/overview.py",
    "engine/report/front_page.py",
    "engine/records/kept.py",
    "engine/report/measured.py",
    "engine/compare/reported.py",
    "engine/compare/judging.py",
    "engine/compare/deviations.py",
    "engine/commands/listing.py",
    "engine/commands/run_report.py",
    "engine/commands/figures_run.py",
    "engine/commands/compare_run.py",
    "engine/commands/outputs.py",
    "engine/commands/errors.py",
    "engine/commands/data_command.py",
    "cli.py",
})
SHORT = 12  # hex digits shown in `stale (code ...)`


def _module_file(exp: Experiment) -> Path:
    mod = sys.modules.get(exp.run_cell.__module__)
    if mod is None or getattr(mod, "__file__", None) is None:
        raise ValueError(f"{exp.name}: cannot find the source of its run_cell module "
                         f"{exp.run_cell.__module__!r}; define run_cell in a module file")
    return Path(mod.__file__).resolve()


def _resolve(dotted: str) -> Path | None:
    """The file of the ``repro`` module ``dotted`` (``repro.a.b``), or None outside ``repro``
    or when no such module exists.
    """
    parts = dotted.split(".")
    if parts[0] != "repro":
        return None
    base = _REPRO.joinpath(*parts[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path.resolve()
    return None


def _module_name(path: Path) -> str | None:
    try:
        rel = path.relative_to(_REPRO)
    except ValueError:
        return None
    parts = ["repro", *rel.with_suffix("").parts]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """The ids of the import nodes inside ``if TYPE_CHECKING:`` blocks (never executed)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = (test.id if isinstance(test, ast.Name)
                    else test.attr if isinstance(test, ast.Attribute) else "")
            if name == "TYPE_CHECKING":
                for sub in node.body:
                    skip |= {id(n) for n in ast.walk(sub)}
    return skip


@cache
def _direct_imports(path: Path) -> frozenset[Path]:
    """The ``repro`` module files ``path`` imports directly (static, see the module doc)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    skip = _type_checking_nodes(tree)
    name = _module_name(path)
    package = (name if path.name == "__init__.py" else name.rpartition(".")[0]) if name else ""
    found: set[Path] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _resolve(alias.name)
                if target is not None:
                    found.add(target)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if not package:
                    continue
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                target = _resolve(f"{base}.{alias.name}") if alias.name != "*" else None
                target = target or _resolve(base)
                if target is not None:
                    found.add(target)
    found.discard(path)
    return frozenset(found)


def import_closure(path: Path) -> list[Path]:
    """``path`` and every ``repro`` module reachable from it by static imports, sorted."""
    path = Path(path).resolve()
    seen = {path}
    todo = [path]
    while todo:
        for dep in _direct_imports(todo.pop()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return sorted(seen)


def code_files(exp: Experiment) -> list[Path]:
    """The source files whose text is ``exp``'s code identity: the static import closure of
    its ``run_cell`` module (:func:`import_closure`) and of the module of every library method it
    names (``exp.methods``: a paper's ``methods`` package finds its method files at run time,
    which no static import shows), sorted.
    """
    files = set(import_closure(_module_file(exp)))
    for module in _method_modules(exp):
        files.update(import_closure(module))
    return sorted(files)


def _method_modules(exp: Experiment) -> list[Path]:
    """The files of the library methods ``exp.methods`` names; a name its paper does not
    register raises ``ValueError`` (a table must not run a method the library lacks).
    """
    if not exp.methods:
        return []
    from repro.engine.registry import library_methods

    paper = exp.name.split(".")[0]
    known = library_methods().get(paper, {})
    out = []
    for name in exp.methods:
        if name not in known:
            raise ValueError(f"experiment {exp.name} names method {name!r}, which "
                             f"repro.{paper}.methods does not register (known: {sorted(known)})")
        path = _resolve(known[name].module)
        if path is not None:
            out.append(path)
    return out


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
    _direct_imports.cache_clear()
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
