"""One round of Fair VFL written here from the papers, and the audit that holds each round the
package took against it (no check).

With scores ``z = sum_k g_k(theta_k; X^k)``, the [J](12) weights ``w_i(lam) = 1/n + (lam1 -
lam2)/|N^a|`` on N^a, ``1/n - (lam1 - lam2)/|N^b|`` on N^b, ``1/n`` elsewhere, the loss
derivative ``o_i = -y_i sigmoid(-y_i z_i)`` and the masked message ``nu = w(lam) o(z)``:

- an active party ([C] Alg. 1, [J] Alg. 2) takes Q_k^(t) local steps [C](10)-(11) / [J](14)
  ``theta <- theta - (1/eta_t) (J_k(theta)' nu + mu theta)`` on the stale read ``z~ = z^t -
  g_k(theta_k^t) + g_k(theta)`` (its own block fresh, the others as of the round start);
- a passive party ([J] Alg. 3) takes one step along ``nu(z^t, lam^t)``;
- the server sums the parties' new contributions into z^{t+1} and takes the projected dual step
  [C](9) / [J](10) ``lam <- [lam + beta ((D - eps, -D - eps) - c_t lam)]_+`` with
  ``D = mean_{N^a} log(1 + e^{-z}) - mean_{N^b} log(1 + e^{-z})`` (Definition 1).

The party models: linear, ``g_k = X^k theta_k``; the two-hidden-layer ReLU network of the MLP
cells (the experiments' architecture, written here with torch autograd in float64). Q_k^(t) is
read from the round's messages (one upload per local step): what the package did.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import torch
from scipy.special import expit

from theory.fairvfl.constants import groups_masks

__all__ = ["Party", "Setup", "audit_round", "d_value", "masked_weights", "reference_round",
           "softplus"]


def softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


def masked_weights(y, s, lam) -> np.ndarray:
    """[J](12): ``w_i(lam)``."""
    in_a, in_b = groups_masks(y, s)
    n = len(y)
    return 1.0 / n + float(lam[0] - lam[1]) * (in_a / in_a.sum() - in_b / in_b.sum())


def d_value(y, s, z) -> float:
    """Definition 1: D on the positives of each group."""
    in_a, in_b = groups_masks(y, s)
    return float(softplus(-z[in_a]).mean() - softplus(-z[in_b]).mean())


@dataclass
class Party:
    """A party's model: ``X`` (dense float64 rows) and ``kind`` ``"linear"`` or ``"mlp"`` (with
    ``widths``).
    """

    X: np.ndarray
    kind: str = "linear"
    widths: tuple[int, int] = (32, 32)

    def _shapes(self):
        m, (a, b) = self.X.shape[1], self.widths
        return [(a, m), (a,), (b, a), (b,), (1, b), (1,)]

    def _net(self, theta: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
        shapes = self._shapes()
        parts = torch.split(theta, [int(np.prod(s)) for s in shapes])
        W = [p.reshape(s) for p, s in zip(parts, shapes, strict=True)]
        h = torch.relu(X @ W[0].T + W[1])
        h = torch.relu(h @ W[2].T + W[3])
        return (h @ W[4].T + W[5])[:, 0]

    def forward(self, theta: np.ndarray) -> np.ndarray:
        if self.kind == "linear":
            return self.X @ theta
        with torch.no_grad():
            return self._net(torch.from_numpy(theta), torch.from_numpy(self.X)).numpy()

    def vjp(self, theta: np.ndarray, nu: np.ndarray) -> np.ndarray:
        if self.kind == "linear":
            return self.X.T @ nu
        th = torch.from_numpy(theta.copy()).requires_grad_(True)
        out = self._net(th, torch.from_numpy(self.X))
        (g,) = torch.autograd.grad(out, th, grad_outputs=torch.from_numpy(nu))
        return g.numpy()


@dataclass
class Setup:
    """What the round needs besides the iterates: parties, labels, groups and constants."""

    parties: list[Party]
    y: np.ndarray
    s: np.ndarray
    mu: float
    eps: float
    beta: float
    roles: str = "conf"

    @classmethod
    def from_blocks(cls, X, blocks, y, s, mu, eps, beta, roles="conf", kind="linear",
                    widths=(32, 32)):
        Xd = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
        return cls([Party(Xd[:, b], kind, widths) for b in blocks], np.asarray(y, float),
                   np.asarray(s, bool), mu, eps, beta, roles)


def reference_round(st: Setup, thetas: list[np.ndarray], lam: np.ndarray, q: list[int],
                    step: float, c_t: float) -> dict:
    """The round written here from ``(theta_k^t, lam^t)`` with Q_k^(t) = ``q[k]``: ``thetas``,
    ``lam`` (after the dual step), ``z``, ``D`` (of theta^{t+1}), ``increments`` (sum over
    parties and local steps of the squared step), ``kappa`` (sum of Q_k).
    """
    y, s, mu = st.y, st.s, st.mu
    u0 = [p.forward(th) for p, th in zip(st.parties, thetas, strict=True)]
    z = np.sum(u0, axis=0)
    w = masked_weights(y, s, lam)
    new, inc = [], 0.0
    for k, (p, th) in enumerate(zip(st.parties, thetas, strict=True)):
        th = np.array(th, dtype=float)
        active = st.roles == "conf" or k == 0
        steps = q[k] if active else 1
        u = u0[k]
        for j in range(steps):
            z_tilde = z if j == 0 or not active else z - u0[k] + u
            nu = w * (-y * expit(-y * z_tilde))
            nxt = th - step * (p.vjp(th, nu) + mu * th)
            inc += float(np.sum((nxt - th) ** 2))
            th = nxt
            u = p.forward(th)
        new.append(th)
    z1 = np.sum([p.forward(th) for p, th in zip(st.parties, new, strict=True)], axis=0)
    D = d_value(y, s, z1)
    lam_new = np.maximum(0.0, lam + st.beta * (np.array([D - st.eps, -D - st.eps])
                                               - c_t * np.asarray(lam, float)))
    return {"thetas": new, "lam": lam_new, "z": z1, "D": D, "increments": inc,
            "kappa": int(sum(q[k] if (st.roles == "conf" or k == 0) else 1
                             for k in range(len(q))))}


def uploads_per_party(messages, parties: int) -> list[int]:
    """Q_k^(t) from the round's uplink: one upload per local step of each party."""
    counts = [0] * parties
    for up in messages.uplink:
        counts[up.party] += 1
    return counts


