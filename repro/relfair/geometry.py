"""Figure 1 (App. A) and Figure 2 (§3.2) of paper 002: the toy points and the hexagons.

Figure 1 (docs/decisions.md#relfair-figures): D = eight points in the plane; the pink center
minimizes the largest distance (min-max / DRO, (1) with A = the simplex), the blue one the spread
``max_v ||v - theta|| - min_v ||v - theta||`` (relative fairness with phi -> 1, a difference of
convex functions). Recipe: grid search on [-1.5, 1.5]^2 with step 1e-3, then Nelder-Mead from
the grid argmin (xatol 1e-12). Verified values: pink (0, 0), sum of distances 7.081139; blue
(0, -1/4), sum 7.104862, spread sqrt(17)/4 - 3/4 = 0.280776.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from repro.relfair.problem import RelativeAmbiguitySet

__all__ = ["FIG1_POINTS", "fig1_centers", "hexagon_vertices", "simplex_plane_coords"]

_S = 1.0 / np.sqrt(2.0)
FIG1_POINTS = np.array([
    [1.0, 0.0], [-1.0, 0.0], [_S, 0.5 * _S], [-_S, 0.5 * _S], [0.0, 0.5],
    [_S, -_S], [-_S, -_S], [0.0, -1.0]])


def _distances(theta: np.ndarray, points: np.ndarray = FIG1_POINTS) -> np.ndarray:
    return np.sqrt(((points - theta) ** 2).sum(-1))


def _objectives():
    return {
        "minmax": lambda t: _distances(t).max(),
        "spread": lambda t: _distances(t).max() - _distances(t).min(),
    }


def _grid_argmin(kind: str, step: float, half_width: float = 1.5) -> np.ndarray:
    g = np.round(np.arange(-half_width, half_width + step / 2, step), 12)
    best, arg = np.inf, None
    for chunk in np.array_split(g, max(1, len(g) // 200)):
        T1, T2 = np.meshgrid(chunk, g, indexing="ij")
        d = np.sqrt((T1[..., None] - FIG1_POINTS[:, 0]) ** 2
                    + (T2[..., None] - FIG1_POINTS[:, 1]) ** 2)
        val = d.max(-1) if kind == "minmax" else d.max(-1) - d.min(-1)
        k = int(np.argmin(val))
        if val.flat[k] < best:
            best, arg = float(val.flat[k]), np.array([T1.flat[k], T2.flat[k]])
    return arg


def fig1_centers(step: float = 1e-3) -> dict:
    """Both centers (grid + Nelder-Mead), their objective values and distance sums."""
    out = {}
    for kind, fn in _objectives().items():
        start = _grid_argmin(kind, step)
        res = minimize(fn, start, method="Nelder-Mead",
                       options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 20000})
        theta = res.x if res.fun <= fn(start) else start
        d = _distances(theta)
        out[kind] = {"center": theta, "value": float(fn(theta)), "distances": d,
                     "sum": float(d.sum())}
    return out


def simplex_plane_coords(points: np.ndarray) -> np.ndarray:
    """2-D coordinates of points of the plane ``sum(lambda) = 1`` in R^3 (an isometry)."""
    e1 = np.array([1.0, -1.0, 0.0]) / np.sqrt(2.0)
    e2 = np.array([1.0, 1.0, -2.0]) / np.sqrt(6.0)
    p = np.asarray(points, dtype=np.float64)
    return np.stack([p @ e1, p @ e2], axis=-1)


def hexagon_vertices(phi: float, n: int = 3, alpha: float = 0.5) -> np.ndarray:
    """Vertices of Lambda_phi(Delta_alpha^2, Delta_alpha^2) (Fig. 2): the distinct permutations
    of w, ordered by angle around their centroid (so consecutive rows are polygon edges).
    """
    import itertools

    w = RelativeAmbiguitySet(n, alpha, alpha, phi).w
    verts = np.unique(np.array([w[list(p)] for p in itertools.permutations(range(n))]), axis=0)
    xy = simplex_plane_coords(verts)
    c = xy.mean(axis=0)
    return verts[np.argsort(np.arctan2(xy[:, 1] - c[1], xy[:, 0] - c[0]))]
