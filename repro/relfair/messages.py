"""What crosses the wire in one round, one type per arrow of the protocols
(docs/decisions.md#relfair-algorithm, docs/decisions.md#relfair-setting).

A method's ``step()`` returns them as its round's ``RoundMessages`` (``repro.core.algorithm``:
``downlink`` server -> clients, ``uplink`` clients -> server, in the order sent), and they are
the channel: the clients compute from the broadcast, the server from the reports.
Client-to-server messages carry one row per client (leading axis n): row i is client i's
message; they hold model-sized tensors and scalars only, never data or labels. The dual
variable lambda never leaves the server in Scaff-PD-IA/Scaff-PD/Scaffold/SAFL (Alg. 1 sends
only theta and c^r); in DRFA the server uses it only to weight the models it averages.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from repro.relfair.models import Params

__all__ = [
    "ControlBroadcast",
    "DeltaReport",
    "GradientLossReport",
    "LossControlReport",
    "LossReport",
    "ModelBroadcast",
    "ModelReport",
    "SERVER_TO_CLIENT",
]


@dataclass(frozen=True)
class ModelBroadcast:
    """Server -> every client: the global model theta^r (all methods; DRFA's averaged snapshot
    too); DRFA's first broadcast also carries the snapshot step t' ~ U{0..tau-1} it drew.
    """

    theta: Params
    snapshot_at: int | None = None


@dataclass(frozen=True)
class LossControlReport:
    """Client i -> server, Alg. 1 line 5-7: (L_i^r, c_i^r). ``losses`` is None for Scaffold,
    whose singleton ambiguity set makes the dual step ignore them
    (docs/decisions.md#relfair-scaffold).
    """

    losses: np.ndarray | None
    controls: Params


@dataclass(frozen=True)
class ControlBroadcast:
    """Server -> every client, Alg. 1 line 10: c^r = sum_i lambda_i^{r+1} c_i^r."""

    control: Params


@dataclass(frozen=True)
class DeltaReport:
    """Client i -> server, Alg. 2 output: Delta u_i = (theta - u_{i,J}) / (eta J)."""

    deltas: Params


@dataclass(frozen=True)
class ModelReport:
    """Client i -> server: final local model (FedAvg, DRFA) and DRFA's snapshot model."""

    models: Params
    snapshots: Params | None = None


@dataclass(frozen=True)
class GradientLossReport:
    """Client i -> server (SAFL): minibatch gradient and loss at theta^r (same minibatch)."""

    gradients: Params
    losses: np.ndarray


@dataclass(frozen=True)
class LossReport:
    """Client i -> server (DRFA): minibatch loss at the averaged snapshot model."""

    losses: np.ndarray


SERVER_TO_CLIENT = (ModelBroadcast, ControlBroadcast)
