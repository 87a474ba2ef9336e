"""Inequality of a distribution of client losses (paper 002): the CVaR-type means over capped
simplices ``top_cvar`` / ``bottom_cvar`` (F_A, F_B), their ratio ``relative_fairness_ratio``
R_{A,B} (docs/decisions.md#relfair-index), ``gini`` and ``lorenz_curve``
(docs/decisions.md#relfair-metrics). Re-exported by :mod:`repro.core.metrics`.
"""

from __future__ import annotations

import math

import numpy as np

from repro.core.validation import nonempty_vector as _vector

__all__ = ["bottom_cvar", "capped_simplex_vertex", "gini", "lorenz_curve",
           "relative_fairness_ratio", "top_cvar"]


def _nonneg_values(values, name: str = "values") -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim == 0 or arr.shape[-1] == 0:
        raise ValueError(f"{name} must have at least one entry along the last axis")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    if np.any(arr < 0):
        raise ValueError(f"{name} must be >= 0 (losses or accuracies), got min {arr.min()!r}")
    return arr


def gini(values, axis: int = -1):
    r"""Gini coefficient (paper 002 §7, Table 1; docs/decisions.md#relfair-metrics).

        ``G = sum_{i,j} |x_i - x_j| / (2 n^2 mean(x)) = sum_k (2k - n - 1) x_(k) / (n sum x)``

    with ``x_(1) <= ... <= x_(n)``. This equals ``1 - 2 * integral of the Lorenz curve``
    (piecewise linear through ``(k/n, L_k)``); the paper's printed ``1 - 2 * integral`` of the
    shifted curve ``l'(x) = l(x) - x/2`` is off by 1/2 (docs/decisions.md#relfair-gini).

    Parameters
    ----------
    values : array_like, shape (..., n)
        Nonnegative values (client losses or accuracies); reduced along ``axis``.

    Returns
    -------
    float (or array of the leading shape) in [0, 1 - 1/n].

    Raises
    ------
    ValueError
        If empty, negative, not finite, or all zero (0/0).

    Examples
    --------
    >>> gini([1.0, 1.0, 1.0])
    0.0
    >>> gini([0.0, 0.0, 1.0]) == 2 / 3
    True
    """
    x = np.moveaxis(_nonneg_values(values), axis, -1)
    n = x.shape[-1]
    total = x.sum(axis=-1)
    if np.any(total <= 0):
        raise ValueError("gini is undefined when all values are zero")
    weights = 2.0 * np.arange(1, n + 1) - n - 1.0
    g = np.sum(weights * np.sort(x, axis=-1), axis=-1) / (n * total)
    return float(g) if np.ndim(g) == 0 else g


def lorenz_curve(values) -> tuple[np.ndarray, np.ndarray]:
    """Lorenz curve of nonnegative values (paper 002 Fig. 4; docs/decisions.md#relfair-metrics).

    Sort ascending, ``L_0 = 0``, ``L_k = sum_{i <= k} x_(i) / sum x``; the curve is piecewise
    linear through ``(k/n, L_k)``, ``k = 0..n``, from (0, 0) to (1, 1). The paper's Fig. 4 plots
    ``L_k - k/(2n)``.

    Returns
    -------
    x, L : ndarray of shape (n + 1,)
        ``x = k/n`` and the cumulative shares; ``x[0] = L[0] = 0`` and ``x[-1] = L[-1] = 1``.

    Examples
    --------
    >>> x, L = lorenz_curve([3.0, 1.0])
    >>> x.tolist(), L.tolist()
    ([0.0, 0.5, 1.0], [0.0, 0.25, 1.0])
    """
    v = _nonneg_values(_vector(values, "values"))
    cum = np.cumsum(np.sort(v))
    if cum[-1] <= 0:
        raise ValueError("lorenz_curve is undefined when all values are zero")
    n = v.size
    # Dividing by the last cumulative sum (not np.sum) makes L[-1] exactly 1.
    share = np.concatenate([[0.0], cum / cum[-1]])
    return np.arange(n + 1) / n, share


