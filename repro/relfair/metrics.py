"""The client-level metrics of Table 1 and Fig. 4 of paper 002 (docs/decisions.md#relfair-metrics).

Every metric is computed from one number per client (a validation loss or accuracy):
:func:`client_metrics` gives Table 1's columns, :func:`transformed_lorenz` Fig. 4's curve.
"""

from __future__ import annotations

import math

import numpy as np

from repro.core.metrics import gini, lorenz_curve, relative_fairness_ratio

__all__ = ["client_metrics", "transformed_lorenz"]


def client_metrics(losses: np.ndarray, accs: np.ndarray, alpha: float = 0.2) -> dict:
    """Table 1 columns (docs/decisions.md#relfair-metrics): unweighted client mean accuracy, mean
    accuracy of the floor(alpha n) worst / best clients, R_{A,B} with A = B = Delta_alpha, Gini of
    losses.

    ``alpha = 0.2`` is App. J.2's (the bottom / top 20 % of clients).
    """
    n = len(accs)
    k = max(1, int(math.floor(alpha * n + 1e-12)))
    acc_sorted = np.sort(accs)
    return {
        "acc_all": float(np.mean(accs)),
        "acc_worst20": float(acc_sorted[:k].mean()),
        "acc_best20": float(acc_sorted[-k:].mean()),
        "R_AB": float(relative_fairness_ratio(losses, alpha)),
        "gini": float(gini(losses)),
        "loss_all": float(np.mean(losses)),
        "loss_worst20": float(np.sort(losses)[-k:].mean()),
    }


def transformed_lorenz(losses) -> tuple[np.ndarray, np.ndarray]:
    """Fig. 4's curve l'(x) = l(x) - x/2 through (k/n, L_k - k/(2n))
    (docs/decisions.md#relfair-metrics).
    """
    x, L = lorenz_curve(losses)
    return x, L - x / 2
