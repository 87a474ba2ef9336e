"""The one table of paper 002's methods: name -> factory building the paper's configuration
(App. J.2; specs/relfair.md §3.0 table).

``METHODS`` lists the six methods in Table 1's order; ``build(name, engine, theta0, generator,
**options)`` returns one ready to ``step()``. Scaffold and Scaff-PD are :class:`ScaffPDIA` with
the singleton ``{1/n}`` (``alpha = 1``, ``phi = 0``) and with ``Delta_alpha`` (``phi = 0``) as
ambiguity set (App. J.2).

Options (every factory takes them all): ``alpha`` and ``phi`` of Lambda_phi(Delta_alpha,
Delta_alpha) (0.2 and 0.2, App. J.2); ``local_steps`` J; ``setup`` (:class:`TrainSetup`);
``tau``, the global step of the Scaffold-type methods (changed only by the server-step
ablation, ``relfair.ablation_server_step``); ``local_work``: ``"steps"`` (J local SGD steps) or
``"epochs"`` (J local epochs, App. J.2; :func:`repro.relfair.federated.epoch_schedule`). SAFL
takes one minibatch step per round under either (App. J.2 excludes it from J).
"""

from __future__ import annotations

import torch

from repro.core.validation import check_choice
from repro.relfair.client_batch import ClientEngine
from repro.relfair.drfa import DRFA, DRFAHyper
from repro.relfair.fedavg import FedAvg, FedAvgHyper
from repro.relfair.federated import DEFAULT_SETUP, LOCAL_WORK, FederatedMethod, TrainSetup
from repro.relfair.models import Params
from repro.relfair.problem import RelativeAmbiguitySet
from repro.relfair.safl import SAFL, SAFLHyper
from repro.relfair.scaff_pd_ia import ScaffPDIA, ScaffPDIAHyper

__all__ = ["METHODS", "build"]


def _fedavg(engine, theta0, generator, *, alpha, phi, local_steps, setup, tau, local_work):
    hyper = FedAvgHyper(0.1, local_steps=local_steps, local_work=local_work)
    return FedAvg(engine, hyper, theta0, generator, setup)


def _scaffold(engine, theta0, generator, *, alpha, phi, local_steps, setup, tau, local_work):
    n = engine.data.n
    hyper = ScaffPDIAHyper(RelativeAmbiguitySet(n, 1.0, 1.0, 0.0), tau=tau,
                           local_steps=local_steps, local_work=local_work)
    return ScaffPDIA(engine, hyper, theta0, generator, setup)


def _safl(engine, theta0, generator, *, alpha, phi, local_steps, setup, tau, local_work):
    dro = RelativeAmbiguitySet(engine.data.n, alpha, alpha, 0.0)
    return SAFL(engine, SAFLHyper(dro, 0.1, 1e-3), theta0, generator, setup)


def _drfa(engine, theta0, generator, *, alpha, phi, local_steps, setup, tau, local_work):
    dro = RelativeAmbiguitySet(engine.data.n, alpha, alpha, 0.0)
    hyper = DRFAHyper(dro, 0.1, gamma=1e-3, local_steps=local_steps, local_work=local_work)
    return DRFA(engine, hyper, theta0, generator, setup)


def _scaff_pd(engine, theta0, generator, *, alpha, phi, local_steps, setup, tau, local_work):
    dro = RelativeAmbiguitySet(engine.data.n, alpha, alpha, 0.0)
    hyper = ScaffPDIAHyper(dro, tau=tau, local_steps=local_steps, local_work=local_work)
    return ScaffPDIA(engine, hyper, theta0, generator, setup)


def _scaff_pd_ia(engine, theta0, generator, *, alpha, phi, local_steps, setup, tau, local_work):
    n = engine.data.n
    hyper = ScaffPDIAHyper(RelativeAmbiguitySet(n, alpha, alpha, phi), tau=tau,
                           local_steps=local_steps, local_work=local_work)
    return ScaffPDIA(engine, hyper, theta0, generator, setup)


METHODS = {
    "FedAvg": _fedavg,
    "Scaffold": _scaffold,
    "SAFL": _safl,
    "DRFA": _drfa,
    "Scaff-PD": _scaff_pd,
    "Scaff-PD-IA": _scaff_pd_ia,
}


def build(method: str, engine: ClientEngine, theta0: Params, generator: torch.Generator, *,
          alpha: float = 0.2, phi: float = 0.2, local_steps: int = 5,
          setup: TrainSetup = DEFAULT_SETUP, tau: float = 2.5e-2,
          local_work: str = "steps") -> FederatedMethod:
    """The paper's configuration of ``method`` (App. J.2; specs/relfair.md §3.0 table); the
    options are described in the module docstring.
    """
    check_choice("local_work", local_work, LOCAL_WORK)
    if method not in METHODS:
        raise ValueError(f"method must be one of {tuple(METHODS)}, got {method!r}")
    return METHODS[method](engine, theta0, generator, alpha=alpha, phi=phi,
                           local_steps=local_steps, setup=setup, tau=tau, local_work=local_work)
