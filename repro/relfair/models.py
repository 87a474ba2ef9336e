"""The MLP of App. J.2, as plain tensors so that n client copies can be stacked.

"2-layer fully connected network with 50 hidden units" (App. J.2) is read as
``d_in -> 50 -> K``: Linear, ReLU, Dropout(p = 0.5), Linear (spec relfair §3.0, A3).

A model is a tuple ``(W1, b1, W2, b2)`` with shapes ``(d_in, h), (h,), (h, K), (K,)``
(``W`` stored input-major, i.e. the transpose of ``torch.nn.Linear.weight``); a stack of client
models has a leading client axis ``(n, ...)`` on every tensor. Dropout is applied through a mask
drawn outside (``repro.relfair.problem``) holding 0 or ``1/(1-p)`` (inverted dropout, as
``torch.nn.Dropout``), so the loop oracle and the vectorized path see the same randomness.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

__all__ = ["Params", "forward", "forward_stacked", "init_params", "stack", "weighted_sum"]

Params = tuple[torch.Tensor, ...]


def init_params(d_in: int, hidden: int, classes: int, generator: torch.Generator) -> Params:
    """PyTorch's default ``nn.Linear`` init: weights and biases ~ U(-1/sqrt(fan_in), +)."""
    out = []
    for fan_in, fan_out in ((d_in, hidden), (hidden, classes)):
        bound = 1.0 / math.sqrt(fan_in)
        W = (torch.rand(fan_in, fan_out, generator=generator) * 2 - 1) * bound
        b = (torch.rand(fan_out, generator=generator) * 2 - 1) * bound
        out += [W, b]
    return tuple(out)


def forward(params: Params, X: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Logits of one model for ``X`` of shape (B, d_in); ``mask`` (B, h) or None (eval mode)."""
    W1, b1, W2, b2 = params
    h = torch.relu(torch.addmm(b1, X, W1))
    if mask is not None:
        h = h * mask
    return torch.addmm(b2, h, W2)


def forward_stacked(params: Params, X: torch.Tensor,
                    mask: torch.Tensor | None = None) -> torch.Tensor:
    """Logits of n models, ``X`` (n, B, d_in) -> (n, B, K), by batched matrix products."""
    W1, b1, W2, b2 = params
    h = torch.relu(torch.baddbmm(b1.unsqueeze(1), X, W1))
    if mask is not None:
        h = h * mask
    return torch.baddbmm(b2.unsqueeze(1), h, W2)


def cross_entropy_per_client(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy per client: logits (n, B, K), y (n, B) -> (n,)."""
    n, B, K = logits.shape
    return F.cross_entropy(logits.reshape(n * B, K), y.reshape(n * B),
                           reduction="none").reshape(n, B).mean(dim=1)


def stack(params: Params, n: int) -> Params:
    """n copies of one model (the server broadcast), as independent tensors."""
    return tuple(p.unsqueeze(0).expand(n, *p.shape).clone() for p in params)


def weighted_sum(weights: torch.Tensor, stacked: Params) -> Params:
    """``sum_i weights_i x_i`` over the client axis (weights may be negative, e.g. lambda)."""
    return tuple(torch.tensordot(weights.to(p.dtype), p, dims=1) for p in stacked)