def audit_round(alg, st: Setup, step: float, c_t: float, ev, key: str, tol: float,
                q_max: int | None = None) -> dict:
    """One package round (``alg.step()``) held against :func:`reference_round` from the state
    it started from: ``hypothesis: the Fair VFL round ..., <key>`` (largest relative
    difference of theta^{t+1} and lam^{t+1}). Returns the reference round with ``lam_before``,
    ``thetas_before`` and the measured ``q``.
    """
    thetas = [np.array(t, dtype=float) for t in alg.thetas()]
    lam = np.array(alg.server.lam, dtype=float)
    msgs = alg.step()
    q = uploads_per_party(msgs, len(thetas))
    if q_max is not None:  # Assumption 1: every active party takes 1 <= Q_k^(t) <= Q steps
        ev.criterion(f"hypothesis: 1 <= Q_k^(t) <= Q, {key}",
                     1.0 if all(1 <= k <= q_max for k in q) else -1.0)
    ref = reference_round(st, thetas, lam, q, step, c_t)
    got = [np.array(t, dtype=float) for t in alg.thetas()]
    err = max(float(np.abs(g - r).max()) / (1.0 + float(np.abs(r).max()))
              for g, r in zip(got, ref["thetas"], strict=True))
    err = max(err, float(np.abs(np.asarray(alg.server.lam) - ref["lam"]).max())
              / (1.0 + float(np.abs(ref["lam"]).max())))
    ev.criterion(f"hypothesis: the Fair VFL round [C](9)-(11) = [J](10)-(14) with this round's "
                 f"eta_t, c_t, {key}", 1 - err / tol)
    return {**ref, "lam_before": lam, "thetas_before": thetas, "q": q, "error": err,
            "thetas_after": got, "msgs": msgs}
