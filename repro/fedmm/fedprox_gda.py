"""FedProxGDA, Algorithm 2 of paper 004 with FedProx's L_i of line 6
(docs/decisions.md#fedmm-baselines): the local GDA adds ``mu (theta - theta0^t)``.
"""

from __future__ import annotations

from dataclasses import dataclass

from repro.fedmm.blocks import Block, check_blocks
from repro.fedmm.fedavg_gda import FedAvgGDA
from repro.fedmm.local_gda import check_local_steps


@dataclass(frozen=True)
class FedProxGDAConfig:
    """FedProxGDA hyperparameters: the blocks (each block's ``mu`` is the FedProx coefficient
    of Alg. 2 line 6) and the local GDA steps M (20 in Sec. 6's experiments).
    """

    blocks: tuple[Block, ...]
    local_steps: int = 20

    def __post_init__(self) -> None:
        object.__setattr__(self, "blocks", check_blocks(self.blocks))
        check_local_steps(self.local_steps)


class FedProxGDA(FedAvgGDA):
    """Algorithm 2, line 6: FedAvgGDA on the clients' proximal objectives.

    f_i + (mu/2)||omega - omega0||^2 - (mu/2)||psi - psi0||^2
    """

    PROX = True
