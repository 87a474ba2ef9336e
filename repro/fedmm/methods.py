"""The methods of paper 004 by name: the one table an experiment, a benchmark or a user picks
an algorithm from (:data:`METHODS`, :func:`build`).

Each factory takes the coordinate blocks, the initial ``theta0``, the clients' player-gradient
oracle and the local-solver settings, and returns the algorithm with a :class:`LocalGDA` on that
oracle: FedMM (Algorithm 3), FedAvgGDA and FedProxGDA (Algorithm 2), FedSGDA (one local step,
``local_steps`` ignored).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from repro.core.validation import check_choice
from repro.fedmm.blocks import Block
from repro.fedmm.fedavg_gda import BaselineConfig, FedAvgGDA
from repro.fedmm.federated import Federated
from repro.fedmm.fedmm import FedMM, FedMMConfig
from repro.fedmm.fedprox_gda import FedProxGDA
from repro.fedmm.fedsgda import FedSGDA
from repro.fedmm.local_gda import LocalGDA
from repro.fedmm.problem import PlayerGradient

Tensor = torch.Tensor
Factory = Callable[..., Federated]


def _fedmm(blocks: tuple[Block, ...], theta0: Tensor, oracle: PlayerGradient, *,
           local_steps: int, eta3: float, backend: str) -> Federated:
    return FedMM(FedMMConfig(blocks, eta3), theta0, oracle.n_clients,
                 LocalGDA(oracle, local_steps, backend))


def _fedavg_gda(blocks: tuple[Block, ...], theta0: Tensor, oracle: PlayerGradient, *,
                local_steps: int, eta3: float, backend: str) -> Federated:
    return FedAvgGDA(BaselineConfig(blocks), theta0, oracle.n_clients,
                     LocalGDA(oracle, local_steps, backend))


def _fedprox_gda(blocks: tuple[Block, ...], theta0: Tensor, oracle: PlayerGradient, *,
                 local_steps: int, eta3: float, backend: str) -> Federated:
    return FedProxGDA(BaselineConfig(blocks), theta0, oracle.n_clients,
                      LocalGDA(oracle, local_steps, backend))


def _fedsgda(blocks: tuple[Block, ...], theta0: Tensor, oracle: PlayerGradient, *,
             local_steps: int, eta3: float, backend: str) -> Federated:
    return FedSGDA(BaselineConfig(blocks), theta0, oracle.n_clients, oracle, backend)


METHODS: dict[str, Factory] = {"FedMM": _fedmm, "FedAvgGDA": _fedavg_gda,
                               "FedProxGDA": _fedprox_gda, "FedSGDA": _fedsgda}
ALGORITHMS = tuple(METHODS)


def build(name: str, blocks: Sequence[Block], theta0: Tensor, oracle: PlayerGradient, *,
          local_steps: int, eta3: float = 1.0, backend: str = "vectorized") -> Federated:
    """The method ``name`` of :data:`METHODS` with a :class:`LocalGDA` on ``oracle``."""
    check_choice("algorithm", name, ALGORITHMS)
    return METHODS[name](tuple(blocks), theta0, oracle, local_steps=local_steps, eta3=eta3,
                         backend=backend)
