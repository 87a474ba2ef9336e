"""FedBCD ([C] ref. [7], docs/decisions.md#fairvfl-fedbcd): Fair VFL without the constraint (lam =
0).
"""

from __future__ import annotations

from repro.core.methods import Method
from repro.fairvfl.fair_vfl import FairVFLConfig
from repro.fairvfl.fedbcd import FedBCD
from repro.fairvfl.methods._options import OPTIONS, fair_vfl_config


def _configure(problem, **options) -> FairVFLConfig:
    return fair_vfl_config(False, options)


METHOD = Method(
    name="FedBCD",
    algorithm=FedBCD,
    configure=_configure,
    summary="FedBCD ([C] ref. [7]): the Fair VFL round with lam = 0, every sample weighing 1/n",
    options=OPTIONS,
)
