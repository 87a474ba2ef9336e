"""FedAvg (McMahan et al. 2017) as App. J.2 runs it: J local epochs (or steps) of SGD at lr 0.1,
uniform average (docs/decisions.md#relfair-fedavg).
"""

from __future__ import annotations

from repro.core.methods import Method
from repro.relfair.fedavg import FedAvg, FedAvgConfig
from repro.relfair.federated import ClientProblem
from repro.relfair.methods._options import used


def configure(problem: ClientProblem, **options) -> FedAvgConfig:
    return FedAvgConfig(**used("FedAvg", options, "local_steps", "local_work"))


METHOD = Method("FedAvg", FedAvg, configure,
                "FedAvg: J local SGD epochs, uniform average (App. J.2)")
