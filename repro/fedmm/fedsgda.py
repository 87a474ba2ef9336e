"""FedSGDA (Peng et al.; Algorithm 1 of paper 004, body lost in the text; specs/fedmm.md §2):
one stochastic gradient per client at the global point, averaged by the server.
"""

from __future__ import annotations

import torch

from repro.fedmm.fedavg_gda import BaselineConfig, FedAvgGDA
from repro.fedmm.local_gda import LocalGDA
from repro.fedmm.problem import PlayerGradient

Tensor = torch.Tensor


def FedSGDA(config: BaselineConfig, theta0: Tensor, n_clients: int,
            oracle: PlayerGradient, backend: str = "vectorized") -> FedAvgGDA:
    """Peng et al.'s FedSGDA (Algorithm 1, body lost in the text; specs/fedmm.md §2): one stochastic
    gradient per client at the global point, averaged by the server. Identical to FedAvgGDA with
    M = 1 and no prox.
    """
    return FedAvgGDA(BaselineConfig(config.blocks, prox=False), theta0, n_clients,
                     LocalGDA(oracle, 1, backend))
