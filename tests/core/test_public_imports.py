"""Short public import paths of the paper packages, found by discovery: every
paper package that declares public names (``__all__``) is tested, none is listed.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import numpy as np
import pytest

from repro.engine.registry import paper_packages

PACKAGES = tuple(p for p, _ in paper_packages()
                 if hasattr(importlib.import_module(f"repro.{p}"), "__all__"))
# the algorithms each paper's public names must include (a new paper may add its own here)
ALGORITHMS = {
    "constrfl": ("ProxAL", "FedProxAL", "InexactADMM", "CProxAL", "CentralProxAL"),
    "relfair": ("ScaffPDIA", "FedAvg", "Scaffold", "SAFL", "StochasticAFL", "DRFA", "ScaffPD"),
    "fairvfl": ("FairVFL", "FedBCD"),
    "fedmm": ("FedMM", "FedAvgGDA", "FedProxGDA", "FedSGDA"),
}


@pytest.mark.parametrize("pkg", PACKAGES)
def test_every_public_name_resolves(pkg):
    assert set(ALGORITHMS) <= set(PACKAGES)  # the four papers are discovered
    mod = importlib.import_module(f"repro.{pkg}")
    assert set(ALGORITHMS.get(pkg, ())) <= set(mod.__all__)
    assert mod.__all__ == sorted(set(mod.__all__))
    for name in mod.__all__:
        assert getattr(mod, name) is not None, name
        assert name in dir(mod)
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        mod.Nope  # noqa: B018


def test_aliases_are_the_paper_classes():
    from repro.constrfl import CentralProxAL, CProxAL, FedProxAL, ProxAL
    from repro.relfair import SAFL, StochasticAFL

    assert ProxAL is FedProxAL and CProxAL is CentralProxAL and StochasticAFL is SAFL


def test_importing_the_packages_has_no_registry_side_effects():
    names = {pkg: importlib.import_module(f"repro.{pkg}").__all__ for pkg in PACKAGES}
    code = ("import json, sys\n"
            + "".join(f"import repro.{p}\n" for p in PACKAGES)
            + "roots = sorted(m for m in sys.modules if m.count('.') > 1 and "
            f"m.split('.')[1] in {PACKAGES!r})\n"
            + "".join(f"from repro.{p} import {', '.join(ns)}\n" for p, ns in names.items())
            + "print(json.dumps([roots, sorted(m for m in sys.modules "
              "if m.startswith(('repro', 'theory')))]))")
    roots, loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                              text=True, check=True).stdout)
    assert roots == []  # before first use, the package roots load none of their submodules
    assert "repro.engine.registry" not in loaded
    assert not [m for m in loaded if m.endswith(".experiments") or m.startswith("theory")]


def test_submodules_still_import_through_the_package():
    from repro.fairvfl.experiments import claims
    from repro.fedmm import training

    assert claims.__name__ == "repro.fairvfl.experiments.claims"
    assert training.__name__ == "repro.fedmm.training"


def test_fedbcd_is_fair_vfl_without_the_dual():
    from repro.fairvfl import FairVFLConfig, FedBCD, LinearBlock, VFLProblem

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4))
    y = np.where(rng.random(40) < 0.5, 1, -1)
    y[:2] = 1
    s = np.arange(40) % 2 == 0
    alg = FedBCD(VFLProblem([LinearBlock(X[:, :2]), LinearBlock(X[:, 2:])], y, s),
                 FairVFLConfig(eps=0.0))
    assert alg.config.fair is False and alg.config.eps == 0.0
    alg.run(5)
    assert np.array_equal(alg.state.lam, np.zeros(2))


def test_scaffold_and_scaff_pd_are_scaff_pd_ia_configurations():
    import torch

    from repro.relfair import ClientProblem, Scaffold, ScaffPD, ScaffPDIA, split_clients

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 3)), rng.integers(0, 2, 60)
    problem = ClientProblem(split_clients(X, y, np.array_split(np.arange(60), 3), rng,
                                          classes=2))
    scaffold = Scaffold(problem, rng=torch.Generator().manual_seed(1), local_steps=2)
    pd = ScaffPD(problem, rng=torch.Generator().manual_seed(1), alpha=0.5)
    assert type(scaffold) is ScaffPDIA and type(pd) is ScaffPDIA
    assert scaffold.config.ambiguity.is_singleton and scaffold.config.local_steps == 2
    amb = pd.config.ambiguity
    assert (amb.alpha, amb.phi) == (0.5, 0.0)
    np.testing.assert_allclose(amb.w, [2 / 3, 1 / 3, 0.0], atol=1e-12)  # Delta_0.5, n = 3
