"""The registry of experiments, filled by discovery.

:func:`load_all` walks the subpackages of :mod:`repro` (every one except ``core`` and
``engine``) and imports each one's ``experiments`` module, or every module of its
``experiments/`` package; those modules call :func:`register` at import. A new paper package
with an ``experiments/`` folder is found with no list edited
(``tests/engine/test_throwaway_paper.py`` adds a throwaway one in a temp folder). Extra modules
named in ``$FEDREPRO_PLUGINS`` (comma separated) are imported too, so a user can add
experiments without touching the package.
"""

from __future__ import annotations

import fnmatch
import importlib
import os
import pkgutil
from pathlib import Path

import repro
from repro.engine.experiment import Experiment

_REGISTRY: dict[str, Experiment] = {}

NOT_PAPERS = frozenset({"core", "engine", "reported"})


def register(exp: Experiment) -> Experiment:
    """Add ``exp``; registering the same name twice with a different object is an error."""
    old = _REGISTRY.get(exp.name)
    if old is not None and old is not exp:
        raise ValueError(f"experiment {exp.name!r} is already registered")
    _REGISTRY[exp.name] = exp
    return exp


def paper_packages() -> list[tuple[str, Path]]:
    """``(name, folder)`` of every paper package: each subpackage of :mod:`repro` (on every
    entry of ``repro.__path__``) but ``core`` and ``engine``, sorted by name.
    """
    found = {}
    for m in pkgutil.iter_modules(repro.__path__):
        if m.ispkg and m.name not in NOT_PAPERS and m.name not in found:
            found[m.name] = Path(getattr(m.module_finder, "path", "")) / m.name
    return sorted(found.items())


def experiment_modules() -> list[str]:
    """The modules that define experiments: ``repro.<pkg>.experiments`` and, where that is a
    package, each of its modules (sorted, so registration order never depends on the disk).
    """
    found = []
    for pkg, _ in paper_packages():
        name = f"repro.{pkg}.experiments"
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # a package without experiments (none today)
                continue
            raise
        found.append(name)
        if hasattr(mod, "__path__"):
            found += sorted(f"{name}.{m.name}" for m in pkgutil.iter_modules(mod.__path__))
    return found


def load_all() -> dict[str, Experiment]:
    for mod in experiment_modules():
        importlib.import_module(mod)
    for mod in filter(None, os.environ.get("FEDREPRO_PLUGINS", "").split(",")):
        try:
            importlib.import_module(mod.strip())
        except ModuleNotFoundError as exc:
            if exc.name != mod.strip().split(".")[0] and exc.name != mod.strip():
                raise  # the plugin was found; something it imports is missing
            raise ValueError(f"$FEDREPRO_PLUGINS names {mod.strip()!r}, which is not importable "
                             f"({exc}); put its folder on PYTHONPATH or remove it from "
                             "$FEDREPRO_PLUGINS") from None
    return dict(sorted(_REGISTRY.items()))


def library_methods() -> dict[str, dict]:
    """``{paper: {name: Method}}``: the ``METHODS`` of every paper package that has a
    ``methods`` package or module (:mod:`repro.core.methods`), imported by name as the
    experiments are, so the engine names no paper.
    """
    out = {}
    for pkg, _ in paper_packages():
        name = f"repro.{pkg}.methods"
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        methods = getattr(mod, "METHODS", None)
        if methods:
            out[pkg] = dict(methods)
    return out


def get(name: str) -> Experiment:
    exps = load_all()
    if name not in exps:
        raise KeyError(f"no experiment {name!r}; `repro list` shows {len(exps)}: "
                       + ", ".join(exps))
    return exps[name]


def select(pattern: str) -> list[Experiment]:
    """Experiments whose name matches a glob (``all`` means every one)."""
    exps = load_all()
    if pattern == "all":
        return list(exps.values())
    chosen = [e for n, e in exps.items() if fnmatch.fnmatchcase(n, pattern)]
    if not chosen:
        raise KeyError(f"no experiment matches {pattern!r}; known: " + ", ".join(exps))
    return chosen


def select_suggesting(pattern: str) -> list[Experiment]:
    """:func:`select`, whose error for an unknown name lists the known ones, plus the closest
    names when the pattern looks like a typo.
    """
    import difflib

    try:
        return select(pattern)
    except KeyError as exc:
        close = difflib.get_close_matches(pattern, list(load_all()), n=3, cutoff=0.6)
        if not close:
            raise
        raise KeyError(f"{exc.args[0]}\ndid you mean: {', '.join(close)}?") from None
