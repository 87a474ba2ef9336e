"""Test-split metrics of spec ``fairvfl.md`` §6 (fractions; experiments print percent)."""

from __future__ import annotations

import numpy as np

from repro.core.metrics import accuracy, deo, dfn, dfp, fairness_rate, harmonic_mean


def metrics_from_scores(y, s, z) -> dict[str, float]:
    """Metrics of a scored model: ``yhat = +1 iff z >= 0``, DEO on ``log(1 + e^{-z})``."""
    z = np.asarray(z, dtype=np.float64)
    return metrics_from_decisions(y, s, np.where(z >= 0, 1, -1), np.logaddexp(0.0, -z))


def metrics_from_decisions(y, s, yhat, losses) -> dict[str, float]:
    """AC, DEO (Definition 1 on the test split), FR = 1 - DEO, HM, DFP, DFN ([J] §5.2)."""
    ac = accuracy(y, yhat)
    d = deo(y, s, losses=losses)
    fr = fairness_rate(d)
    return {"acc": ac, "deo": d, "fr": fr, "hm": harmonic_mean(ac, max(fr, 0.0)),
            "dfp": dfp(y, yhat, s), "dfn": dfn(y, yhat, s)}


def post_processed_losses(p_tilde) -> np.ndarray:
    """``-log p~`` with ``p~`` clipped to [1e-12, 1] (§6)."""
    return -np.log(np.clip(np.asarray(p_tilde, dtype=np.float64), 1e-12, 1.0))
