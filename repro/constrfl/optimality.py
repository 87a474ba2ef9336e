"""Definition 1: the (eps1, eps2)-optimality residuals of a pair (w, mu), h ≡ 0
(docs/decisions.md#constrfl-problem).

    stationarity   = ||grad f(w) + grad c(w) mu||_inf
    feasibility    = max_j e_j,  e_j = max(c_j(w), 0) if mu_j = 0,  |c_j(w)| if mu_j > 0
                     (equality constraints: |c_j(w)|)
"""

from __future__ import annotations

import numpy as np

from repro.constrfl.problem import Problem

__all__ = ["kkt_residuals"]


def kkt_residuals(problem: Problem, w: np.ndarray, mu0: np.ndarray,
                  mus: list[np.ndarray]) -> tuple[float, float]:
    """``(dist_inf(0, grad f + grad c mu), dist_inf(c(w), N_{R^m_+}(mu)))``."""
    w = problem.check_w("w", w)
    g = np.zeros_like(w)
    parts = []
    for blk, mu in [(problem.server, mu0), *zip(problem.clients, mus, strict=True)]:
        W = np.broadcast_to(w, (blk.size, w.size))
        g += blk.grad_f(W).sum(axis=0) + np.einsum("bkd,bk->d", blk.jac_c(W), mu)
        c = blk.c(W)
        if blk.equality:
            e = np.abs(c)
        else:
            e = np.where(mu > 0, np.abs(c), np.maximum(c, 0.0))
        parts.append(e.ravel())
    feas = float(np.max(np.concatenate(parts), initial=0.0))
    return float(np.max(np.abs(g))), feas
