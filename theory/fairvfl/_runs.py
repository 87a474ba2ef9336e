"""What the Fair VFL checks of Lemmas 1-3 and Assumption 2 share (no check): the papers' id,
the linear-model algorithm on a synthetic instance, the Lagrangian [C](5) = [J](6) written here,
random starts (|D| > eps, so the multipliers move) and the audit's tolerance.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse

from repro.fairvfl.fair_vfl import FairVFL, FairVFLConfig
from repro.fairvfl.models import LinearBlock
from repro.fairvfl.problem import VFLProblem
from theory.fairvfl.constants import groups_masks

__all__ = ["CLOSED", "PAPER", "ROUND_TOL", "f_lagrangian", "lm", "rel_margin", "start"]

PAPER = "000/001 fairvfl"
CLOSED = {"solver": "closed form (inequality evaluated on the iterates)"}
ROUND_TOL = 1e-10  # the round written here against the package's, relative (float64)


def rel_margin(rhs: float, lhs: float) -> float:
    scale = max(abs(rhs), abs(lhs), 1e-300)
    return (rhs - lhs) / scale


def lm(X, y, s, blocks, init=None, sparse=False, **kw):
    """The package's Fair VFL on linear party blocks (CSR where ``sparse``); mode random's
    Q_k^(t) come from numpy.random.default_rng(Q).
    """
    cols = [scipy.sparse.csr_matrix(X[:, b]) if sparse else X[:, b] for b in blocks]
    return FairVFL(VFLProblem([LinearBlock(c) for c in cols], y, s), FairVFLConfig(**kw),
                   rng=kw.get("Q", 1), init=init)


def f_lagrangian(X, y, s, theta, lam, eps: float, mu: float) -> float:
    """[C](5) = [J](6): ``f = L + lam1 (D - eps) - lam2 (D + eps)``, from the data and the
    parties' concatenated theta (computed here, not by the package).
    """
    z = X @ theta
    in_a, in_b = groups_masks(y, s)
    loss = float(np.mean(np.logaddexp(0.0, -y * z)) + 0.5 * mu * theta @ theta)
    d = float(np.logaddexp(0.0, -z[in_a]).mean() - np.logaddexp(0.0, -z[in_b]).mean())
    return loss + lam[0] * (d - eps) - lam[1] * (d + eps)


def start(rng, blocks, scale=2.0):
    """A random start theta^0 ~ scale N(0, I): |D(theta^0)| > eps, so the multipliers move."""
    return [scale * rng.standard_normal(len(b)) for b in blocks]
