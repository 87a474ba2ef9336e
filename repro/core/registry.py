"""The registry of experiments.

Paper packages register their experiments at import time; :func:`load_all` imports the
core demo, every paper's ``experiments`` module that exists, and any extra modules named in
``$FEDREPRO_PLUGINS`` (comma separated), so a user can add experiments without editing the
package.
"""

from __future__ import annotations

import fnmatch
import importlib
import importlib.util
import os

from repro.core.experiment import Experiment

_REGISTRY: dict[str, Experiment] = {}

PAPER_PACKAGES = ("fairvfl", "relfair", "constrfl", "fedmm")


def register(exp: Experiment) -> Experiment:
    """Add ``exp``; registering the same name twice with a different object is an error."""
    old = _REGISTRY.get(exp.name)
    if old is not None and old is not exp:
        raise ValueError(f"experiment {exp.name!r} is already registered")
    _REGISTRY[exp.name] = exp
    return exp


def load_all() -> dict[str, Experiment]:
    importlib.import_module("repro.core.demo")
    for pkg in PAPER_PACKAGES:
        mod = f"repro.{pkg}.experiments"
        if importlib.util.find_spec(f"repro.{pkg}") and importlib.util.find_spec(mod):
            importlib.import_module(mod)
    for mod in filter(None, os.environ.get("FEDREPRO_PLUGINS", "").split(",")):
        importlib.import_module(mod.strip())
    return dict(sorted(_REGISTRY.items()))


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
