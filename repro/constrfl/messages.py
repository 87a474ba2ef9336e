"""The messages of Algorithms 1-2 (Sec. 3-4): one type per arrow of the protocol.

Server -> clients: ``Broadcast`` (w^{t+1}, d floats; Alg. 2 line 6). Client -> server:
``InitialUpload`` (u~_i^0 once per Algorithm-2 call, Sec. 4.3), ``ClientUpload``
(u~_i^{t+1} and the scalar epst_i; Alg. 2 line 9) and ``DualChange`` (the scalar
||mu_i^{k+1} - mu_i^k||_inf; Alg. 1 line 8). Multipliers, data, f_i and c_i values never leave
a client.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Broadcast", "ClientUpload", "DualChange", "InitialUpload"]


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
