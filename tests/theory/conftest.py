"""The theory tests' shared clean runs: a check at size "small" without any plant, computed
once per test process (the planted-bug, path and term tests compare against it).
"""

from __future__ import annotations

import sys
from functools import cache

import numpy as np
import pytest

from theory.registry import load_check_modules, registered, seed_for


def _clear_caches() -> None:
    """Drop every memoised run of the theory package (e.g. the constrfl sweep the three
    Algorithm-1 checks share), so a run under a plant computes afresh.
    """
    for mod_name, mod in list(sys.modules.items()):
        if not mod_name.startswith("theory.") or mod is None:
            continue
        for value in list(vars(mod).values()):
            clear = getattr(value, "cache_clear", None)
            if callable(clear):
                clear()


def run_check(name: str):
    """Check ``name`` at size "small" with its registry seed (numpy warnings off), with
    the theory package's memoised runs dropped first.
    """
    load_check_modules()
    _clear_caches()
    entry = registered()[name]
    with np.errstate(all="ignore"):
        return entry.func(seed_for(entry.seed_name or name), "small")


@cache
def _clean(name: str):
    return run_check(name)


@pytest.fixture
def clean():
    """``clean(name)``: the unplanted small-size result of check ``name`` (cached)."""
    return _clean


@pytest.fixture
def run():
    """``run(name)``: check ``name`` at size "small", now (under whatever is planted)."""
    return run_check
