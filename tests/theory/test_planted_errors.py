"""Every theory check of the projections can fail (the papers' checks have their own
files: test_constrfl_planted.py, test_relfair_planted.py, test_fairvfl_planted.py,
test_fedmm_planted.py).
For each check: the error it exists to catch is planted (monkeypatch of the function under
test, or of the formula the check holds the code against), the check is run at size "small"
and must FAIL (``passed`` False, ``worst_margin < 0``); the same test first runs it without
the plant and it must pass. So removing the plant from a test makes that test fail.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import repro.core.projections as P
from theory.registry import load_check_modules, registered, seed_for

load_check_modules()


# ----------------------------------------------------------------------------- the plants
def _wrap(mp, owner, name, make):
    """Replace ``owner.name`` by ``make(original)``."""
    mp.setattr(owner, name, make(getattr(owner, name)))


def _shifted(orig):
    """A projection off by 1e-6 in its first coordinate."""
    def planted(*args, **kwargs):
        x = np.array(orig(*args, **kwargs), dtype=float)
        x.flat[0] += 1e-6
        return x
    return planted


PLANTS = {
    # ---- projections
    **{f"projections.{k}": (f"{fn} off by 1e-6",
                            lambda mp, fn=fn: _wrap(mp, P, fn, _shifted))
       for k, fn in (("orthant", "nonneg_projection"), ("box", "box_projection"),
                     ("ball", "ball_projection"), ("simplex", "simplex_projection"),
                     ("capped_simplex", "capped_simplex_projection"))},
}

# constrfl and relfair: tests/theory/test_constrfl_planted.py, test_relfair_planted.py;
# fairvfl: tests/theory/test_fairvfl_planted.py
MINE = sorted(n for n in registered() if n.split(".")[0] == "projections")


def _run(name):
    entry = registered()[name]
    return entry.func(seed_for(entry.seed_name or name), "small")


def test_every_check_has_a_plant():
    assert set(PLANTS) == set(MINE)


@pytest.mark.parametrize("name", MINE)
def test_check_fails_on_its_planted_error(name, monkeypatch):
    clean = _run(name)
    assert clean.passed and clean.worst_margin >= 0, (name, clean.details)
    _what, plant = PLANTS[name]
    plant(monkeypatch)
    planted = _run(name)
    monkeypatch.undo()
    assert not planted.passed, (name, _what, planted.worst_margin)
    assert planted.worst_margin < 0 or math.isnan(planted.worst_margin), (name, _what)
