"""The typed messages of paper 004's protocol (Algorithms 2 and 3): what the server broadcasts
and what each client uploads in a round. Nothing else crosses the wire.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import torch

from repro.core.algorithm import RoundMessages as CoreRoundMessages

Tensor = torch.Tensor


@dataclass(frozen=True)
class Broadcast:
    """Server -> every client at the start of round t: the global parameters (omega0, psi0)."""

    round: int
    theta0: Tensor


@dataclass(frozen=True)
class Upload:
    """Client i -> server: theta_i^{t+} of (15) (FedMM) or theta_i^{t+1} (baselines).

    Nothing else crosses the wire; in particular the duals lambda_i, beta_i stay on the client.
    """

    client: int
    theta: Tensor


@dataclass(frozen=True)
class RoundMessages(CoreRoundMessages):
    """Everything that crossed the wire in round ``round`` (1-based, :mod:`repro.core.algorithm`):
    ``downlink`` holds the one :class:`Broadcast` (whose own ``round`` is the paper's t =
    ``round - 1``), ``uplink`` the N :class:`Upload` in client order; :attr:`broadcast` and
    :attr:`uploads` name them.
    """

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.downlink) != 1 or not isinstance(self.downlink[0], Broadcast):
            raise ValueError(f"fedmm RoundMessages.downlink must be one Broadcast, got "
                             f"{self.downlink!r}")
        if not all(isinstance(u, Upload) for u in self.uplink):
            raise ValueError("fedmm RoundMessages.uplink must hold Upload messages only")

    @property
    def broadcast(self) -> Broadcast:
        """Server -> every client: theta0^t."""
        return self.downlink[0]

    @property
    def uploads(self) -> tuple[Upload, ...]:
        """Client i -> server, i = 0, ..., N-1."""
        return self.uplink


def message_fields(msg: object) -> tuple[str, ...]:
    """The field names of a message (what it carries; the tests check no dual is among them)."""
    return tuple(f.name for f in fields(msg))
