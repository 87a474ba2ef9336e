"""What a theory check may take from the package (theory/reference_rule.py): no reference
quantity read from ``repro/``. The rule runs over the imports and attribute accesses of every
check module; a planted violation of each kind is caught.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import theory
from theory.reference_rule import (
    ALLOWED_MODULES,
    FORBIDDEN_MODULES,
    check_modules,
    violations,
)

ROOT = Path(theory.__file__).parent


def test_every_check_module_follows_the_rule():
    assert check_modules(ROOT) == {}


@pytest.mark.parametrize(("source", "fragment"), [
    ("from repro.core.metrics import relative_fairness_ratio\n", "reference module"),
    ("from repro.core import metrics\n", "reference module"),
    ("import repro.constrfl.groundtruth\n", "reference module"),
    ("from repro.relfair.instances import exact_saddle\n", "ground-truth function"),
    ("from repro.fairvfl.analysis import fixed_point\n", "reference module"),
    ("def f(alg):\n    return alg.state.prev_losses\n", ".prev_losses"),
    ("def f(amb):\n    return amb.l1_norm\n", ".l1_norm"),
    ("def f(alg, w):\n    return alg.merits(w)\n", ".merits"),
    ("def f(st):\n    return st.increments_sq\n", ".increments_sq"),
    ("def f(inst):\n    return inst.saddle()\n", ".saddle"),
    ("from repro.engine.registry import load_all\n", "does not classify"),
    ("UNDER_TEST = {'skewness': ''}\n", "gives no reason"),
    ("UNDER_TEST = {'repro.core.metrics': 'the metric under test'}\n", "does not use"),
])
def test_a_planted_violation_is_caught(source, fragment):
    found = violations(source)
    assert any(fragment in v for v in found), found


def test_under_test_exempts_the_measured_side():
    source = ("from repro.core import metrics\n"
              "UNDER_TEST = {'repro.core.metrics': 'the metric the statement is about'}\n"
              "def f(l):\n    return metrics.top_cvar(l, 0.2)\n")
    assert violations(source) == []


def test_the_classification_is_disjoint_and_names_real_modules():
    import importlib

    assert not ALLOWED_MODULES & FORBIDDEN_MODULES
    for name in sorted(ALLOWED_MODULES | FORBIDDEN_MODULES):
        importlib.import_module(name)
