"""FedSGDA (Peng et al.; Algorithm 1 of paper 004, :mod:`repro.fedmm.fedsgda`)."""

from __future__ import annotations

from repro.core.methods import Method, fields_of
from repro.fedmm.fedsgda import FedSGDA, FedSGDAConfig
from repro.fedmm.methods._options import make_config


def _configure(problem, **options) -> FedSGDAConfig:
    return make_config(FedSGDAConfig, problem, options)


METHOD = Method(name="FedSGDA", algorithm=FedSGDA, configure=_configure,
                summary="Peng et al.: one stochastic gradient per client, averaged "
                        "(Algorithm 1; FedAvgGDA with M = 1)",
                options=fields_of(FedSGDAConfig))
