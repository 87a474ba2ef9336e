"""FedProxGDA, Algorithm 2 of paper 004 with FedProx's L_i (:mod:`repro.fedmm.fedprox_gda`)."""

from __future__ import annotations

from repro.core.methods import Method, fields_of
from repro.fedmm.fedprox_gda import FedProxGDA, FedProxGDAConfig
from repro.fedmm.methods._options import make_config


def _configure(problem, **options) -> FedProxGDAConfig:
    return make_config(FedProxGDAConfig, problem, options)


METHOD = Method(name="FedProxGDA", algorithm=FedProxGDA, configure=_configure,
                summary="local GDA on f_i plus the prox term mu (theta - theta0) "
                        "(Algorithm 2, line 6)",
                options=fields_of(FedProxGDAConfig))
