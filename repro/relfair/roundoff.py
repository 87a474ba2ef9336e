"""The round-off bound of one local SGD step of the stacked client models: the tolerance of
the fused step (:func:`repro.relfair.models.stacked_sgd_step`) against the per-client
autograd step of the loop oracle (docs/design.md#tolerances-of-the-vectorized-paths).
"""

from __future__ import annotations

import torch

from repro.core.roundoff import gamma, unit_roundoff
from repro.relfair.models import Params

__all__ = ["step_bound"]


def step_bound(u: Params, X: torch.Tensor, y: torch.Tensor, mask: torch.Tensor | None,
               lr: float, correction: Params | None) -> list[torch.Tensor]:
    """Entrywise bound on ``|fused - oracle|`` of one local step from the stacked models ``u``
    (docs/design.md#tolerances-of-the-vectorized-paths): a first-order forward error analysis
    in float32 (u = 2^-24, gamma_k of repro.core.roundoff), evaluated on the exact (float64)
    magnitudes of this step's operands, twice the one-path bound (both sides round)::

        Z = b1 + X W1        e_Z = gamma_{d+1} (|b1| + |X||W1|)
        A = relu(Z) M        e_A = |M| e_Z
        O = b2 + A W2        e_O = gamma_{h+1} (|b2| + |A||W2|) + e_A |W2|
        dO = (p - 1_y) / B   e_dO = (max_k e_O / 2 + (K + 3) u) / B   (softmax: inf-norm
                                                                       Lipschitz 1/2)
        dA = dO W2ᵀ M 1[Z>0] e_dA = (gamma_K |dO||W2|ᵀ + e_dO |W2|ᵀ) |M|, and |dO||W2|ᵀ|M|
                             in full where |Z| <= e_Z (the relu's kink may fall either side)
        W1' = W1 - lr c - lr Xᵀ dA:
            e_W1 = gamma_3 (|W1| + lr |c| + lr |X|ᵀ|dA|) + lr (gamma_B |X|ᵀ|dA| + |X|ᵀ e_dA)

    and likewise for b1 (sums over the batch), W2 (``Aᵀ dO``) and b2.
    """
    f64 = [p.double() for p in u]
    W1, b1, W2, b2 = f64
    n, B, d = X.shape
    K, h = W2.shape[-1], W2.shape[-2]
    X, M = X.double(), (torch.ones(n, B, h, dtype=torch.float64) if mask is None
                        else mask.double())
    g = {k: gamma(k, "float32") for k in (1, 3, B, K, d + 1, h + 1)}
    ua = unit_roundoff("float32")
    Xa = X.abs()
    Z = b1[:, None] + X @ W1
    e_Z = g[d + 1] * (b1.abs()[:, None] + Xa @ W1.abs())
    A = torch.relu(Z) * M
    e_A = M * e_Z
    O = b2[:, None] + A @ W2
    e_O = g[h + 1] * (b2.abs()[:, None] + A.abs() @ W2.abs()) + e_A @ W2.abs()
    p = torch.softmax(O, dim=-1)
    dO = (p - torch.nn.functional.one_hot(y, K).double()) / B
    e_dO = (0.5 * e_O.amax(dim=-1, keepdim=True) + (K + 3) * ua) / B * torch.ones_like(dO)
    full = dO.abs() @ W2.abs().transpose(1, 2) * M
    dA = (dO @ W2.transpose(1, 2)) * M * (Z > 0)
    e_dA = (g[K] * full + e_dO @ W2.abs().transpose(1, 2) * M) * (Z > 0) + full * (
        Z.abs() <= e_Z)
    c = [torch.zeros_like(t) if correction is None else correction[k].double().abs()
         for k, t in enumerate(f64)]
    prods = [(Xa.transpose(1, 2) @ dA.abs(), Xa.transpose(1, 2) @ e_dA),
             (dA.abs().sum(1), e_dA.sum(1)),
             (A.abs().transpose(1, 2) @ dO.abs(),
              A.abs().transpose(1, 2) @ e_dO + e_A.transpose(1, 2) @ dO.abs()),
             (dO.abs().sum(1), e_dO.sum(1))]
    out = []
    for t, ck, (P, e_P) in zip(f64, c, prods, strict=True):
        out.append(2 * (g[3] * (t.abs() + lr * ck + lr * P) + lr * (g[B] * P + e_P)))
    return out
