"""FedAvg (McMahan et al. 2017) as App. J.2 runs it: J local epochs (or steps) of SGD at lr 0.1,
uniform average (docs/decisions.md#relfair-fedavg).
"""

from __future__ import annotations

from repro.core.methods import Method, fields_of
from repro.relfair.fedavg import FedAvg, FedAvgConfig
from repro.relfair.federated import ClientProblem


def configure(problem: ClientProblem, **options) -> FedAvgConfig:
    return FedAvgConfig(**options)


METHOD = Method("FedAvg", FedAvg, configure,
                "FedAvg: J local SGD epochs, uniform average (App. J.2)",
                fields_of(FedAvgConfig))
