"""The methods of paper 004, one module per method (:mod:`repro.core.methods`): FedMM
(Algorithm 3), FedAvgGDA and FedProxGDA (Algorithm 2), FedSGDA. Each module defines
``METHOD = Method(name, algorithm, configure, summary)``; :data:`METHODS` collects them, so a
new file here is a new method (listed by ``repro list``, in no table until an experiment's
``methods`` names it).

``build(name, problem, *, init=None, rng=None, backend=None, **options)`` makes one by name on
the clients' player-gradient oracle ``problem``; each method declares the options it reads
(its config's fields: ``blocks``, ``local_steps``, FedMM's ``eta3``, ``eta3_constant``), a call
may pass any option some method here declares and each method receives its own (FedSGDA: one
local step whatever ``local_steps``; only FedMM has eta3); the defaults are in each config
dataclass.
"""

from __future__ import annotations

from typing import Any

from repro.core.methods import build as _build
from repro.core.methods import discover

METHODS = discover(__name__, __path__)


def build(name: str, problem: Any, **kwargs: Any) -> Any:
    """The method ``name`` of :data:`METHODS` on ``problem``
    (:meth:`repro.core.methods.Method.build`: ``init``, ``rng``, ``backend`` and the methods'
    options as keywords); an unknown name is a ValueError listing the known ones.
    """
    return _build(METHODS, name, problem, **kwargs)


def tiny_problem(seed: int = 0):
    """A two-client quadratic saddle problem (Q of docs/decisions.md#fedmm-theory-instances, d1 = 3,
    d2 = 2; :class:`repro.fedmm.instances.QuadOracle`, deterministic in ``seed``): small enough for
    the generic protocol test.
    """
    from repro.fedmm.instances import QuadOracle, gen_Q

    return QuadOracle(gen_Q(seed, N=2, d1=3, d2=2))
