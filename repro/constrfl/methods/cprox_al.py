"""cProx-AL (Algorithm 3, App. D): the centralised proximal AL method the paper compares
Algorithm 1 with.
"""

from __future__ import annotations

from repro.constrfl.config import ProxALConfig
from repro.constrfl.cproxal import CentralProxAL
from repro.core.methods import Method, fields_of


def _configure(problem, **options) -> ProxALConfig:
    return ProxALConfig(**options)


METHOD = Method(
    name="cProx-AL",
    algorithm=CentralProxAL,
    configure=_configure,
    summary="centralised proximal AL on the pooled data (App. D, Algorithm 3)",
    options=fields_of(ProxALConfig),
)
