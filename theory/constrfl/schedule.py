"""Paper 003's schedules and the stop test's floor, written from the paper (never read from
``repro/``): the package's own values are held against these by the checks and by
``tests/theory/test_constrfl_planted.py``.

* Algorithm 1, line 2: ``tau_k = s_bar / (k+1)^2`` (k = 0, 1, ...), so
  ``sum_{j>=0} tau_j = (pi^2/6) s_bar <= 2 s_bar`` (used in (43)-(47)).
* Algorithm 2, line 3: ``eps_{t+1} = q^t``.
* Stop test (11) ``||w^{k+1} - w^k||_inf + beta tau_k <= beta eps1`` needs ``tau_k <= eps1``;
  the first outer count ``K = k+1`` with ``s_bar / K^2 <= eps1`` is
  ``K_floor = ceil(sqrt(s_bar/eps1))``, computed here in exact rational arithmetic (the printed
  ``floor(sqrt(s_bar/eps)) + 1`` is one too high when ``sqrt(s_bar/eps)`` is an integer).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

__all__ = ["admm_tolerance", "outer_floor", "stop_test_11", "tau"]


def tau(s_bar: float, k: int) -> float:
    """Algorithm 1, line 2: ``tau_k = s_bar / (k+1)^2``."""
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    return s_bar / float((k + 1) * (k + 1))


def admm_tolerance(q: float, t: int) -> float:
    """Algorithm 2, line 3: ``eps_{t+1} = q^t``."""
    return q ** t


def outer_floor(s_bar: float, eps1: float) -> int:
    """Smallest ``K >= 1`` with ``s_bar / K^2 <= eps1`` (exact, on the floats' rational values)."""
    s, e = Fraction(s_bar), Fraction(eps1)
    K = max(1, math.isqrt(int(s / e)))
    while Fraction(s) > e * K * K:
        K += 1
    while K > 1 and s <= e * (K - 1) * (K - 1):
        K -= 1
    return K


def stop_test_11(w_new, w_old, mu_new, mu_old, beta: float, tau_k: float, eps1: float,
                 eps2: float) -> bool:
    """(11): ``||w^{k+1} - w^k||_inf + beta tau_k <= beta eps1`` and
    ``max_i ||mu_i^{k+1} - mu_i^k||_inf <= beta eps2`` (mu stacked over all parties).
    """
    dw = float(np.max(np.abs(np.asarray(w_new) - np.asarray(w_old))))
    dmu = float(np.max(np.abs(np.asarray(mu_new) - np.asarray(mu_old)), initial=0.0))
    return bool(dw + beta * tau_k <= beta * eps1 and dmu <= beta * eps2)
