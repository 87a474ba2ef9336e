"""The demo's model: centralized L2-regularised logistic regression on LIBSVM a8a, trained with
L-BFGS (the experiment is :mod:`repro.demo.experiments`, its cells
:mod:`repro.demo.experiments._cells`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from repro.core.validation import check_range

__all__ = ["MAJORITY_TEST_ACCURACY", "LogRegConfig", "fit", "logistic_loss_grad", "predict"]

# a8a.t class counts (shared/data/MANIFEST.md): always predicting -1 scores 7,530 / 9,865.
MAJORITY_TEST_ACCURACY = 7530 / 9865


@dataclass(frozen=True)
class LogRegConfig:
    """Hyperparameters of the demo model."""

    l2: float = 1e-4
    max_iter: int = 500
    gtol: float = 1e-8
    train_subsample: int | None = None

    def __post_init__(self) -> None:
        check_range("l2", self.l2, low=0)
        check_range("max_iter", self.max_iter, low=1)
        check_range("gtol", self.gtol, low=0, low_open=True)
        if self.train_subsample is not None:
            check_range("train_subsample", self.train_subsample, low=2)


def logistic_loss_grad(w: np.ndarray, X: np.ndarray, y: np.ndarray,
                       l2: float) -> tuple[float, np.ndarray]:
    """Loss and gradient; ``w[-1]`` is the unregularised bias. Vectorised over samples."""
    margins = y * (X @ w[:-1] + w[-1])
    loss = np.logaddexp(0.0, -margins).mean() + 0.5 * l2 * w[:-1] @ w[:-1]
    coef = -y * expit(-margins) / len(y)
    grad = np.empty_like(w)
    grad[:-1] = X.T @ coef + l2 * w[:-1]
    grad[-1] = coef.sum()
    return float(loss), grad


def fit(X: np.ndarray, y: np.ndarray, cfg: LogRegConfig, w0: np.ndarray,
        ctx=None):
    """L-BFGS (scipy) from ``w0``; each iteration's loss goes to ``ctx.log_round`` (``ctx``: a
    :class:`repro.engine.experiment.RunContext`, or None).
    """
    it = [0]

    def callback(intermediate_result):
        it[0] += 1
        if ctx is not None:
            ctx.log_round(it[0], train_loss=intermediate_result.fun)

    return minimize(logistic_loss_grad, w0, args=(X, y, cfg.l2), jac=True, method="L-BFGS-B",
                    callback=callback,
                    options={"maxiter": cfg.max_iter, "gtol": cfg.gtol, "ftol": 0.0})


def predict(w: np.ndarray, X: np.ndarray) -> np.ndarray:
    return np.where(X @ w[:-1] + w[-1] >= 0, 1.0, -1.0)
