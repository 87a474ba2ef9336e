"""constrfl's methods, one module per method (:mod:`repro.core.methods`), keyed by the name the
paper's tables print:

- ``"Algorithm 1"`` (:mod:`.algorithm1`): the federated proximal AL method
  (:class:`repro.constrfl.proxal.FedProxAL`), its subproblems (12) solved by Algorithm 2
  (:mod:`repro.constrfl.admm`, a subroutine and so no method of its own);
- ``"cProx-AL"`` (:mod:`.cprox_al`): the centralised baseline, Algorithm 3
  (:class:`repro.constrfl.cproxal.CentralProxAL`).

Both take a :class:`~repro.constrfl.config.ProxALConfig` (``configure(problem, **options)`` is
``ProxALConfig(**options)``: the defaults live there) and a
:class:`~repro.constrfl.start.ProxALInit` start. Each experiment names the methods its cells run
(``Experiment.methods``); a new file here is listed by ``repro list`` and runs in no table.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from repro.constrfl.config import ProxALConfig
from repro.constrfl.instances import qp_ball
from repro.constrfl.problem import Problem
from repro.core.methods import build as _build
from repro.core.methods import discover

__all__ = ["METHODS", "build", "tiny_problem"]

METHODS = discover(__name__, __path__)


def build(name: str, problem: Problem, config: ProxALConfig | None = None, *,
          init: Any = None, rng: Any = None, backend: str | None = None, **options: Any):
    """The method ``name`` of :data:`METHODS` on ``problem``: with ``config`` (a
    :class:`ProxALConfig`, used as is) or from ``options`` (its fields); ``init`` is the
    :class:`~repro.constrfl.start.ProxALInit` start (``None``: the paper's), ``backend``
    Algorithm 1's (``None``: its default; cProx-AL has none).
    """
    if config is None:
        return _build(METHODS, name, problem, init=init, rng=rng, backend=backend, **options)
    if options:
        raise ValueError(f"build({name!r}, ...): pass either config= or its fields as "
                         f"options, not both (got config and {sorted(options)})")
    if not isinstance(config, ProxALConfig):
        raise ValueError(f"config must be a ProxALConfig, got {type(config).__name__}")
    if name not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {name!r}")
    kwargs: dict[str, Any] = {"init": init, "rng": rng}
    if backend is not None:
        kwargs["backend"] = backend
    return METHODS[name].algorithm(problem, config, **kwargs)


def tiny_problem(seed: int = 0) -> Problem:
    """QP-ball (d = 6, n = 3, :func:`repro.constrfl.instances.qp_ball`) from ``seed``: a few
    outer iterations of either method take milliseconds.
    """
    return qp_ball(np.random.default_rng(seed))
