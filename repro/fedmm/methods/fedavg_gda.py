"""FedAvgGDA, Algorithm 2 of paper 004 with L_i = f_i (:mod:`repro.fedmm.fedavg_gda`)."""

from __future__ import annotations

from repro.core.methods import Method, fields_of
from repro.fedmm.fedavg_gda import FedAvgGDA, FedAvgGDAConfig
from repro.fedmm.methods._options import make_config


def _configure(problem, **options) -> FedAvgGDAConfig:
    return make_config(FedAvgGDAConfig, problem, options)


METHOD = Method(name="FedAvgGDA", algorithm=FedAvgGDA, configure=_configure,
                summary="M local GDA steps, plain averaging (Algorithm 2, L_i = f_i)",
                options=fields_of(FedAvgGDAConfig))
