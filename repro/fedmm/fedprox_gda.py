"""FedProxGDA, Algorithm 2 of paper 004 with FedProx's L_i of line 6 (specs/fedmm.md §2): the
local GDA adds ``mu (theta - theta0^t)``.
"""

from __future__ import annotations

import torch

from repro.fedmm.fedavg_gda import BaselineConfig, FedAvgGDA
from repro.fedmm.local_gda import LocalSolver

Tensor = torch.Tensor


def FedProxGDA(config: BaselineConfig, theta0: Tensor, n_clients: int,
               local_solver: LocalSolver) -> FedAvgGDA:
    """Algorithm 2, line 6: FedAvgGDA on the clients' proximal objectives.

    f_i + (mu/2)||omega - omega0||^2 - (mu/2)||psi - psi0||^2
    """
    if not config.prox:
        config = BaselineConfig(config.blocks, prox=True)
    return FedAvgGDA(config, theta0, n_clients, local_solver)
