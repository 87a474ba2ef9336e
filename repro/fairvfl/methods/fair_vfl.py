"""Fair VFL ([C] Alg. 1-2, [J] Alg. 1-3): the fairness constraint on (``fair=True``)."""

from __future__ import annotations

from repro.core.methods import Method
from repro.fairvfl.fair_vfl import FairVFL, FairVFLConfig
from repro.fairvfl.methods._options import OPTIONS, fair_vfl_config


def _configure(problem, **options) -> FairVFLConfig:
    return fair_vfl_config(True, options)


METHOD = Method(
    name="FairVFL",
    algorithm=FairVFL,
    configure=_configure,
    summary="Fair VFL, asynchronous gradient coordinate-descent ascent under the DEO "
            "constraint ([C] Alg. 1-2, [J] Alg. 1-3)",
    options=OPTIONS,
)
