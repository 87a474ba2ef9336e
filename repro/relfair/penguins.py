"""The Penguins simulation of paper 002 §4.3 / App. J.1 (Figure 3;
docs/decisions.md#relfair-penguins, docs/decisions.md#relfair-penguins-values).

Three clients (Adelie, Chinstrap, Gentoo), the first 10 complete rows of each species in file
order; linear model ``y = theta_1 + theta_2 x_1 + theta_3 x_2`` with ``y`` = bill length,
``x = (bill depth, flipper length)`` and squared loss ``f_i(theta) = sum_j (y_j - theta_1 -
theta_2 x_j1 - theta_3 x_j2)^2``. The paper prints ``+ theta_3 (x_j)_2``; that is a sign typo
(with it the optimum is a grid corner and R is constant in phi, docs/decisions.md#relfair-overview
item 7), so the minus sign is used. ``A = B = Delta^2`` (the paper's "Delta^3" is a typo for n = 3),
so (8) minimizes ``(max_i f_i - phi min_i f_i) / (1 - phi)`` and ``R = max_i f_i / min_i f_i``.

The problem is non-convex in theta for phi > 0 (``H_i - phi H_j`` is indefinite), hence the
exhaustive grid: theta_1 in {-35, -34.99, ..., -25}, theta_2, theta_3 in {0, 0.001, ..., 1}
(the paper's "-34,98" is a typo for -34.98); ties go to the first point in lexicographic
(theta_1, theta_2, theta_3) order.
"""

from __future__ import annotations

import numpy as np

__all__ = ["PHIS", "continuous_optimum", "grid_search", "losses", "penguin_clients",
           "quadratic_forms"]

PHIS = (0.0, 0.01, 0.02, 0.03, 0.04, 0.05)
SPECIES = ("Adelie", "Chinstrap", "Gentoo")


def penguin_clients(per_species: int = 10) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(Z_i, y_i)`` per client: rows ``(1, bill_depth, flipper_length)`` and bill lengths.

    Rows with NA in any of the three columns are dropped first (the 4th Adelie row is all NA).
    """
    from repro.core.data.penguins import load_penguins

    ds = load_penguins()
    names = ds.feature_names
    cols = [names.index(c) for c in ("bill_length_mm", "bill_depth_mm", "flipper_length_mm")]
    vals = ds.X[:, cols].astype(np.float64)
    complete = ~np.isnan(vals).any(axis=1)
    species = np.asarray(ds.meta["label_names"])[ds.y]
    out = []
    for sp in SPECIES:
        rows = np.flatnonzero((species == sp) & complete)[:per_species]
        y = vals[rows, 0]
        Z = np.column_stack([np.ones(len(rows)), vals[rows, 1], vals[rows, 2]])
        out.append((Z, y))
    return out


def quadratic_forms(clients) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``f_i(theta) = theta^T H_i theta - 2 g_i^T theta + c_i``: H (3,3,3), g (3,3), c (3,)."""
    H = np.stack([Z.T @ Z for Z, _ in clients])
    g = np.stack([Z.T @ y for Z, y in clients])
    c = np.array([y @ y for _, y in clients])
    return H, g, c


def losses(theta, clients) -> np.ndarray:
    """The three losses at one theta, from the residuals (no expansion)."""
    th = np.asarray(theta, dtype=np.float64)
    return np.array([np.sum((y - Z @ th) ** 2) for Z, y in clients])


def grid_search(clients, phis=PHIS, theta1_step: float = 0.01, theta23_step: float = 0.001
                ) -> dict[float, dict]:
    """Exact minimizers of (max f - phi min f)/(1 - phi) over the grid, for every phi.

    Returns ``phi -> {"theta": (3,), "losses": (3,), "R": max/min, "objective": value}``.
    """
    H, g, c = quadratic_forms(clients)
    n1 = int(round(10.0 / theta1_step))
    n23 = int(round(1.0 / theta23_step))
    t1 = -35.0 + np.arange(n1 + 1) * theta1_step
    t = np.arange(n23 + 1) * theta23_step
    a, b = np.meshgrid(t, t, indexing="ij")
    aa, ab, bb = a * a, a * b, b * b
    # Per client, the part that does not depend on theta_1.
    base = [H[i, 1, 1] * aa + 2 * H[i, 1, 2] * ab + H[i, 2, 2] * bb
            - 2 * g[i, 1] * a - 2 * g[i, 2] * b + c[i] for i in range(3)]
    best = {phi: (np.inf, None) for phi in phis}
    for x in t1:
        f = np.stack([base[i] + H[i, 0, 0] * x * x + 2 * x * (H[i, 0, 1] * a + H[i, 0, 2] * b)
                      - 2 * g[i, 0] * x for i in range(3)])
        fmax, fmin = f.max(axis=0), f.min(axis=0)
        for phi in phis:
            obj = (fmax - phi * fmin) / (1.0 - phi)
            k = int(np.argmin(obj))
            if obj.flat[k] < best[phi][0]:
                best[phi] = (float(obj.flat[k]), np.array([x, a.flat[k], b.flat[k]]))
    out = {}
    for phi, (val, theta) in best.items():
        f = losses(theta, clients)
        out[phi] = {"theta": theta, "losses": f, "R": float(f.max() / f.min()),
                    "objective": val}
    return out


BOX = (np.array([-35.0, 0.0, 0.0]), np.array([-25.0, 1.0, 1.0]))


def continuous_optimum(clients, phis, starts: int, rng: np.random.Generator) -> dict[float, dict]:
    """Box-constrained continuous minimizers of (max f - phi min f)/(1 - phi)
    (docs/decisions.md#relfair-penguins-values).

    Epigraph form ``min (t - phi s)/(1 - phi)`` s.t. ``s <= f_i(theta) <= t``, theta in the box
    of the grid, by SLSQP from ``starts`` uniform random starts (the problem is non-convex for
    phi > 0); the best feasible local solution is kept.
    """
    from scipy.optimize import minimize

    H, g, c = quadratic_forms(clients)
    lo, hi = BOX

    def f(th):
        return np.einsum("i,nij,j->n", th, H, th) - 2 * g @ th + c

    def fg(th):
        return 2 * np.einsum("nij,j->ni", H, th) - 2 * g

    cons = [{"type": "ineq", "fun": lambda x: x[3] - f(x[:3]),
             "jac": lambda x: np.hstack([-fg(x[:3]), np.ones((3, 1)), np.zeros((3, 1))])},
            {"type": "ineq", "fun": lambda x: f(x[:3]) - x[4],
             "jac": lambda x: np.hstack([fg(x[:3]), np.zeros((3, 1)), -np.ones((3, 1))])}]
    out = {}
    for phi in phis:
        best = None
        for _ in range(starts):
            th0 = lo + (hi - lo) * rng.random(3)
            F0 = f(th0)
            res = minimize(lambda x, p=phi: (x[3] - p * x[4]) / (1 - p),
                           np.concatenate([th0, [F0.max(), F0.min()]]),
                           jac=lambda x, p=phi: np.array([0, 0, 0, 1 / (1 - p), -p / (1 - p)]),
                           constraints=cons, method="SLSQP",
                           bounds=[*zip(lo, hi, strict=True), (None, None), (None, None)],
                           options={"ftol": 1e-12, "maxiter": 500})
            th = np.clip(res.x[:3], lo, hi)
            F = f(th)
            val = (F.max() - phi * F.min()) / (1 - phi)
            if best is None or val < best[0]:
                best = (val, th, F)
        out[phi] = {"theta": best[1], "losses": best[2], "R": float(best[2].max() / best[2].min()),
                    "objective": float(best[0])}
    return out
