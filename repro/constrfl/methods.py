"""The one table of constrfl's methods: the name the paper's tables print -> its factory.

Every method is built from ``(problem, config, w0)`` and solved with ``.run()``:

- ``"Algorithm 1"``: the federated proximal AL method (:class:`repro.constrfl.proxal.FedProxAL`),
  its subproblems (12) solved by Algorithm 2 (:mod:`repro.constrfl.admm`); keywords ``mu0``,
  ``mus`` (initial multipliers), ``backend``, ``keep_admm_history``;
- ``"cProx-AL"``: the centralised baseline, Algorithm 3
  (:class:`repro.constrfl.cproxal.CentralProxAL`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from repro.constrfl.config import ProxALConfig
from repro.constrfl.cproxal import CentralProxAL
from repro.constrfl.problem import Problem
from repro.constrfl.proxal import FedProxAL
from repro.core.validation import check_choice

__all__ = ["METHODS", "build"]

METHODS: dict[str, Callable[..., FedProxAL | CentralProxAL]] = {
    "Algorithm 1": FedProxAL,
    "cProx-AL": CentralProxAL,
}


def build(name: str, problem: Problem, config: ProxALConfig, w0: np.ndarray,
          **kwargs) -> FedProxAL | CentralProxAL:
    """The method ``name`` of :data:`METHODS` on ``problem`` from ``w0`` (``kwargs`` go to its
    factory).
    """
    check_choice("name", name, tuple(METHODS))
    return METHODS[name](problem, config, w0, **kwargs)
