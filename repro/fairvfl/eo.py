"""EO: the derived predictor of Hardt, Price & Srebro (2016), [C] ref [10]
(docs/decisions.md#fairvfl-eo), on FedBCD's pooled scores.

``P(Y~ = 1 | Yhat, A)`` minimizes the training error subject to equalized odds (primary,
docs/decisions.md#fairvfl-eo-reading) or equal opportunity (``constraint="opportunity"``): an LP
in 4 variables solved exactly by HiGHS. ``eo_expected`` gives the exact expectations the records
report; ``eo_apply`` / ``eo_postprocess`` draw once (tests check the expectations against
10^5 draws). The ROC-based reading of "EO" on continuous scores is ``roc_eo``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog
from scipy.special import expit

from repro.core.validation import check_choice, check_labels, check_vector
from repro.fairvfl.postprocessing import (
    TEST_SEED_OFFSET,
    ExpectedPrediction,
    check_postprocess_inputs,
    flip_expectation,
    labels01,
)


@dataclass(frozen=True)
class EOProgram:
    """The LP ``min c^T p  s.t.  A_eq p = 0,  0 <= p <= 1`` over
    ``p = (p_1a, p_0a, p_1b, p_0b)``, ``p_{yhat,g} = P(Y~ = 1 | Yhat = yhat, A = g)``.
    """

    c: np.ndarray
    A_eq: np.ndarray
    constant: float  # objective = constant + c^T p (the training error rate)


def _rates(yhat01: np.ndarray, Y01: np.ndarray, mask: np.ndarray):
    pos, neg = mask & (Y01 == 1), mask & (Y01 == 0)
    P, N = pos.sum(), neg.sum()
    if P == 0 or N == 0:
        raise ValueError("each group needs both labels to fit the EO post-processor")
    return P, N, yhat01[pos].mean(), yhat01[neg].mean()


def eo_program(yhat01, Y01, a_mask, constraint: str = "odds") -> EOProgram:
    """Build the Hardt et al. LP (docs/decisions.md#fairvfl-eo). Error = sum_g [P_g (1 - TPR~_g) +
    N_g FPR~_g] / n with ``TPR~_g = p_1g TPR_g + p_0g (1 - TPR_g)``, ``FPR~_g = p_1g FPR_g + p_0g (1
    - FPR_g)``.
    """
    check_choice("constraint", constraint, ("odds", "opportunity"))
    yhat01, Y01 = np.asarray(yhat01), np.asarray(Y01)
    n = len(Y01)
    c, const, tpr_rows, fpr_rows = np.zeros(4), 0.0, np.zeros(4), np.zeros(4)
    for j, (mask, sign) in enumerate(((a_mask, 1.0), (~a_mask, -1.0))):
        P, N, tpr, fpr = _rates(yhat01, Y01, mask)
        const += P / n
        c[2 * j] += (-P * tpr + N * fpr) / n
        c[2 * j + 1] += (-P * (1 - tpr) + N * (1 - fpr)) / n
        tpr_rows[2 * j:2 * j + 2] = sign * np.array([tpr, 1 - tpr])
        fpr_rows[2 * j:2 * j + 2] = sign * np.array([fpr, 1 - fpr])
    A = np.stack([tpr_rows, fpr_rows]) if constraint == "odds" else tpr_rows[None, :]
    return EOProgram(c, A, const)


def solve_eo_program(prog: EOProgram) -> tuple[np.ndarray, float]:
    """Exact LP solution with HiGHS; returns ``(p, training error)``."""
    res = linprog(prog.c, A_eq=prog.A_eq, b_eq=np.zeros(len(prog.A_eq)), bounds=[(0, 1)] * 4,
                  method="highs")
    if res.status != 0:
        raise RuntimeError(f"EO linear program failed: {res.message}")
    return res.x, float(prog.constant + res.fun)


def eo_fit(z_train, y_train, s_train, constraint: str = "odds") -> np.ndarray:
    """The mixing probabilities ``p = (p_1a, p_0a, p_1b, p_0b)`` of the Hardt et al. derived
    predictor fitted on the training split (docs/decisions.md#fairvfl-post-processing-fit).
    """
    z_train = check_vector("z_train", z_train)
    check_vector("y_train", y_train, length=len(z_train), length_of="z_train")
    check_labels("y_train", y_train, (-1, 1), shown="labels in {-1, +1}",
                 remedy="for labels in {0, 1} pass 2 * y - 1")
    check_vector("s_train", s_train, length=len(z_train), length_of="z_train")
    prog = eo_program((np.asarray(z_train) >= 0).astype(int), labels01(y_train),
                      np.asarray(s_train, bool), constraint)
    return solve_eo_program(prog)[0]


def _eo_prob_one(p: np.ndarray, z_test, s_test) -> tuple[np.ndarray, np.ndarray]:
    """``P(Y~ = 1)`` per test row and the base decision ``yhat`` in {0, 1}."""
    yhat = (np.asarray(z_test) >= 0).astype(int)
    group = np.where(np.asarray(s_test, bool), 0, 1)
    return p[2 * group + (1 - yhat)], yhat  # index (yhat=1 -> p_1g, yhat=0 -> p_0g)


def eo_apply(p: np.ndarray, z_test, s_test, rng: np.random.Generator):
    """One draw of the derived predictor: ``Y~ ~ Bernoulli(p_{Yhat,A})``; score-flip
    convention ``p~ = p`` if the decision is kept, ``1 - p`` if flipped
    (docs/decisions.md#fairvfl-post-processing-deo).
    """
    prob_one, yhat = _eo_prob_one(p, z_test, s_test)
    ytilde = (rng.random(len(yhat)) < prob_one).astype(int)
    score = expit(np.asarray(z_test, dtype=np.float64))
    p_tilde = np.where(ytilde == yhat, score, 1.0 - score)
    return np.where(ytilde == 1, 1, -1), p_tilde


def eo_postprocess(z_train, y_train, s_train, z_test, s_test, seed: int, *,
                   constraint: str = "odds"):
    """Hardt et al. derived predictor (docs/decisions.md#fairvfl-eo), one draw with
    ``Generator(PCG64(seed + 10_000))``. The records report ``eo_expected`` instead (the exact
    expectation per test row, free of the draw's noise).
    """
    check_postprocess_inputs(z_train, y_train, s_train, z_test, s_test)
    p = eo_fit(z_train, y_train, s_train, constraint)
    rng = np.random.Generator(np.random.PCG64(seed + TEST_SEED_OFFSET))
    return eo_apply(p, z_test, s_test, rng)


def eo_expected(z_train, y_train, s_train, z_test, s_test, *,
                constraint: str = "odds") -> ExpectedPrediction:
    """Exact expectations of the derived predictor from its mixing probabilities (no draw)."""
    check_postprocess_inputs(z_train, y_train, s_train, z_test, s_test)
    p = eo_fit(z_train, y_train, s_train, constraint)
    return flip_expectation(_eo_prob_one(p, z_test, s_test)[0], z_test)


