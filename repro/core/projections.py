"""Exact Euclidean projections onto the convex sets used by the four papers.

Every function solves ``argmin_w 0.5 * ||w - x||_2^2`` over one set, in float64, for a single
point ``x`` of shape ``(d,)`` or for a batch of shape ``(B, d)`` (one projection per row, no Python
loop over rows; a batched call equals the per-row calls bit for bit). Inputs are never modified.

Where the sets appear:

- nonnegative orthant: the dual step of Fair VFL ([C](9), [J](10)), lambda in R^2_+;
- box and ball: Proj_Theta of Scaff-PD-IA (paper 002, Alg. 1 line 15;
docs/decisions.md#relfair-pseudocode);
- simplex: the ambiguity set Delta^{n-1} (paper 002, Delta_alpha with alpha = 1/n);
- capped simplex: Delta_alpha^{n-1} = {a in Delta^{n-1}: a_i <= 1/(alpha n)} (paper 002, (2)),
  the dual step of SAFL, DRFA and Scaff-PD;
- permutohedron P(w) = conv{permutations of w}: the integrated ambiguity set
  Lambda_phi(Delta_alpha, Delta_beta) of paper 002 (7), the dual step of Scaff-PD-IA
  (docs/decisions.md#relfair-permutohedron).

The optimality (KKT) conditions each result satisfies are spelled out in the docstrings;
``theory/core/projections.py`` checks them to 1e-10 and compares with cvxpy/Clarabel.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "ball_projection",
    "box_projection",
    "capped_simplex_projection",
    "nonneg_projection",
    "permutohedron_projection",
    "simplex_projection",
]

# cap * d may fall short of z by rounding, e.g. cap = 1/(alpha n) with alpha = 1 and n = 49 gives
# cap * n = 1 - 1.1e-16; such a set is (up to rounding) the single point cap * 1.
_CAP_SLACK = 1e-12


def _as_float_array(x, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim not in (1, 2) or arr.shape[-1] == 0:
        raise ValueError(
            f"{name} must have shape (d,) or (B, d) with d >= 1, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got non-finite entries")
    return arr


def _as_batch(x, name: str = "x") -> tuple[np.ndarray, bool]:
    """Return ``x`` as a (B, d) float64 array and whether the input was a single row."""
    arr = _as_float_array(x, name)
    if arr.ndim == 1:
        return arr[None, :], True
    return arr, False


def _positive_scalar(name: str, value) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number in (0, inf), got {value!r}") from None
    if not (v > 0 and math.isfinite(v)):
        raise ValueError(f"{name} must be in (0, inf), got {value!r}")
    return v


def nonneg_projection(x) -> np.ndarray:
    r"""Project onto the nonnegative orthant.

    Solves ``argmin_{w >= 0} 0.5 ||w - x||^2``, i.e. ``w = max(x, 0)`` coordinatewise.
    KKT: ``w - x - mu = 0``, ``mu >= 0``, ``w >= 0``, ``mu_i w_i = 0``.

    Parameters
    ----------
    x : array_like of shape (d,) or (B, d)
        Point(s) to project.

    Returns
    -------
    ndarray of the same shape, float64.

    Examples
    --------
    >>> nonneg_projection([1.5, -2.0, 0.0]).tolist()
    [1.5, 0.0, 0.0]
    """
    arr = _as_float_array(x, "x")
    return np.maximum(arr, 0.0)


def box_projection(x, lower, upper) -> np.ndarray:
    r"""Project onto the box ``{w : lower <= w <= upper}``.

    Solves ``argmin_{lower <= w <= upper} 0.5 ||w - x||^2``, i.e. ``w = clip(x, lower, upper)``.
    KKT: ``w - x + mu_u - mu_l = 0``, ``mu_l, mu_u >= 0``, ``mu_l (w - lower) = 0``,
    ``mu_u (upper - w) = 0``.

    Parameters
    ----------
    x : array_like of shape (d,) or (B, d)
        Point(s) to project.
    lower, upper : float or array_like broadcastable to ``x``
        Bounds; ``-inf`` / ``inf`` allowed. Must satisfy ``lower <= upper`` elementwise.

    Returns
    -------
    ndarray of the same shape as ``x``, float64.

    Raises
    ------
    ValueError
        If a bound is NaN, does not broadcast to ``x``, or ``lower > upper`` somewhere.

    Examples
    --------
    >>> box_projection([-3.0, 0.5, 7.0], -1.0, [1.0, 1.0, 5.0]).tolist()
    [-1.0, 0.5, 5.0]
    """
    arr = _as_float_array(x, "x")
    lo = np.asarray(lower, dtype=np.float64)
    hi = np.asarray(upper, dtype=np.float64)
    try:
        lo_b, hi_b = np.broadcast_to(lo, arr.shape), np.broadcast_to(hi, arr.shape)
    except ValueError:
        raise ValueError(
            f"lower (shape {lo.shape}) and upper (shape {hi.shape}) must broadcast to x "
            f"(shape {arr.shape})") from None
    if np.isnan(lo_b).any() or np.isnan(hi_b).any():
        raise ValueError("lower and upper must not contain NaN")
    bad = lo_b > hi_b
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"lower must be <= upper elementwise, got lower{list(idx)}={lo_b[idx]!r} > "
            f"upper{list(idx)}={hi_b[idx]!r}")
    return np.minimum(np.maximum(arr, lo_b), hi_b)


def ball_projection(x, radius, center=None) -> np.ndarray:
    r"""Project onto the Euclidean ball ``{w : ||w - c||_2 <= radius}``.

    Solves ``argmin_{||w - c|| <= r} 0.5 ||w - x||^2``, whose solution is
    ``w = c + (x - c) * min(1, r / ||x - c||)``.
    KKT: ``w - x + mu (w - c) = 0``, ``mu >= 0``, ``||w - c|| <= r``,
    ``mu (||w - c|| - r) = 0``; here ``mu = max(0, ||x - c|| / r - 1)``.

    Parameters
    ----------
    x : array_like of shape (d,) or (B, d)
        Point(s) to project.
    radius : float
        Radius ``r``, in ``(0, inf)``.
    center : array_like of shape (d,) or like ``x``, optional
        Center ``c``; the origin when omitted.

    Returns
    -------
    ndarray of the same shape as ``x``, float64.

    Raises
    ------
    ValueError
        If ``radius`` is not in ``(0, inf)`` or ``center`` does not broadcast to ``x``.

    Examples
    --------
    >>> ball_projection([6.0, 8.0], 5.0).tolist()
    [3.0, 4.0]
    >>> ball_projection([0.1, 0.2], 1.0).tolist()
    [0.1, 0.2]
    """
    r = _positive_scalar("radius", radius)
    arr, single = _as_batch(x, "x")
    if center is None:
        c = np.zeros(arr.shape[-1])
    else:
        c = _as_float_array(center, "center")
        if c.shape[-1] != arr.shape[-1] or (c.ndim == 2 and c.shape[0] not in (1, arr.shape[0])):
            raise ValueError(
                f"center must have shape ({arr.shape[-1]},) or match x, got {c.shape}")
    c = np.broadcast_to(c, arr.shape)
    v = arr - c
    # Explicit sum instead of np.linalg.norm: the same reduction for one row and for a batch,
    # so batched and per-row calls agree bit for bit.
    norm = np.sqrt(np.sum(v * v, axis=-1, keepdims=True))
    out = c + v * (r / np.maximum(norm, r))
    return out[0] if single else out


def simplex_projection(x, z: float = 1.0) -> np.ndarray:
    r"""Project onto the scaled probability simplex ``{w : w >= 0, sum(w) = z}``.

    Solves ``argmin_{w >= 0, 1^T w = z} 0.5 ||w - x||^2``. The solution is
    ``w = max(x - tau, 0)`` with ``tau = (sum_{i <= rho} u_i - z) / rho``, where ``u`` is ``x``
    sorted in decreasing order and ``rho = max{j : u_j - (sum_{i <= j} u_i - z) / j > 0}``
    (sort-based algorithm, O(d log d); Held et al. 1974, Duchi et al. 2008).
    KKT: ``w - x + tau 1 - mu = 0``, ``mu >= 0``, ``w >= 0``, ``1^T w = z``, ``mu_i w_i = 0``.

    Parameters
    ----------
    x : array_like of shape (d,) or (B, d)
        Point(s) to project.
    z : float, default 1.0
        Total mass, in ``(0, inf)``.

    Returns
    -------
    ndarray of the same shape as ``x``, float64.

    Raises
    ------
    ValueError
        If ``z`` is not in ``(0, inf)`` or ``x`` is not finite.

    Examples
    --------
    >>> simplex_projection([0.5, 0.5, 2.0]).tolist()
    [0.0, 0.0, 1.0]
    >>> simplex_projection([[0.2, 0.2], [1.0, 0.0]], z=2.0).tolist()
    [[1.0, 1.0], [1.5, 0.5]]
    """
    zz = _positive_scalar("z", z)
    arr, single = _as_batch(x, "x")
    d = arr.shape[-1]
    u = np.sort(arr, axis=-1)[:, ::-1]
    css = np.cumsum(u, axis=-1) - zz
    j = np.arange(1, d + 1, dtype=np.float64)
    positive = u - css / j > 0
    # The condition holds on a prefix (always at j = 1 since z > 0); take its last index
    # robustly even if rounding broke the prefix shape.
    rho = d - 1 - np.argmax(positive[:, ::-1], axis=-1)
    tau = np.take_along_axis(css, rho[:, None], axis=-1) / (rho[:, None] + 1.0)
    out = np.maximum(arr - tau, 0.0)
    return out[0] if single else out


def _capped_sets(arr: np.ndarray, cp: float, zz: float) -> tuple[np.ndarray, np.ndarray]:
    """The free set ``F`` and upper set ``U`` of each row's projection onto the capped simplex:
    ``g`` evaluated at every sorted breakpoint by a cumulative sum, and the crossing segment
    (see :func:`capped_simplex_projection`).
    """
    d = arr.shape[-1]
    B = arr.shape[0]
    breakpoints = np.concatenate([arr, arr - cp], axis=-1)
    # Walking t down from +inf: passing x_i frees coordinate i (+1 to the slope of -g),
    # passing x_i - cap puts it at the cap (-1).
    step = np.concatenate([np.ones(d), -np.ones(d)])
    order = np.argsort(-breakpoints, axis=-1, kind="stable")
    b = np.take_along_axis(breakpoints, order, axis=-1)
    n_free = np.cumsum(step[order], axis=-1)
    gaps = b[:, :-1] - b[:, 1:]
    g = np.concatenate([np.zeros((B, 1)), np.cumsum(n_free[:, :-1] * gaps, axis=-1)], axis=-1)
    reached = g >= zz
    # k = number of breakpoints passed on the crossing segment; g[0] = 0 < z so k >= 1. If
    # rounding keeps g just below z = cap * d, the last segment is the crossing one.
    k = np.where(reached.any(axis=-1), np.argmax(reached, axis=-1), 2 * d - 1)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(2 * d)[None, :].repeat(B, axis=0), axis=-1)
    passed = rank < k[:, None]
    upper_set = passed[:, d:]
    free_set = passed[:, :d] & ~upper_set
    return free_set, upper_set


def capped_simplex_projection(x, cap: float, z: float = 1.0) -> np.ndarray:
    r"""Project onto the capped simplex ``{w : 0 <= w <= cap, sum(w) = z}``.

    Solves ``argmin_{0 <= w <= cap, 1^T w = z} 0.5 ||w - x||^2``. For paper 002's
    ``Delta_alpha^{n-1} = {a in Delta^{n-1} : a_i <= 1/(alpha n)}`` ((2), alpha in (0, 1]) call
    ``capped_simplex_projection(x, cap=1/(alpha*n))``.

    The solution is ``w = clip(x - t, 0, cap)`` where ``t`` solves
    ``g(t) := sum_i clip(x_i - t, 0, cap) = z``. ``g`` is continuous, non-increasing and piecewise
    linear with breakpoints ``{x_i} U {x_i - cap}``; the breakpoints are sorted once
    (O(d log d)), ``g`` is evaluated at all of them by a cumulative sum, and the segment where
    ``g`` crosses ``z`` fixes the free set ``F = {i : 0 < w_i < cap}`` and upper set
    ``U = {i : w_i = cap}``. ``t`` is then computed in closed form from those sets,
    ``t = (sum_{i in F} x_i + |U| cap - z) / |F|``, so it does not inherit the rounding of the
    cumulative sum.
    KKT: ``w - x + t 1 - mu_l + mu_u = 0``, ``mu_l, mu_u >= 0``, ``0 <= w <= cap``,
    ``1^T w = z``, ``mu_l,i w_i = 0``, ``mu_u,i (cap - w_i) = 0``.

    Parameters
    ----------
    x : array_like of shape (d,) or (B, d)
        Point(s) to project.
    cap : float
        Upper bound on every coordinate, in ``[z/d, inf)`` (the set is empty for
        ``cap < z/d``; a relative shortfall up to 1e-12 is treated as rounding and gives
        ``w = cap``). For ``cap >= z`` the cap is inactive and this is ``simplex_projection``.
    z : float, default 1.0
        Total mass, in ``(0, inf)``.

    Returns
    -------
    ndarray of the same shape as ``x``, float64.

    Raises
    ------
    ValueError
        If ``z`` or ``cap`` is not in ``(0, inf)``, or ``cap * d < z``.

    Examples
    --------
    >>> capped_simplex_projection([3.0, 1.0, 0.0, 0.0], cap=0.5).tolist()
    [0.5, 0.5, 0.0, 0.0]
    >>> capped_simplex_projection([1.0, 1.0, 0.25, 0.25], cap=0.375).tolist()
    [0.375, 0.375, 0.125, 0.125]
    """
    zz = _positive_scalar("z", z)
    cp = _positive_scalar("cap", cap)
    arr, single = _as_batch(x, "x")
    d = arr.shape[-1]
    if cp * d < zz * (1.0 - _CAP_SLACK):
        raise ValueError(
            f"cap must be in [z/d, inf) = [{zz / d!r}, inf) for d={d}, z={zz!r} (otherwise "
            f"{{0 <= w <= cap, sum(w) = z}} is empty), got cap={cap!r}")
    if cp >= zz:
        out = simplex_projection(arr, zz)
        return out[0] if single else out

    free_set, upper_set = _capped_sets(arr, cp, zz)
    # |F| = n_free[k-1] >= 1: g rises on the crossing segment, so its slope is nonzero.
    n_f = free_set.sum(axis=-1, keepdims=True).astype(np.float64)
    n_u = upper_set.sum(axis=-1, keepdims=True).astype(np.float64)
    t = (np.sum(np.where(free_set, arr, 0.0), axis=-1, keepdims=True) + n_u * cp - zz) / n_f
    out = np.minimum(np.maximum(arr - t, 0.0), cp)
    return out[0] if single else out


def permutohedron_projection(x, w) -> np.ndarray:
    r"""Project onto the permutohedron ``P(w) = conv{permutations of w}``.

    Solves ``argmin_{v in P(w)} 0.5 ||v - x||^2``. ``P(w)`` is the set of ``v`` majorized by
    ``w``: ``sum_{i <= k} v_(i) <= sum_{i <= k} w_(i)`` for every ``k`` (both sorted
    decreasingly), with equality at ``k = d``. Algorithm (Negrinho & Martins 2014; Blondel et al.
    2020), O(d log d):
    with ``sigma`` the permutation sorting ``x`` decreasingly and ``w`` sorted decreasingly, let
    ``u`` be the decreasing isotonic regression of ``x[sigma] - w``
    (``argmin_{u_1 >= ... >= u_d} ||u - (x[sigma] - w)||^2``, pool-adjacent-violators); then
    ``v[sigma] = x[sigma] - u``.

    Optimality certificate (used by the tests): ``v in P(w)`` and the variational inequality
    ``<x - v, y - v> <= 0`` for all ``y in P(w)``, i.e. with the support function
    ``h(s) = max_{y in P(w)} <s, y> = sum_i w_(i) s_(i)`` (both decreasing),
    ``h(x - v) = <x - v, v>``.

    In paper 002, ``Lambda_phi(Delta_alpha, Delta_beta) = P(w)`` with
    ``w = (v_alpha - phi v_beta reversed) / (1 - phi)`` (``repro.relfair.ambiguity``), and with
    ``phi = 0`` this is the capped-simplex projection onto ``Delta_alpha``.

    Parameters
    ----------
    x : array_like of shape (d,) or (B, d)
        Point(s) to project.
    w : array_like of shape (d,)
        Generating vector (any order; entries may be negative).

    Returns
    -------
    ndarray of the same shape as ``x``, float64. Rows of a batch are projected one by one
    (the isotonic regression is a sequential scan); a batched call equals the per-row calls.

    Raises
    ------
    ValueError
        If ``w`` is not finite or its length differs from ``x``'s last axis.

    Examples
    --------
    >>> permutohedron_projection([3.0, 0.0, 0.0], [0.5, 0.5, 0.0]).tolist()
    [0.5, 0.25, 0.25]
    >>> permutohedron_projection([0.0, 1.0, 2.0], [3.0, 2.0, 1.0]).tolist()
    [1.0, 2.0, 3.0]
    """
    from scipy.optimize import isotonic_regression

    arr, single = _as_batch(x, "x")
    ww = _as_float_array(w, "w")
    if ww.ndim != 1 or ww.shape[0] != arr.shape[-1]:
        raise ValueError(f"w must have shape ({arr.shape[-1]},) to match x, got {ww.shape}")
    w_desc = np.sort(ww)[::-1]
    order = np.argsort(-arr, axis=-1, kind="stable")
    xs = np.take_along_axis(arr, order, axis=-1)
    y = xs - w_desc
    u = np.stack([isotonic_regression(row, increasing=False).x for row in y])
    out = np.empty_like(arr)
    np.put_along_axis(out, order, xs - u, axis=-1)
    return out[0] if single else out
