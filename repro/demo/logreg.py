"""The demo's model and cells: centralized L2-regularised logistic regression on LIBSVM a8a,
trained with L-BFGS (the experiment is :mod:`repro.demo.experiments`).

Apart from the experiment module so that a cell's code identity (its static import closure,
:mod:`repro.engine.code_identity`) holds the computation and not the renderer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from repro.core.validation import check_range
from repro.engine.experiment import CellResult, RunContext

__all__ = ["MAJORITY_TEST_ACCURACY", "LogRegConfig", "cells", "fit", "logistic_loss_grad",
           "predict", "run_cell"]

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
        ctx: RunContext | None = None):
    """L-BFGS (scipy) from ``w0``; each iteration's loss goes to ``ctx.log_round``."""
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


def run_cell(config: dict, ctx: RunContext) -> CellResult:
    from repro.core.data.libsvm import load_a8a

    cfg = LogRegConfig(**{k: v for k, v in config.items() if k != "seed"})
    train, test = load_a8a("train"), load_a8a("test")
    X, y = train.X, train.y
    if cfg.train_subsample is not None:
        idx = ctx.rng("subsample").choice(len(y), size=cfg.train_subsample, replace=False)
        X, y = X[np.sort(idx)], y[np.sort(idx)]
    w0 = ctx.rng("init").normal(scale=0.01, size=X.shape[1] + 1)
    res = fit(X, y, cfg, w0, ctx)
    _, grad = logistic_loss_grad(res.x, X, y, cfg.l2)
    return CellResult(metrics={
        "test_accuracy": float(np.mean(predict(res.x, test.X) == test.y)),
        "train_accuracy": float(np.mean(predict(res.x, X) == y)),
        "final_loss": float(res.fun),
        "grad_norm": float(np.linalg.norm(grad)),
        "iterations": float(res.nit),
    })


def cells(scale: str) -> list[dict]:
    if scale == "smoke":
        return [{"seed": s, "l2": 1e-4, "max_iter": 40, "train_subsample": 4000}
                for s in range(3)]
    return [{"seed": s, "l2": 1e-4, "max_iter": 500} for s in range(3)]
