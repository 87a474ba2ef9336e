"""Every package code path a registered experiment plans (backend, local work, reference flags,
dtype) is driven by every check claiming a statement about that algorithm
(theory/paths.py): the experiments' paths are listed from the registry and compared with the
paths the checks' results record.
"""

from __future__ import annotations

import pytest

from theory.paths import CLAIMS, NOT_CLAIMING, UNCLAIMED, experiment_paths, unchecked
from theory.registry import load_check_modules, registered

pytestmark = pytest.mark.xdist_group("theory-claiming-checks")


def test_the_experiments_paths_are_listed():
    planned = experiment_paths()
    # among them: relfair's two readings, constrfl's script set, fedmm's graphed
    assert {"vectorized/epochs/float32", "vectorized/steps/float32"} <= planned[
        "relfair:Scaff-PD-IA"]
    assert "fairness/newton_clip+reuse" in planned["constrfl:Algorithm 1"]
    assert {"loop/float32", "graphed/float32"} <= planned["fedmm:FedMM"]
    assert "journal/MLP-float32/Q=1" in planned["fairvfl:FairVFL"]
    assert set(planned) <= set(UNCLAIMED) | {f for fams in CLAIMS.values() for f in fams}


def test_every_planned_path_is_driven_by_its_claiming_checks(clean):
    driven = {name: clean(name).paths for name in CLAIMS}
    assert unchecked(experiment_paths(), driven) == []


def test_every_check_is_classified():
    """A check either claims statements about an algorithm (and drives all its paths) or says
    why it does not; a new check must be put in one of the two.
    """
    load_check_modules()
    assert not set(CLAIMS) & set(NOT_CLAIMING)
    assert set(registered()) == set(CLAIMS) | set(NOT_CLAIMING)
    assert all(reason.strip() for reason in NOT_CLAIMING.values())


def test_an_undriven_path_is_reported():
    planned = {"relfair:Scaff-PD-IA": {"vectorized/epochs/float32", "loop/steps/float64"},
               "relfair:Brand-New": {"vectorized/steps/float32"}, "relfair:FedAvg": {"x"}}
    driven = {"relfair.theorem3_convergence": ["relfair:Scaff-PD-IA/vectorized/epochs/float32"]}
    assert unchecked(planned, driven) == [
        "relfair:Brand-New: no check claims a statement about it",
        "relfair:Scaff-PD-IA/loop/steps/float64: not driven by relfair.theorem3_convergence"]
