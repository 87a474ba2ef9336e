"""The messages of Algorithms 1-2 (Sec. 3-4): one type per arrow of the protocol.

Server -> clients: ``Broadcast`` (w^{t+1}, d floats; Alg. 2 line 6). Client -> server:
``InitialUpload`` (u~_i^0 once per Algorithm-2 call, Sec. 4.3), ``ClientUpload``
(u~_i^{t+1} and the scalar epst_i; Alg. 2 line 9) and ``DualChange`` (the scalar
||mu_i^{k+1} - mu_i^k||_inf; Alg. 1 line 8). Multipliers, data, f_i and c_i values never leave
a client.

One outer iteration k of Algorithm 1 (round k + 1 of :mod:`repro.core.algorithm`) is
:class:`OuterRoundMessages`: all of Algorithm 2's messages for subproblem (12) and the
``DualChange``s. cProx-AL (Algorithm 3) is centralised: its rounds exchange nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from repro.core.algorithm import RoundMessages

__all__ = ["Broadcast", "ClientUpload", "DualChange", "InitialUpload", "OuterRoundMessages"]


@dataclass(frozen=True)
class Broadcast:
    w: np.ndarray

    def floats(self) -> int:
        return int(self.w.size)


@dataclass(frozen=True)
class InitialUpload:
    client: int
    u_tilde: np.ndarray

    def floats(self) -> int:
        return int(self.u_tilde.size)


@dataclass(frozen=True)
class ClientUpload:
    client: int
    u_tilde: np.ndarray
    epst: float

    def floats(self) -> int:
        return int(self.u_tilde.size) + 1


@dataclass(frozen=True)
class DualChange:
    client: int
    value: float

    def floats(self) -> int:
        return 1


@dataclass(frozen=True)
class OuterRoundMessages(RoundMessages):
    """Outer iteration k of Algorithm 1 (``round`` = k + 1).

    ``downlink``: one ``Broadcast`` of w^{t+1} per round t of the Algorithm-2 call (each sent to
    every client; the last one is w^{k+1}, which serves Algorithm 1 line 6). ``uplink``, in the
    order sent: the ``InitialUpload`` of every ADMM party (line 1 of Algorithm 2), the
    ``ClientUpload`` of every party per round t, then one ``DualChange`` per client (Algorithm 1
    line 8). With the reference LCQP script's D13 the server slot is one more ADMM party (index
    n) in the first two kinds.
    """

    @property
    def broadcasts(self) -> tuple[Broadcast, ...]:
        return tuple(m for m in self.downlink if isinstance(m, Broadcast))

    @property
    def initial_uploads(self) -> tuple[InitialUpload, ...]:
        return tuple(m for m in self.uplink if isinstance(m, InitialUpload))

    @property
    def client_uploads(self) -> tuple[ClientUpload, ...]:
        return tuple(m for m in self.uplink if isinstance(m, ClientUpload))

    @property
    def dual_changes(self) -> tuple[DualChange, ...]:
        return tuple(m for m in self.uplink if isinstance(m, DualChange))

    @property
    def admm_rounds(self) -> int:
        """Rounds of the Algorithm-2 call (one broadcast each)."""
        return len(self.downlink)

    def floats_up(self) -> int:
        """Floats the clients sent (what ``ProxALState.floats_up`` adds for this round)."""
        return sum(m.floats() for m in self.uplink)
