"""EO as the public equalized-odds code of the post-processing literature solves it: a reading
of [C] §V-A(a) "we use the codes published by the authors" (docs/deviations.md,
``fairvfl-eo-public-code``).

Hardt, Price & Srebro [10] published no code; the equalized-odds code that circulates with the
calibrated-equalized-odds paper [19] solves a different linear program than theirs
(:mod:`repro.fairvfl.eo`). Written here from that description, not from its source, as the
smallest change of Hardt's program that the description names:

- the derived predictor is Hardt's: it flips the base decision ``yhat = 1[z >= 0]`` at random,
  ``P(Y~ = 1 | yhat, g) = p_{yhat,g}``, four mixing rates ``p = (p_1a, p_0a, p_1b, p_0b)`` in
  [0, 1]; where it flips, the score ``h = sigmoid(z)`` becomes ``1 - h`` (the package's flip
  convention);
- the objective is the sum over the two groups of their error rates, ``sum_g FPR~_g + FNR~_g``
  of the derived decisions, each group's rates unweighted by its size (Hardt's LP minimizes the
  pooled error, each group weighted by its rows);
- the constraints equalize the *score-based* (generalized) rates of the derived predictor, the
  mean post-processed score on each group's negatives (``gFPR_g``) and one minus it on its
  positives (``gFNR_g``), instead of the hard ``TPR~_g``, ``FPR~_g``; both are linear in ``p``.

The LP is solved exactly by HiGHS on the training split; the records report the exact
expectations of the randomized predictor on the test split (:func:`eo_public_expected`), as for
every post-processor of the package.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog
from scipy.special import expit

from repro.fairvfl.postprocessing import (
    ExpectedPrediction,
    check_postprocess_inputs,
    flip_expectation,
    labels01,
)

__all__ = ["eo_public_expected", "eo_public_fit", "eo_public_program"]


def _score_coefficients(h, yhat, sel) -> np.ndarray:
    """``(a, b)`` with mean post-processed score on ``sel`` = const + a p_1g + b p_0g: a kept
    positive decision (probability p_1g) scores ``h``, a flipped one ``1 - h``; a negative
    decision flipped to positive (probability p_0g) scores ``1 - h``, kept ``h``.
    """
    n = sel.sum()
    h1, h0 = h[sel & (yhat == 1)], h[sel & (yhat == 0)]
    return np.array([np.sum(2.0 * h1 - 1.0) / n, np.sum(1.0 - 2.0 * h0) / n])


def eo_public_program(z, Y01, a_mask) -> tuple[np.ndarray, np.ndarray]:
    """``(c, A_eq)`` of the LP ``min c^T p  s.t.  A_eq p = 0, 0 <= p <= 1`` (up to a
    constant of the objective); ``z`` the scores' logits, ``Y01`` labels in {0, 1}, ``a_mask``
    group a.
    """
    z, Y01, a_mask = np.asarray(z, float), np.asarray(Y01), np.asarray(a_mask, bool)
    h, yhat = expit(z), (z >= 0).astype(int)
    c, tpr_rows, fpr_rows = np.zeros(4), np.zeros(4), np.zeros(4)
    for j, (mask, sign) in enumerate(((a_mask, 1.0), (~a_mask, -1.0))):
        pos, neg = mask & (Y01 == 1), mask & (Y01 == 0)
        if not pos.any() or not neg.any():
            raise ValueError("each group needs both labels to fit the EO post-processor")
        tpr, fpr = yhat[pos].mean(), yhat[neg].mean()
        # FPR~_g + FNR~_g = 1 + (p_1g fpr + p_0g (1 - fpr)) - (p_1g tpr + p_0g (1 - tpr))
        c[2 * j:2 * j + 2] = np.array([fpr - tpr, tpr - fpr])
        tpr_rows[2 * j:2 * j + 2] = sign * _score_coefficients(h, yhat, pos)
        fpr_rows[2 * j:2 * j + 2] = sign * _score_coefficients(h, yhat, neg)
    # the parts of the generalized rates free of p (a positive decision's 1 - h, a negative
    # one's h) enter the equalities as their right-hand side
    b = np.zeros(2)
    for mask, sign in ((a_mask, 1.0), (~a_mask, -1.0)):
        for i, lab in enumerate((1, 0)):
            sel = mask & (Y01 == lab)
            n = sel.sum()
            const = (np.sum(1.0 - h[sel & (yhat == 1)]) + np.sum(h[sel & (yhat == 0)])) / n
            b[i] -= sign * const
    return c, np.hstack([np.stack([tpr_rows, fpr_rows]), b[:, None]])


def eo_public_fit(z_train, y_train, s_train) -> np.ndarray:
    """The mixing rates ``p`` fitted on the training split (exact LP, HiGHS)."""
    c, A = eo_public_program(z_train, labels01(y_train), np.asarray(s_train, bool))
    res = linprog(c, A_eq=A[:, :4], b_eq=A[:, 4], bounds=[(0, 1)] * 4, method="highs")
    if res.status != 0:
        raise RuntimeError(f"EO (public code) linear program failed: {res.message}")
    return res.x


def eo_public_expected(z_train, y_train, s_train, z_test, s_test) -> ExpectedPrediction:
    """Exact expectations of the derived predictor on the test split."""
    check_postprocess_inputs(z_train, y_train, s_train, z_test, s_test)
    p = eo_public_fit(z_train, y_train, s_train)
    yhat = (np.asarray(z_test) >= 0).astype(int)
    g = np.where(np.asarray(s_test, bool), 0, 1)
    return flip_expectation(p[2 * g + (1 - yhat)], z_test)
