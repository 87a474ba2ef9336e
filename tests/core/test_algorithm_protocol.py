"""Each paper's main algorithm against :class:`repro.core.algorithm.Algorithm` (issue 13).

Built on tiny instances through the papers' public exports, each algorithm must carry the
protocol's members, take one ``step()`` without arguments, and return its ``state`` from
``run``. FairVFL and the relfair methods keep their historical names for the hyperparameters
(``params``, ``hyper``) and expose the same object as ``config``.

``FedProxAL.run()`` takes no
round count: it runs to Algorithm 1's own stopping test (11) or ``k_max``, which the protocol's
``run(...)`` allows.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from repro.core.algorithm import Algorithm


def _constrfl():
    from repro.constrfl import ProxAL, ProxALConfig
    from repro.constrfl.instances import qp_ball

    problem = qp_ball(np.random.default_rng(0), d=3, n=2)
    return ProxAL(problem, ProxALConfig(k_max=2), w0=np.zeros(3)), {}


def _fairvfl():
    from repro.fairvfl import FairVFL, FairVFLParams, LinearBlock

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4))
    y = np.where(X[:, 0] > 0, 1, -1)
    s = rng.random(40) < 0.5
    return FairVFL([LinearBlock(X[:, :2]), LinearBlock(X[:, 2:])], y, s,
                   FairVFLParams()), {"rounds": 2}


def _relfair():
    import torch

    from repro.relfair import (
        ClientEngine,
        RelativeAmbiguitySet,
        ScaffPDIA,
        ScaffPDIAHyper,
        TrainSetup,
        init_params,
        split_clients,
    )

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int)
    parts = np.array_split(rng.permutation(60), 3)
    engine = ClientEngine(split_clients(X, y, parts, rng, classes=2))
    setup = TrainSetup(batch=8, hidden=4, dropout=0.0)
    theta0 = init_params(3, setup.hidden, 2, torch.Generator().manual_seed(0))
    hyper = ScaffPDIAHyper(RelativeAmbiguitySet(3, alpha=0.5, beta=0.5, phi=0.2))
    return ScaffPDIA(engine, hyper, theta0, torch.Generator().manual_seed(1), setup), {
        "rounds": 2}


def _fedmm():
    import torch

    from repro.fedmm import Block, FedMM, FedMMConfig, LocalGDA

    class Bilinear:  # f_i(w, psi) = |w|^2/2 + w psi - |psi|^2/2: gradients [w + psi; psi - w]
        n_clients = 2

        def batched(self, theta, t, m):
            w, psi = theta[:, :1], theta[:, 1:]
            return torch.cat([w + psi, psi - w], dim=1)

        def client(self, i, theta_i, t, m):
            return self.batched(theta_i.expand(2, -1), t, m)[i]

    blocks = (Block("omega", 1, eta=0.1, mu=1.0), Block("psi", 1, eta=0.1, mu=1.0))
    theta0 = torch.ones(2, dtype=torch.float64)
    return FedMM(FedMMConfig(blocks), theta0, 2, LocalGDA(Bilinear(), local_steps=2)), {
        "rounds": 2}


BUILDERS = {"constrfl": _constrfl, "fairvfl": _fairvfl, "relfair": _relfair, "fedmm": _fedmm}


@pytest.mark.parametrize("paper", list(BUILDERS))
def test_the_main_algorithm_conforms(paper):
    alg, _ = BUILDERS[paper]()
    assert isinstance(alg, Algorithm), type(alg).__name__
    # the hyperparameters: a frozen dataclass, the object the algorithm was built with
    import dataclasses

    assert dataclasses.is_dataclass(alg.config) and alg.config.__dataclass_params__.frozen


def test_the_protocol_refuses_an_algorithm_without_config():
    class NoConfig:
        state = None

        def step(self):
            return []

        def run(self, rounds):
            return self.state

    assert not isinstance(NoConfig(), Algorithm)


@pytest.mark.parametrize("paper", list(BUILDERS))
def test_state_step_and_run_conform_everywhere(paper):
    alg, run_args = BUILDERS[paper]()
    required = [p for p in list(inspect.signature(alg.step).parameters.values())
                if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    assert not required, f"{paper}: step() requires {required}"
    state_type = type(alg.state)
    alg.step()
    assert type(alg.state) is state_type
    assert alg.run(**run_args) is alg.state


def test_the_protocol_rejects_what_lacks_a_member():
    class NoRun:
        config, state = 1, 2

        def step(self):
            return []

    assert not isinstance(NoRun(), Algorithm)


def test_run_rounds_steps_and_reports_each_round():
    from repro.core.algorithm import run_rounds

    class Counter:
        def __init__(self):
            self.state = 0

        def step(self):
            self.state += 1

    seen = []
    alg = Counter()
    assert run_rounds(alg, 3, seen.append) == 3 and seen == [1, 2, 3]
    assert run_rounds(alg, 0) == 3  # zero rounds: no step, the state as it was
