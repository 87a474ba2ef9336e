"""One message type per arrow of one Fair VFL round (docs/decisions.md#fairvfl-roles).

| step | direction                          | type              | content          |
|------|------------------------------------|-------------------|------------------|
| 1    | server -> active party             | ActiveBroadcast   | z^(t), lam^(t)   |
| 1    | server -> passive party ([J] only) | PassiveBroadcast  | nu^(t), [J](12)  |
| 3    | party -> server                    | Upload            | u_k^(t+1)        |

A passive party's inbox holds ``PassiveBroadcast`` only: no labels, groups, lam, z or loss.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ActiveBroadcast:
    """Server -> active party: the round-start scores and dual variable ([C] Alg. 2 line 4,
    [J] Alg. 1).
    """

    z: np.ndarray
    lam: np.ndarray


@dataclass(frozen=True)
class PassiveBroadcast:
    """Server -> passive party: the masked derivative ``nu = w(lam) * dl/dz``, [J](12)."""

    nu: np.ndarray


@dataclass(frozen=True)
class Upload:
    """Party -> server: the party's contribution ``u_k = g_k(theta_k; X^k)`` to the scores."""

    party: int
    u: np.ndarray
