"""Small random instances for tests and theory checks (spec ``fairvfl.md`` §10.1).

``X ~ N(0, I)``, ``s_i ~ Bernoulli(p_a)`` (True = group a),
``y_i = sign(X_i^T w* + 1.0 * 1[s_i = a] + noise * xi_i)``
(``noise = 0.3`` in §10.1) with 0 mapped to +1.
"""

from __future__ import annotations

import numpy as np

from repro.core.partition import vertical_split


def synthetic_instance(rng: np.random.Generator, n: int = 300, m: int = 9, K: int = 3,
                       p_a: float = 0.4, noise: float = 0.3):
    X = rng.standard_normal((n, m))
    s = rng.random(n) < p_a
    w = rng.standard_normal(m)
    score = X @ w + 1.0 * s + noise * rng.standard_normal(n)
    y = np.where(score >= 0, 1.0, -1.0)
    blocks = vertical_split(m, K)
    return X, y, s, blocks
