"""Test-split metrics of spec ``fairvfl.md`` §6 (fractions; experiments print percent)."""

from __future__ import annotations

import numpy as np

from repro.core.metrics import accuracy, deo, dfn, dfp, fairness_rate, harmonic_mean
from repro.core.validation import check_labels, check_vector


def metrics_from_scores(y, s, z) -> dict[str, float]:
    """Metrics of a scored model: ``yhat = +1 iff z >= 0``, DEO on ``log(1 + e^{-z})``."""
    z = check_vector("z", z, length=len(check_vector("y", y)), length_of="y").astype(
        np.float64)
    return metrics_from_decisions(y, s, np.where(z >= 0, 1, -1), np.logaddexp(0.0, -z))


def metrics_from_decisions(y, s, yhat, losses) -> dict[str, float]:
    """AC, DEO (Definition 1 on the test split), FR = 1 - DEO, HM, DFP, DFN ([J] §5.2).

    ``y``, ``yhat`` in {-1, +1}, ``s`` (True = group a) and ``losses``: one per row."""
    y = check_vector("y", y)
    check_labels("y", y, (-1, 1), shown="labels in {-1, +1}",
                 remedy="for labels in {0, 1} pass 2 * y - 1")
    for name, v in (("s", s), ("yhat", yhat), ("losses", losses)):
        check_vector(name, v, length=len(y), length_of="y")
    ac = accuracy(y, yhat)
    d = deo(y, s, losses=losses)
    fr = fairness_rate(d)
    return {"acc": ac, "deo": d, "fr": fr, "hm": harmonic_mean(ac, max(fr, 0.0)),
            "dfp": dfp(y, yhat, s), "dfn": dfn(y, yhat, s)}


def post_processed_losses(p_tilde) -> np.ndarray:
    """``-log p~`` with ``p~`` clipped to [1e-12, 1] (§6)."""
    return -np.log(np.clip(np.asarray(p_tilde, dtype=np.float64), 1e-12, 1.0))
