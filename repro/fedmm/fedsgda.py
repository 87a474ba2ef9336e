"""FedSGDA (Peng et al.; Algorithm 1 of paper 004, body lost in the text;
docs/decisions.md#fedmm-baselines): one stochastic gradient per client at the global point, averaged
by the server.
"""

from __future__ import annotations

from dataclasses import dataclass

from repro.fedmm.blocks import Block, check_blocks
from repro.fedmm.fedavg_gda import FedAvgGDA


@dataclass(frozen=True)
class FedSGDAConfig:
    """FedSGDA hyperparameters: the blocks (their ``eta`` the server's steps; ``mu`` unused).
    One local step by definition, so no ``local_steps``.
    """

    blocks: tuple[Block, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "blocks", check_blocks(self.blocks))


class FedSGDA(FedAvgGDA):
    """Peng et al.'s FedSGDA (Algorithm 1, body lost in the text;
    docs/decisions.md#fedmm-baselines): one stochastic gradient per client at the global point,
    averaged by the server. Identical to FedAvgGDA with M = 1 and no prox.
    """

    @property
    def local_steps(self) -> int:
        return 1
