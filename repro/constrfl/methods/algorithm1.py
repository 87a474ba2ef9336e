"""Algorithm 1 (Sec. 3): the federated proximal AL method, its subproblems (12) solved by the
inexact ADMM of Algorithm 2 (Sec. 4).
"""

from __future__ import annotations

from repro.constrfl.config import ProxALConfig
from repro.constrfl.proxal import FedProxAL
from repro.core.methods import Method, fields_of


def _configure(problem, **options) -> ProxALConfig:
    return ProxALConfig(**options)


METHOD = Method(
    name="Algorithm 1",
    algorithm=FedProxAL,
    configure=_configure,
    summary="proximal AL FL method, subproblems by inexact ADMM (Sec. 3, Algorithms 1-2)",
    options=fields_of(ProxALConfig),
)
