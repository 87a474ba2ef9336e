"""The three roles of Fair VFL as separate objects (docs/decisions.md#fairvfl-roles,
docs/decisions.md#fairvfl-one-run).

- ``Server`` ([C] Alg. 2, [J] Alg. 1): holds ``y, s, eps, beta, c_t`` and ``lam``; sums the
  uploads into ``z``, broadcasts, takes the projected dual step [C](9) / [J](10).
- ``ActiveParty`` ([C] Alg. 1, [J] Alg. 2): holds ``X^k`` and the labels/groups; takes
  ``Q_k^(t)`` local steps [C](11) / [J](14) on the stale read
  ``z~ = z^(t) - u_k^(t) + g_k(th)`` (own block fresh, others as of the round start) and
  uploads ``g_k(th)`` after every step ([C] Alg. 1 line 7, [J] Alg. 2 line 8).
- ``PassiveParty`` ([J] Alg. 3): holds ``X^k`` only; one step along ``nu`` per round.

Each party keeps the last ``INBOX_SIZE`` messages it received in ``inbox`` so tests can inspect
payloads (bounded: a full history would hold T x n floats per party).
"""

from __future__ import annotations

from collections import deque

import numpy as np

from repro.core.projections import nonneg_projection
from repro.fairvfl.messages import ActiveBroadcast, PassiveBroadcast, Upload
from repro.fairvfl.problem import FairnessGroups, dual_gradient

INBOX_SIZE = 64


class _Party:
    def __init__(self, index: int, block, theta0, mu: float, *, loop: bool = False) -> None:
        self.index = index
        self.block = block
        self.loop = loop  # the gradient's VJP by block.vjp_loop (the equality oracle)
        self.theta = theta0
        self.mu = mu
        self.u = block.forward(theta0)
        self.inbox: deque = deque(maxlen=INBOX_SIZE)
        self.last_increments_sq = 0.0  # sum_q ||theta_k^(t,q+1) - theta_k^(t,q)||^2
        self.last_steps = 0

    def upload(self) -> Upload:
        return Upload(self.index, self.u.copy())

    def test_contribution(self, X_test) -> np.ndarray:
        """Evaluation-time upload ``g_k(theta_k; X_test^k)`` (docs/decisions.md#fairvfl-roles, last
        bullet).
        """
        return self.block.forward(self.theta, X_test)

    def _gradient_step(self, th, nu: np.ndarray, step: float):
        """``th - (1/eta) (VJP_k(th; nu) + mu th)``: [C](10)-(11) / [J](11), (14)."""
        vjp = self.block.vjp_loop if self.loop else self.block.vjp
        return th - step * (vjp(th, nu) + self.mu * th)


class ActiveParty(_Party):
    """Holds ``(X^k, y, s)`` and the loss; may take several local steps per round."""

    def __init__(self, index: int, block, theta0, mu: float, groups: FairnessGroups, *,
                 loop: bool = False) -> None:
        super().__init__(index, block, theta0, mu, loop=loop)
        self.groups = groups

    def local_update(self, message: ActiveBroadcast, n_steps: int,
                     step: float) -> list[Upload]:
        """``n_steps`` local steps; after each one the party sends ``u_k = g_k(theta_k; X^k)``
        to the server, as [C] Alg. 1 line 7 and [J] Alg. 2 line 8 print it (the send sits
        inside the ``while`` loop). Returns the uploads in order; the server's ``z^(t+1)``
        uses the last one, so the iterates are those of a single upload per round.
        """
        if not isinstance(message, ActiveBroadcast):
            raise TypeError(f"an active party receives ActiveBroadcast, got {type(message)}")
        if n_steps < 1:
            raise ValueError(f"an active party takes at least one local step per round "
                             f"(Assumption 1), got n_steps={n_steps}")
        self.inbox.append(message)
        th, inc, u_start, u = self.theta, 0.0, self.u, self.u
        uploads = []
        for q in range(n_steps):
            # Stale read: the other blocks stay at their round-start contribution.
            z_tilde = message.z if q == 0 else message.z - u_start + u
            nu = self.groups.masked_message(z_tilde, message.lam)
            new = self._gradient_step(th, nu, step)
            inc += self.block.sq_norm(new - th)
            th = new
            u = self.block.forward(th)
            uploads.append(Upload(self.index, u))
        self.theta, self.last_increments_sq, self.last_steps = th, inc, n_steps
        self.u = u
        return uploads


class PassiveParty(_Party):
    """Holds ``X^k`` only ([J] §3.2): exactly one step per round along the masked ``nu``."""

    def local_update(self, message: PassiveBroadcast, step: float) -> Upload:
        if not isinstance(message, PassiveBroadcast):
            raise TypeError(f"a passive party receives PassiveBroadcast only, got "
                            f"{type(message)}")
        self.inbox.append(message)
        new = self._gradient_step(self.theta, message.nu, step)
        self.last_increments_sq, self.last_steps = self.block.sq_norm(new - self.theta), 1
        self.theta = new
        self.u = self.block.forward(new)
        return self.upload()


class Server:
    """Holds labels, groups, ``eps, beta`` and ``lam``; never sees a party's ``theta_k``."""

    def __init__(self, groups: FairnessGroups, eps: float, beta: float, fair: bool) -> None:
        self.groups = groups
        self.eps = eps
        self.beta = beta
        self.fair = fair
        self.lam = np.zeros(2)
        self.z = np.zeros(groups.n)
        self._z_sent = None  # the copy of z broadcast to the active parties this round
        self.inbox: deque = deque(maxlen=INBOX_SIZE)

    def receive(self, uploads: list[Upload]) -> None:
        """``z = sum_k u_k`` over the latest upload of every party (an active party may send
        several per round, [C] Alg. 1 line 7 / [J] Alg. 2 line 8), summed in party order.
        """
        self.inbox.extend(uploads)
        latest = {up.party: up for up in uploads}
        z = np.zeros(self.groups.n)
        for k in sorted(latest):
            z = z + latest[k].u
        self.z = z
        self._z_sent = None

    def broadcast_active(self) -> ActiveBroadcast:
        self._z_sent = self.z.copy()
        return ActiveBroadcast(self._z_sent, self.lam.copy())

    def broadcast_passive(self) -> PassiveBroadcast:
        """``nu(z, lam)``, on the very array sent to the active parties when there is one this
        round (the same values as ``z``): ``FairnessGroups.masked_message`` keeps the last
        result by the array's identity, so the active party's first step reuses this ``nu``
        instead of computing it again ([J] rounds: one ``nu`` per round, not two).
        """
        z = self.z if self._z_sent is None else self._z_sent
        return PassiveBroadcast(self.groups.masked_message(z, self.lam))

    def dual_step(self, c_t: float) -> float:
        """``lam <- [lam + beta grad_lam f~_t(theta^(t+1), lam)]_+`` ([C](9), [J](10)); returns
        D(theta^(t+1)). FedBCD (``fair=False``) keeps ``lam = 0``.
        """
        d = self.groups.deo_signed(self.z)
        if self.fair:
            self.lam = nonneg_projection(self.lam + self.beta
                                         * dual_gradient(d, self.lam, self.eps, c_t))
        return d
