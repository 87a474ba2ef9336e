"""Registry of theory checks, module discovery and the run loop.

A check module is any ``theory/<paper>/<name>.py`` (``theory/core/`` for the projections shared
by several papers); the harness modules below sit at the top of the package. It registers
functions ``check(seed: int, size: str) -> CheckResult`` with::

    @register("relfair.skewness", paper="002 relfair", claim="s(Lambda) = n ||w||^2")
    def check(seed: int, size: str) -> CheckResult: ...

``size`` is ``"small"`` (seconds; what the tests run) or ``"default"``. Extra modules outside the
package (used by the tests for a deliberately failing check) can be named, as file paths
separated by ``os.pathsep``, in the environment variable ``THEORY_EXTRA_MODULES``.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import importlib
import importlib.util
import math
import os
import pkgutil
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from theory.result import CheckResult

__all__ = [
    "HARNESS_MODULES",
    "SIZES",
    "RegisteredCheck",
    "load_check_modules",
    "matches",
    "register",
    "registered",
    "run_checks",
    "seed_for",
    "selected",
]

SIZES = ("small", "default")
HARNESS_MODULES = frozenset({"__init__", "__main__", "result", "registry", "evidence", "paths",
                             "reference_rule"})
EXTRA_MODULES_ENV = "THEORY_EXTRA_MODULES"

CheckFn = Callable[[int, str], CheckResult]


@dataclass(frozen=True)
class RegisteredCheck:
    name: str
    paper: str
    claim: str
    func: CheckFn
    module: str
    seed_name: str = ""  # the name the seed is derived from ("" = name)


_REGISTRY: dict[str, RegisteredCheck] = {}
# Modules that failed to import: module name -> traceback. Reported as failed checks.
_IMPORT_ERRORS: dict[str, str] = {}
_LOADED_PATHS: set[str] = set()


def register(name: str, *, paper: str, claim: str, seed_name: str = ""
             ) -> Callable[[CheckFn], CheckFn]:
    """Decorator adding ``check(seed, size) -> CheckResult`` to the registry under ``name``.

    ``seed_name``: the check's seed is ``seed_for(seed_name or name)``; a check renamed after
    its paper's statement keeps its former name here, so its instances, and so its
    numbers, do not change with the rename.

    Raises ``ValueError`` if another function already holds ``name`` (re-registering the same
    function, e.g. when a module is reloaded, replaces the entry).
    """
    if not name or any(c.isspace() for c in name):
        raise ValueError(f"check name must be non-empty without spaces, got {name!r}")

    def decorator(func: CheckFn) -> CheckFn:
        module = getattr(func, "__module__", None) or "?"
        old = _REGISTRY.get(name)
        if old is not None and (old.module, _qualname(old.func)) != (module, _qualname(func)):
            raise ValueError(f"check {name!r} is already registered by {old.module}")
        _REGISTRY[name] = RegisteredCheck(name, paper, claim, func, module, seed_name)
        return func

    return decorator


def _qualname(func) -> str:
    return getattr(func, "__qualname__", repr(func))


def registered() -> dict[str, RegisteredCheck]:
    """A copy of the registry (name -> entry), in registration order."""
    return dict(_REGISTRY)


def seed_for(name: str) -> int:
    """Seed of a check: the first 8 bytes of sha256(name), big-endian (stable across processes).

    Checks turn it into a generator with ``numpy.random.default_rng(seed)`` (which feeds it
    through ``numpy.random.SeedSequence``).
    """
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "big")


def load_check_modules() -> list[str]:
    """Import every check module of the package (and ``THEORY_EXTRA_MODULES``); return names.

    A module that fails to import is remembered and reported by ``run_checks`` as a failed
    pseudo-check ``import:<module>``, so one broken file does not hide the others.
    """
    import theory

    names = []
    # theory/<paper>/<check>.py (and theory/core/ for the shared projections): discovery by
    # walking the package (every entry of ``theory.__path__``), so a new paper folder or check
    # file needs no list edited
    walked = {m.name: m for m in pkgutil.walk_packages(list(theory.__path__), prefix="theory.")}
    for info in sorted(walked.values(), key=lambda m: m.name):
        leaf = info.name.rsplit(".", 1)[-1]
        top_level = info.name.count(".") == 1
        if info.ispkg or (top_level and leaf in HARNESS_MODULES) or leaf.startswith("_"):
            continue
        module_name = info.name
        names.append(module_name)
        try:
            importlib.import_module(module_name)
        except Exception:  # any import failure becomes a failed check
            _IMPORT_ERRORS[module_name] = traceback.format_exc()
    for raw in os.environ.get(EXTRA_MODULES_ENV, "").split(os.pathsep):
        if not raw.strip():
            continue
        path = str(Path(raw).resolve())
        module_name = f"theory_extra_{Path(path).stem}"
        names.append(module_name)
        if path in _LOADED_PATHS:
            continue
        _LOADED_PATHS.add(path)
        try:
            spec = importlib.util.spec_from_file_location(module_name, path)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot load {path}")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        except Exception:
            _IMPORT_ERRORS[module_name] = traceback.format_exc()
    return names


def matches(name: str, pattern: str | None) -> bool:
    """``pattern`` is a substring or an fnmatch glob (``*``, ``?``, ``[...]``) of ``name``."""
    if not pattern:
        return True
    return fnmatch.fnmatchcase(name, f"*{pattern}*")


def selected(pattern: str | None = None) -> list[str]:
    """Names of the registered checks (and failed imports) ``run_checks(pattern)`` would run."""
    load_check_modules()
    return ([f"import:{m}" for m in sorted(_IMPORT_ERRORS) if matches(f"import:{m}", pattern)]
            + [n for n in _REGISTRY if matches(n, pattern)])


def run_checks(pattern: str | None = None, size: str = "default",
               on_result: Callable[[CheckResult], None] | None = None) -> list[CheckResult]:
    """Run the registered checks whose name matches ``pattern``; one result per check.

    Each check gets ``seed_for(name)``. A check that raises yields a failed result with
    ``worst_margin = -inf`` and the traceback in ``details``; ``seconds``, ``seed`` and
    ``size`` are filled here. ``on_result`` is called with each result as soon as its check
    finishes (before the next one starts), e.g. to print a line per check.
    """
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}, got {size!r}")
    load_check_modules()
    results = []
    for module_name, tb in sorted(_IMPORT_ERRORS.items()):
        name = f"import:{module_name}"
        if matches(name, pattern):
            results.append(CheckResult(
                name=name, claim=f"module {module_name} imports", paper="-", equation="-",
                instances=0, worst_margin=-math.inf, ground_truth={}, passed=False,
                details={"error": tb}, size=size))
            if on_result is not None:
                on_result(results[-1])
    for name, entry in _REGISTRY.items():
        if not matches(name, pattern):
            continue
        seed = seed_for(entry.seed_name or name)
        start = time.perf_counter()
        try:
            result = entry.func(seed, size)
            if not isinstance(result, CheckResult):
                raise TypeError(f"check returned {type(result).__name__}, not CheckResult")
        except Exception as exc:  # a crashing check is a failed check
            result = CheckResult(
                name=name, claim=entry.claim, paper=entry.paper, equation="-", instances=0,
                worst_margin=-math.inf, ground_truth={}, passed=False,
                details={"error": f"{type(exc).__name__}: {exc}",
                         "traceback": traceback.format_exc()})
        results.append(dataclasses.replace(
            result, seconds=time.perf_counter() - start, seed=seed, size=size))
        if on_result is not None:
            on_result(results[-1])
    return results
