"""Small instances for the tests, theory checks and benchmarks
(docs/decisions.md#fairvfl-theory-instances).

``synthetic_instance``: ``X ~ N(0, I)``, ``s_i ~ Bernoulli(p_a)`` (True = group a),
``y_i = sign(X_i^T w* + 1.0 * 1[s_i = a] + noise * xi_i)`` (``noise = 0.3`` in
docs/decisions.md#fairvfl-theory-instances) with 0 mapped to +1, and the columns split into ``K``
contiguous party blocks. ``linear_blocks``: one linear model block per party over its own columns.
"""

from __future__ import annotations

import numpy as np

from repro.core.partition import vertical_split
from repro.fairvfl.models import LinearBlock


def synthetic_instance(rng: np.random.Generator, n: int = 300, m: int = 9, K: int = 3,
                       p_a: float = 0.4, noise: float = 0.3):
    """``(X, y, s, blocks)``: features, labels in {-1, +1}, groups and the party columns."""
    X = rng.standard_normal((n, m))
    s = rng.random(n) < p_a
    w = rng.standard_normal(m)
    score = X @ w + 1.0 * s + noise * rng.standard_normal(n)
    y = np.where(score >= 0, 1.0, -1.0)
    blocks = vertical_split(m, K)
    return X, y, s, blocks


def linear_blocks(X, blocks, block_cls=LinearBlock) -> list:
    """One ``block_cls`` (default :class:`LinearBlock`) per party over its columns ``X[:, b]``."""
    return [block_cls(X[:, b]) for b in blocks]
