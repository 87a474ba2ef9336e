"""Test-split metrics of docs/decisions.md#fairvfl-metrics (fractions; experiments print percent).

One code path for deterministic models and randomized post-processors: a predictor is given by
``q_i = P(Y~_i = +1)`` (0/1 for a decision), the per-row loss used by the DEO (its expectation
for a randomized predictor) and the score ``h_i`` (probability of ``y = +1``, its expectation
for a randomized predictor). Accuracy and every rate are then exact expectations, linear in
``q``/``h``; DFP/DFN are logged under all five readings of ``metric_readings``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from repro.core.metrics import deo, fairness_rate, harmonic_mean
from repro.core.validation import check_labels, check_vector
from repro.fairvfl.metric_readings import group_rates, rate_readings


def metrics_from_scores(y, s, z) -> dict[str, float]:
    """Metrics of a scored model: ``yhat = +1 iff z >= 0``, DEO on ``log(1 + e^{-z})``,
    score ``sigma(z)``.
    """
    z = check_vector("z", z, length=len(check_vector("y", y)), length_of="y").astype(
        np.float64)
    return metrics_from_decisions(y, s, np.where(z >= 0, 1, -1), np.logaddexp(0.0, -z),
                                  expit(z))


def metrics_from_decisions(y, s, yhat, losses, scores) -> dict[str, float]:
    """Metrics of deterministic decisions ``yhat`` in {-1, +1} (see ``metrics_from_predictor``)."""
    yhat = check_vector("yhat", yhat, length=len(check_vector("y", y)), length_of="y")
    return metrics_from_predictor(y, s, (np.asarray(yhat) == 1).astype(np.float64), losses,
                                  scores)


def metrics_from_predictor(y, s, q, losses, scores) -> dict[str, float]:
    """AC, DEO (Definition 1 on the test split), FR = 1 - DEO, HM, the group rates and DFP/DFN
    under every reading ([J] §5.2).

    ``y`` in {-1, +1}; ``s`` True = group a; ``q = P(Y~ = +1)`` per row; ``losses`` one per row
    (``-log p~``, expected for a randomized predictor); ``scores``: probability of ``y = +1``.
    AC = mean of ``q`` on positives and ``1 - q`` on negatives: the exact expected accuracy.
    """
    y = check_vector("y", y)
    check_labels("y", y, (-1, 1), shown="labels in {-1, +1}",
                 remedy="for labels in {0, 1} pass 2 * y - 1")
    for name, v in (("s", s), ("q", q), ("losses", losses), ("scores", scores)):
        check_vector(name, v, length=len(y), length_of="y")
    q = np.asarray(q, dtype=np.float64)
    ac = float(np.mean(np.where(y == 1, q, 1.0 - q)))
    d = deo(y, s, losses=losses)
    fr = fairness_rate(d)
    out = {"acc": ac, "deo": d, "fr": fr, "hm": harmonic_mean(ac, max(fr, 0.0))}
    out.update(group_rates(y, s, q))
    out.update(rate_readings(y, s, q, scores))
    return out


def post_processed_losses(p_tilde) -> np.ndarray:
    """``-log p~`` with ``p~`` clipped to [1e-12, 1] (docs/decisions.md#fairvfl-metrics)."""
    return -np.log(np.clip(np.asarray(p_tilde, dtype=np.float64), 1e-12, 1.0))
