"""A client engine whose clients hold strongly convex quadratics (``repro.relfair.instances.
Quadratics``), so that the package's own Scaff-PD-IA (``repro.relfair.scaff_pd_ia.ScaffPDIA``,
its dual step, control variates, local steps of ``ClientEngine.local_sgd`` and aggregation)
runs on an instance with a known saddle point.

Only the per-client oracle is replaced: ``gradients`` (exact gradients, the minibatch indices
and masks are ignored: delta_g = 0, Theorem 3's deterministic case) and ``evaluate`` (the
losses). The model is the package's MLP parameter tuple with d_in = 2, one hidden unit and one
class, ``(W1 (2, 1), b1 (1,), W2 (1, 1), b2 (1,))``, read as one vector of R^5 (the MLP is
never evaluated). The engine also records the largest norm of any point it was asked about
(local iterates included), for Assumption 6's ball. :class:`QuadraticProblem` is the
``ClientProblem`` the algorithm is built on: its ``engine()`` is this engine.
"""

from __future__ import annotations

import numpy as np
import torch

from repro.relfair.client_batch import ClientEngine
from repro.relfair.clients import ClientData
from repro.relfair.federated import ClientProblem, TrainSetup
from repro.relfair.instances import Quadratics

D_IN, HIDDEN, CLASSES = 2, 1, 1
DIM = D_IN * HIDDEN + HIDDEN + HIDDEN * CLASSES + CLASSES  # 5
SETUP = TrainSetup(batch=1, hidden=HIDDEN, dropout=0.0)
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
    return tuple(t[..., sl].reshape(*lead, *shape) for sl, shape in _SLICES)


def to_vector(params) -> np.ndarray:
    """The parameter tuple (stacked or not) -> float64 array (..., 5)."""
    lead = params[0].shape[:-2]
    return torch.cat([p.detach().reshape(*lead, -1) for p in params],
                     dim=-1).numpy().astype(np.float64)


def dummy_data(n: int) -> ClientData:
    """N clients of two rows each (the rows are never read: the quadratics are the losses)."""
    offs = np.arange(0, 2 * n + 1, 2)
    return ClientData(X_train=torch.zeros(2 * n, D_IN), y_train=torch.zeros(2 * n,
                                                                            dtype=torch.int64),
                      train_offsets=offs, X_val=torch.zeros(2 * n, D_IN),
                      y_val=torch.zeros(2 * n, dtype=torch.int64), val_offsets=offs,
                      classes=CLASSES)


class QuadraticEngine(ClientEngine):
    """``ClientEngine`` (loop backend: its own local-SGD loop) with quadratic clients."""

    def __init__(self, prob: Quadratics) -> None:
        n, d = prob.c.shape
        if d != DIM:
            raise ValueError(f"QuadraticEngine needs d = {DIM}, got {d}")
        super().__init__(dummy_data(n), backend="loop")
        self.prob = prob
        self.max_norm = 0.0

    def gradients(self, params, idx, mask):
        U = to_vector(params)                                        # (n, 5)
        self.max_norm = max(self.max_norm, float(np.linalg.norm(U, axis=1).max()))
        diff = U - self.prob.c
        g = np.einsum("nij,nj->ni", self.prob.Q, diff)
        losses = 0.5 * np.einsum("ni,ni->n", diff, g) + self.prob.e
        return torch.as_tensor(losses, dtype=torch.float32), to_params(g)

    def evaluate(self, theta, split: str = "val"):
        x = to_vector(theta)
        self.max_norm = max(self.max_norm, float(np.linalg.norm(x)))
        return self.prob.losses(x), np.zeros(self.prob.c.shape[0])


class QuadraticProblem(ClientProblem):
    """The ``ClientProblem`` of the quadratic clients: ``engine(backend)`` is one
    :class:`QuadraticEngine` (the loop backend whatever is asked: the quadratics replace the
    per-client oracle), kept as ``quadratic_engine`` so the check reads its ``max_norm``.
    """

    def __init__(self, prob: Quadratics) -> None:
        engine = QuadraticEngine(prob)
        super().__init__(engine.data, SETUP)
        object.__setattr__(self, "quadratic_engine", engine)

    def engine(self, backend: str) -> QuadraticEngine:
        return self.quadratic_engine
