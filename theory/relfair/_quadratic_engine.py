"""A client engine whose clients hold strongly convex quadratics, so that the package's own
Scaff-PD-IA (``repro.relfair.scaff_pd_ia.ScaffPDIA``: its dual step, control variates, the
local steps of ``ClientEngine`` on either backend, the per-client epoch schedule, and the
aggregation) runs on an instance with a known saddle point.

Only the per-client oracle is replaced, on both backends: ``gradients`` (the loop backend's
per-client gradients), ``_stacked_gradients`` (the vectorized backend's), ``_sgd_step`` (the
vectorized backend's fused local step, which the per-step and the scheduled per-epoch local
steps call on prefixes of the clients in their own order: here ``u <- u - lr_correction -
lr g`` with the quadratic's gradient, the step the package's fused kernel computes for the
MLP), ``gradients_at`` (the gradient at the broadcast model, which the vectorized backend
computes without stacking copies of it) and ``evaluate``. The client of a minibatch row is
read from the row index (the data's offsets), so the scheduled path's reordered prefixes get
their own client's quadratic. Gradients are exact (the minibatch only names the client:
delta_g = 0, Theorem 3's deterministic case).

The model is the package's MLP parameter tuple with d_in = 2, one hidden unit and one class,
``(W1 (2, 1), b1 (1,), W2 (1, 1), b2 (1,))``, read as one vector of R^5 (the MLP is never
evaluated). Clients own ``sizes[i]`` training rows each, so the ``epochs`` reading gives them
different local step counts ``J ceil(N_i / B)``. The engine records the largest norm of any
point it was asked about (local iterates included), for Assumption 6's ball.
"""

from __future__ import annotations

import numpy as np
import torch

from repro.relfair.client_batch import ClientEngine
from repro.relfair.clients import ClientData
from repro.relfair.federated import ClientProblem, TrainSetup

D_IN, HIDDEN, CLASSES = 2, 1, 1
DIM = D_IN * HIDDEN + HIDDEN + HIDDEN * CLASSES + CLASSES  # 5
SHAPES = ((D_IN, HIDDEN), (HIDDEN,), (HIDDEN, CLASSES), (CLASSES,))

_SLICES = []
_i = 0
for _shape in SHAPES:
    _k = int(np.prod(_shape))
    _SLICES.append((slice(_i, _i + _k), _shape))
    _i += _k


def to_params(x: np.ndarray) -> tuple[torch.Tensor, ...]:
    """R^5 (or (n, 5)) -> the parameter tuple (stacked when 2-D), float32."""
    t = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
    lead = t.shape[:-1]
    return tuple(t[..., sl].reshape(*lead, *shape).clone() for sl, shape in _SLICES)


def to_vector(params) -> np.ndarray:
    """The parameter tuple (stacked or not) -> float64 array (..., 5)."""
    lead = params[0].shape[:-2]
    return torch.cat([p.detach().reshape(*lead, -1) for p in params],
                     dim=-1).numpy().astype(np.float64)


def dummy_data(sizes) -> ClientData:
    """Clients of ``sizes[i]`` training rows each (never read: the quadratics are the losses)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    offs = np.concatenate([[0], np.cumsum(sizes)])
    rows = int(offs[-1])
    return ClientData(X_train=torch.zeros(rows, D_IN), y_train=torch.zeros(rows, dtype=torch.int64),
                      train_offsets=offs, X_val=torch.zeros(rows, D_IN),
                      y_val=torch.zeros(rows, dtype=torch.int64), val_offsets=offs,
                      classes=CLASSES)


class QuadraticEngine(ClientEngine):
    """``ClientEngine`` on ``backend`` with quadratic clients ``(Q, c, e)``."""

    def __init__(self, Q: np.ndarray, c: np.ndarray, e: np.ndarray, sizes, backend: str) -> None:
        n, d = c.shape
        if d != DIM:
            raise ValueError(f"QuadraticEngine needs d = {DIM}, got {d}")
        super().__init__(dummy_data(sizes), backend=backend)
        self.Q, self.c, self.e = Q, c, e
        self.max_norm = 0.0

    def _client(self, idx: torch.Tensor) -> np.ndarray:
        rows = idx.reshape(idx.shape[0], -1)[:, 0].numpy()
        return np.searchsorted(self.data.train_offsets, rows, side="right") - 1

    def _oracle(self, params, idx) -> tuple[torch.Tensor, tuple]:
        U = to_vector(params)                                          # (k, 5)
        self.max_norm = max(self.max_norm, float(np.linalg.norm(U, axis=1).max()))
        who = self._client(idx)
        diff = U - self.c[who]
        g = np.einsum("nij,nj->ni", self.Q[who], diff)
        losses = 0.5 * np.einsum("ni,ni->n", diff, g) + self.e[who]
        return torch.as_tensor(losses, dtype=torch.float32), to_params(g)

    def gradients(self, params, idx, mask):
        return self._oracle(params, idx)

    def _stacked_gradients(self, params, idx, mask, buffers, losses: bool = True):
        out_losses, grads = self._oracle(params, idx)
        return (out_losses if losses else None), grads

    def _sgd_step(self, u, idx, mask, buffers, lr, lr_corr, term=None, rows=None) -> None:
        if term is not None:   # a method's local term at u, joining the correction
            extra = tuple(lr * t for t in term(u, rows))
            lr_corr = extra if lr_corr is None else tuple(
                c + e for c, e in zip(lr_corr, extra, strict=True))
        _, g = self._oracle(u, idx)
        for ui, gi, ci in zip(u, g, lr_corr or (None,) * len(u), strict=True):
            if ci is not None:
                ui.sub_(ci)
            ui.sub_(gi, alpha=lr)

    def gradients_at(self, theta, draws, step):
        n = self.data.n
        return self._oracle(tuple(p.unsqueeze(0).expand(n, *p.shape) for p in theta),
                            draws.idx[step])

    def evaluate(self, theta, split: str = "val"):
        x = to_vector(theta)
        self.max_norm = max(self.max_norm, float(np.linalg.norm(x)))
        diff = x[None, :] - self.c
        losses = 0.5 * np.einsum("ni,nij,nj->n", diff, self.Q, diff) + self.e
        return losses, np.zeros(self.c.shape[0])


class QuadraticProblem(ClientProblem):
    """The ``ClientProblem`` of the quadratic clients: ``engine(backend)`` is one
    :class:`QuadraticEngine` on the backend the algorithm asks for, kept as
    ``quadratic_engine`` so the check reads its ``max_norm``.
    """

    def __init__(self, Q, c, e, sizes, batch: int) -> None:
        super().__init__(dummy_data(sizes), TrainSetup(batch=batch, hidden=HIDDEN, dropout=0.0))
        object.__setattr__(self, "_quad", (Q, c, e, np.asarray(sizes)))
        object.__setattr__(self, "quadratic_engine", None)

    def engine(self, backend: str) -> QuadraticEngine:
        eng = QuadraticEngine(*self._quad, backend=backend)
        object.__setattr__(self, "quadratic_engine", eng)
        return eng
