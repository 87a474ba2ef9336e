"""Equalized odds on continuous scores: Hardt, Price & Srebro (2016) §4.2 ([C] ref [10]).

A reading of [J]'s "EO" beside the primary derived predictor from the thresholded decision
(``eo.eo_fit``, docs/decisions.md#fairvfl-eo): here the post-processor may use the score ``h =
sigma(z)`` itself. Per group g every threshold classifier ``1[h >= t]`` gives a ROC point
``(FPR_g(t), TPR_g(t))`` on the training split; its reflection ``1[h < t]`` gives
``(1 - FPR, 1 - TPR)``. A randomized predictor mixes them with weights ``w_g`` (sum 1), and the
equalized-odds predictor of least training error is the LP

    min  sum_g [P_g (1 - TPR_g(w_g)) + N_g FPR_g(w_g)] / n
    s.t. TPR_a(w_a) = TPR_b(w_b),  FPR_a(w_a) = FPR_b(w_b),  w_g >= 0,  sum_j w_gj = 1,

solved exactly by HiGHS (every distinct ROC point is a variable: no grid). Its expectations on
the test split follow from the weights (``ExpectedPrediction``; the loss-based DEO uses the
score-flip convention relative to the base decision ``1[z >= 0]``,
docs/decisions.md#fairvfl-post-processing-deo).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog
from scipy.special import expit

from repro.fairvfl.postprocessing import (
    ExpectedPrediction,
    check_postprocess_inputs,
    flip_expectation,
)


@dataclass(frozen=True)
class GroupMixture:
    """Thresholds ``t_j``, direction (+1: ``1[h >= t]``, -1: ``1[h < t]``) and weights."""

    thresholds: np.ndarray
    directions: np.ndarray
    weights: np.ndarray

    def prob_one(self, h: np.ndarray) -> np.ndarray:
        above = h[:, None] >= self.thresholds[None, :]
        fires = np.where(self.directions[None, :] > 0, above, ~above)
        return np.clip(fires.astype(np.float64) @ self.weights, 0.0, 1.0)  # rounding only


def roc_points(h: np.ndarray, Y01: np.ndarray):
    """Thresholds (every distinct score and ``+inf``) with their ``(FPR, TPR)``."""
    pos, neg = np.sort(h[Y01 == 1]), np.sort(h[Y01 == 0])
    if len(pos) == 0 or len(neg) == 0:
        raise ValueError("each group needs both labels to fit the ROC-based EO post-processor")
    t = np.append(np.unique(h), np.inf)
    tpr = (len(pos) - np.searchsorted(pos, t, side="left")) / len(pos)
    fpr = (len(neg) - np.searchsorted(neg, t, side="left")) / len(neg)
    return t, fpr, tpr


def roc_eo_fit(h_train, Y01, a_mask) -> tuple[dict[str, GroupMixture], float]:
    """The LP of the module docstring; returns the mixture per group and the training error."""
    h_train, Y01, a_mask = (np.asarray(h_train, np.float64), np.asarray(Y01),
                            np.asarray(a_mask, bool))
    n = len(Y01)
    cols, per_group = [], []
    for mask in (a_mask, ~a_mask):
        t, fpr, tpr = roc_points(h_train[mask], Y01[mask])
        P, N = np.sum(mask & (Y01 == 1)), np.sum(mask & (Y01 == 0))
        t2 = np.concatenate([t, t])
        d2 = np.concatenate([np.ones(len(t)), -np.ones(len(t))])
        f2, r2 = np.concatenate([fpr, 1 - fpr]), np.concatenate([tpr, 1 - tpr])
        cols.append((f2, r2, P, N))
        per_group.append((t2, d2))
    sizes = [len(c[0]) for c in cols]
    c = np.concatenate([(-P * r + N * f) / n for f, r, P, N in cols])
    const = sum(P for _, _, P, _ in cols) / n
    A = np.zeros((4, sum(sizes)))
    A[0, :sizes[0]], A[1, sizes[0]:] = 1.0, 1.0
    A[2, :sizes[0]], A[2, sizes[0]:] = cols[0][1], -cols[1][1]
    A[3, :sizes[0]], A[3, sizes[0]:] = cols[0][0], -cols[1][0]
    res = linprog(c, A_eq=A, b_eq=np.array([1.0, 1.0, 0.0, 0.0]), bounds=(0, None),
                  method="highs")
    if res.status != 0:
        raise RuntimeError(f"ROC equalized-odds linear program failed: {res.message}")
    out, start = {}, 0
    for name, (t2, d2), size in zip(("a", "b"), per_group, sizes, strict=True):
        w = res.x[start:start + size]
        keep = w > 1e-12
        out[name] = GroupMixture(t2[keep], d2[keep], w[keep] / w[keep].sum())
        start += size
    return out, float(const + res.fun)


def roc_eo_expected(z_train, y_train, s_train, z_test, s_test) -> ExpectedPrediction:
    """Exact expectations on the test split of the ROC-based equalized-odds predictor."""
    check_postprocess_inputs(z_train, y_train, s_train, z_test, s_test)
    mix, _ = roc_eo_fit(expit(np.asarray(z_train, np.float64)),
                        (np.asarray(y_train) == 1).astype(int), np.asarray(s_train, bool))
    h = expit(np.asarray(z_test, np.float64))
    s_test = np.asarray(s_test, bool)
    q = np.empty(len(h))
    q[s_test] = mix["a"].prob_one(h[s_test])
    q[~s_test] = mix["b"].prob_one(h[~s_test])
    return flip_expectation(q, z_test)