def capped_simplex_vertex(n: int, alpha: float) -> np.ndarray:
    """Vertex vector of ``Delta_alpha^{n-1}`` sorted decreasingly
    (docs/decisions.md#relfair-permutohedron).

    ``u = 1/(alpha n)``, ``k = floor(alpha n + 1e-12)``, ``rem = 1 - k u``;
    ``v = (u, ..., u [k times], rem, 0, ..., 0)``. ``Delta_alpha = conv{permutations of v}``.

    Examples
    --------
    >>> capped_simplex_vertex(5, 0.4).tolist()
    [0.5, 0.5, 0.0, 0.0, 0.0]
    """
    if not (isinstance(n, (int, np.integer)) and n >= 1):
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if not (0 < alpha <= 1):
        raise ValueError(f"alpha must be in (0, 1], got {alpha!r}")
    u = 1.0 / (alpha * n)
    k = min(int(math.floor(alpha * n + 1e-12)), n)
    v = np.zeros(n)
    v[:k] = u
    if k < n:
        v[k] = max(1.0 - k * u, 0.0)
    return v


def top_cvar(values, alpha: float):
    """``F_A = max_{a in Delta_alpha} sum a_i f_i = sum_i v_alpha,i f_(i) decreasing``.

    Paper 002 notation (20) with ``A = Delta_alpha``; for integer ``alpha n`` the mean of the
    ``alpha n`` largest values (docs/decisions.md#relfair-permutohedron). Reduces the last axis.

    Examples
    --------
    >>> top_cvar([1.0, 2.0, 3.0, 4.0, 5.0], 0.4)
    4.5
    """
    f = np.asarray(values, dtype=np.float64)
    if f.ndim == 0 or f.shape[-1] == 0:
        raise ValueError("values must have at least one entry along the last axis")
    v = capped_simplex_vertex(f.shape[-1], alpha)
    out = np.sum(v * np.sort(f, axis=-1)[..., ::-1], axis=-1)
    return float(out) if out.ndim == 0 else out


def bottom_cvar(values, beta: float):
    """``F_B = min_{b in Delta_beta} sum b_i f_i = sum_i v_beta,i f_(i) increasing`` (002 (20)).

    Examples
    --------
    >>> bottom_cvar([1.0, 2.0, 3.0, 4.0, 5.0], 0.4)
    1.5
    """
    f = np.asarray(values, dtype=np.float64)
    if f.ndim == 0 or f.shape[-1] == 0:
        raise ValueError("values must have at least one entry along the last axis")
    v = capped_simplex_vertex(f.shape[-1], beta)
    out = np.sum(v * np.sort(f, axis=-1), axis=-1)
    return float(out) if out.ndim == 0 else out


def relative_fairness_ratio(losses, alpha: float = 0.2, beta: float | None = None):
    r"""Relative unfairness index ``R_{A,B} = F_A / F_B`` (paper 002 Definition 1, (5)).

    ``A = Delta_alpha``, ``B = Delta_beta`` (``beta`` defaults to ``alpha``):
    ``R = sum_i v_alpha,i l_(i)desc / sum_i v_beta,i l_(i)asc``. Table 1's ``R_AB`` is
    ``alpha = beta = 0.2``: mean of the 20% largest over mean of the 20% smallest client
    losses (exact when ``0.2 n`` is an integer; docs/decisions.md#relfair-metrics). Palma ratio:
    ``alpha = 0.1``,
    ``beta = 0.4``. Reduces the last axis.

    Raises
    ------
    ValueError
        If ``alpha``/``beta`` are outside (0, 1], losses are negative, or ``F_B = 0``
        (Asm. 1 requires ``F_B > 0``).

    Examples
    --------
    >>> relative_fairness_ratio([1.0, 2.0, 3.0, 4.0, 5.0], alpha=0.4)
    3.0
    """
    f = _nonneg_values(losses, "losses")
    b = alpha if beta is None else beta
    num, den = np.asarray(top_cvar(f, alpha)), np.asarray(bottom_cvar(f, b))
    if np.any(den <= 0):
        raise ValueError("relative_fairness_ratio needs F_B > 0 (paper 002 Asm. 1), got F_B = 0")
    r = num / den
    return float(r) if r.ndim == 0 else r
