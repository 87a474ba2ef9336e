"""The demo's cells (apart from :mod:`repro.demo.experiments` so that a cell's code identity, its
static import closure, holds the computation and not the renderer).
"""

from __future__ import annotations

import numpy as np

from repro.demo.logreg import LogRegConfig, fit, logistic_loss_grad, predict
from repro.engine.experiment import CellResult, RunContext

__all__ = ["cells", "run_cell"]


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
