"""The typed messages of paper 004's protocol (Algorithms 2 and 3): what the server broadcasts
and what each client uploads in a round. Nothing else crosses the wire.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import torch

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
class RoundMessages:
    """Everything that crossed the wire in one round: the broadcast and the N uploads."""

    broadcast: Broadcast
    uploads: tuple[Upload, ...]


def message_fields(msg: object) -> tuple[str, ...]:
    """The field names of a message (what it carries; the tests check no dual is among them)."""
    return tuple(f.name for f in fields(msg))
