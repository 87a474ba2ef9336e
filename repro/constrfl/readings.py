"""Readings of the NP data (Table 1's private preprocessed CSVs,
docs/decisions.md#constrfl-np-data) and whether r = 0.2 is feasible.

The paper's Table 1 reports feasibility 0.20 (the class-1 constraint active on the worst
client) on every dataset, which needs the constraint to be feasible: some ``w`` (no intercept)
with every client's class-1 mean logistic loss at most r. For a reading (an encoding of the
categorical attributes, :data:`repro.constrfl.data.ENCODINGS`) and a client count n, the
smallest achievable worst-client loss

    L*(n) = min_w max_i (1/m_i1) sum_j log(1 + exp(-w^T x_j^{i1}))

is a convex program (exponential cones), solved here with cvxpy/Clarabel; r = 0.2 is feasible
iff ``L*(n) <= r``. Only the class-1 rows and the reference split
(docs/decisions.md#constrfl-np-experiment) enter.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from repro.constrfl.data import ENCODINGS, NP_DATASETS, equal_class_split, load_np_dataset

__all__ = ["FeasibilityReading", "best_worst_class1_loss", "feasibility_reading"]

# Clarabel's accuracies of repro/constrfl/groundtruth.py
# (docs/decisions.md#constrfl-theory-instances); 1e-10 triggers "inaccurate"
_CLARABEL = {"tol_gap_abs": 1e-9, "tol_gap_rel": 1e-9, "tol_feas": 1e-9}


@dataclass(frozen=True)
class FeasibilityReading:
    dataset: str
    encoding: str
    n: int
    d: int
    best_worst_loss: float   # worst-client loss at Clarabel's w: an upper bound on L*(n)
    solver_value: float      # Clarabel's optimal t: L*(n) to its accuracy
    r: float
    status: str

    @property
    def feasible(self) -> bool:
        """Certified by Clarabel's w: its worst-client loss is at most r."""
        return self.best_worst_loss <= self.r

    @property
    def decided(self) -> bool:
        """Feasible by its w, or infeasible with the optimum clearly above r."""
        return self.feasible or self.solver_value > self.r + 1e-6


def best_worst_class1_loss(X1: list[np.ndarray]) -> tuple[float, float, np.ndarray, str]:
    """``(worst loss at w, Clarabel's optimum, w, status)`` of
    ``min_w max_i mean_j log(1 + exp(-w^T x_ij))`` over the clients' class-1 row blocks
    ``X1[i]`` (shape (m_i1, d)). Where class 1 is separable the infimum 0 is not attained and
    Clarabel reports ``optimal_inaccurate`` with a large w (its loss is still the certificate).
    """
    import warnings

    import cvxpy as cp

    if not X1 or any(x.ndim != 2 or len(x) == 0 for x in X1):
        raise ValueError("X1 must be a non-empty list of non-empty (m_i1, d) class-1 blocks")
    d = X1[0].shape[1]
    w, t = cp.Variable(d), cp.Variable()
    cons = [cp.sum(cp.logistic(-x @ w)) / len(x) <= t for x in X1]
    prob = cp.Problem(cp.Minimize(t), cons)
    with warnings.catch_warnings():       # "inaccurate": the status says so
        warnings.simplefilter("ignore", UserWarning)
        prob.solve(solver=cp.CLARABEL, **_CLARABEL)
    if prob.status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"Clarabel: {prob.status} on the feasibility program (d = {d})")
    wv = np.asarray(w.value, dtype=float)
    # report the loss evaluated at the returned w (an upper bound on L*, what a run can reach)
    worst = max(float(np.mean(np.logaddexp(0.0, -(x @ wv)))) for x in X1)
    return worst, float(prob.value), wv, prob.status


def feasibility_reading(dataset: str, encoding: str, n: int,
                        r: float = 0.2) -> FeasibilityReading:
    """Whether r is feasible for Table 1's ``dataset`` with ``n`` clients under ``encoding``
    (the reference split of the tables, first data row kept as in paper mode).
    """
    if dataset not in NP_DATASETS:
        raise ValueError(f"dataset must be one of {NP_DATASETS}, got {dataset!r}")
    if encoding not in ENCODINGS:
        raise ValueError(f"encoding must be one of {ENCODINGS}, got {encoding!r}")
    data = load_np_dataset(dataset, False, encoding)
    X1 = [data.X[b] for _, b in equal_class_split(data.y, n)]
    worst, value, _, status = best_worst_class1_loss(X1)
    return FeasibilityReading(dataset, encoding, n, data.d, worst, value, r, status)
