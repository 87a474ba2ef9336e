"""FedMM, Algorithm 3 of paper 004 (:mod:`repro.fedmm.fedmm`)."""

from __future__ import annotations

from repro.core.methods import Method, fields_of
from repro.fedmm.fedmm import FedMM, FedMMConfig
from repro.fedmm.methods._options import make_config


def _configure(problem, **options) -> FedMMConfig:
    return make_config(FedMMConfig, problem, options)


METHOD = Method(name="FedMM", algorithm=FedMM, configure=_configure,
                summary="local GDA on augmented Lagrangians, client duals, eta3-weighted "
                        "upload (Algorithm 3, eqs. (11)-(16))",
                options=fields_of(FedMMConfig))
