"""The MLP of App. J.2, as plain tensors so that n client copies can be stacked.

"2-layer fully connected network with 50 hidden units" (App. J.2) is read as
``d_in -> 50 -> K``: Linear, ReLU, Dropout(p = 0.5), Linear (docs/decisions.md#relfair-mlp).

A model is a tuple ``(W1, b1, W2, b2)`` with shapes ``(d_in, h), (h,), (h, K), (K,)``
(``W`` stored input-major, i.e. the transpose of ``torch.nn.Linear.weight``); a stack of client
models has a leading client axis ``(n, ...)`` on every tensor. Dropout is applied through a mask
drawn outside (``repro.relfair.clients``) holding 0 or ``1/(1-p)`` (inverted dropout, as
``torch.nn.Dropout``), so the loop oracle and the vectorized path see the same randomness.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

__all__ = [
    "Params",
    "StackedGradBuffers",
    "as_params",
    "forward",
    "forward_stacked",
    "init_params",
    "shared_model_loss_and_grads",
    "stack",
    "stacked_loss_and_grads",
    "stacked_sgd_step",
    "weighted_sum",
]

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


def as_params(name: str, theta, d_in: int, classes: int, hidden: int | None = None) -> Params:
    """``theta = (W1, b1, W2, b2)`` as float32 torch tensors, numpy arrays accepted; a
    ``ValueError`` naming ``name[k]`` unless the shapes are ``(d_in, h), (h,), (h, classes),
    (classes,)`` (``h = hidden``, or ``W1``'s second axis when not given).
    """
    if not isinstance(theta, tuple | list) or len(theta) != 4:
        got = f"{len(theta)} arrays" if isinstance(theta, tuple | list) else type(theta).__name__
        raise ValueError(f"{name} must be a tuple (W1, b1, W2, b2) of 4 arrays, got {got}")
    shapes = [tuple(np.shape(p)) for p in theta]
    h = hidden if hidden is not None else (shapes[0][1] if len(shapes[0]) == 2 else -1)
    for k, (shape, want) in enumerate(zip(shapes, ((d_in, h), (h,), (h, classes), (classes,)),
                                          strict=True)):
        if shape != want:
            raise ValueError(f"{name}[{k}] must have shape {want} (W1, b1, W2, b2 for "
                             f"{d_in} features, {h} hidden units, {classes} classes), "
                             f"got {shape}")
    return tuple(p if isinstance(p, torch.Tensor) and p.dtype == torch.float32
                 else torch.as_tensor(np.asarray(p), dtype=torch.float32) for p in theta)


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


class StackedGradBuffers:
    """Preallocated outputs of :func:`stacked_loss_and_grads` for n clients, batch B.

    A round of local SGD reuses them for every step: model-sized tensors of 100 clients are
    16 MB each (784 x 50 x 100 floats), and fresh allocations of that size are zero-filled
    pages from the OS on every step.
    """

    def __init__(self, params: Params, batch: int) -> None:
        W1, b1, W2, b2 = params
        n, d_in, h = W1.shape
        K = W2.shape[-1]
        self.grads: Params = tuple(torch.empty_like(p) for p in params)
        self.X = torch.empty(n, batch, d_in, dtype=W1.dtype)
        self.Z = torch.empty(n, batch, h, dtype=W1.dtype)
        self.dA = torch.empty(n, batch, h, dtype=W1.dtype)
        self.O = torch.empty(n, batch, K, dtype=W1.dtype)
        self.OT = torch.empty(n, K, batch, dtype=W1.dtype)

    def head(self, k: int) -> StackedGradBuffers:
        """The buffers of the first ``k`` clients: contiguous views, no copy."""
        view = object.__new__(StackedGradBuffers)
        view.grads = tuple(g[:k] for g in self.grads)
        view.X, view.Z, view.dA, view.O = self.X[:k], self.Z[:k], self.dA[:k], self.O[:k]
        view.OT = self.OT[:k]
        return view


def stacked_loss_and_grads(params: Params, X: torch.Tensor, y: torch.Tensor,
                           mask: torch.Tensor | None, buffers: StackedGradBuffers | None = None,
                           *, losses: bool = True) -> tuple[torch.Tensor | None, Params]:
    """Mean cross-entropy of each of n stacked models on its own minibatch, and its gradient,
    by hand-written backpropagation with batched matrix products (no autograd graph).

    Forward (train mode): ``Z = b1 + X W1``, ``A = relu(Z) * M``, ``O = b2 + A W2``,
    ``loss_i = mean_b CE(O_ib, y_ib)``. Backward, per client::

        dO = (softmax(O) - onehot(y)) / B        dW2 = A^T dO       db2 = sum_b dO
        dZ = (dO W2^T) * M * 1[A > 0]            dW1 = X^T dZ       db1 = sum_b dZ

    (``1[A > 0]`` equals ``1[Z > 0]`` wherever ``M != 0``, and ``dZ`` is 0 where ``M == 0``.)
    The operations are the kernels autograd runs for ``forward_stacked`` +
    ``cross_entropy_per_client`` in the same order, so the result equals the autograd gradient
    bit for bit (a test checks it with ``torch.equal``; records did not change).
    ``X`` (n, B, d_in), ``y`` (n, B), ``mask`` (n, B, h) or None. With ``buffers`` the outputs
    are written into (and alias) the preallocated tensors. ``losses=False`` skips the losses
    (None; local SGD reads only the gradients).
    """
    W1, b1, W2, b2 = params
    n, B, _ = X.shape
    if buffers is None:
        buffers = StackedGradBuffers(params, B)
    gW1, gb1, gW2, gb2 = buffers.grads
    A = torch.baddbmm(b1.unsqueeze(1), X, W1, out=buffers.Z).relu_()
    if mask is not None:
        A.mul_(mask)
    O = torch.baddbmm(b2.unsqueeze(1), A, W2, out=buffers.O)
    logp = torch.log_softmax(O, dim=-1)
    loss = -logp.gather(-1, y.unsqueeze(-1)).squeeze(-1).mean(dim=1) if losses else None
    # d loss_i / d log p = -1/B at the label; aten's log_softmax backward kernel turns it into
    # softmax/B - onehot/B exactly as autograd does (same rounding)
    dlogp = torch.zeros_like(O).scatter_(-1, y.unsqueeze(-1), -1.0 / B)
    dO = torch._log_softmax_backward_data(dlogp, logp, -1, O.dtype)
    torch.bmm(A.transpose(1, 2), dO, out=gW2)
    torch.sum(dO, dim=1, out=gb2)
    dA = torch.bmm(dO, W2.transpose(1, 2), out=buffers.dA)
    if mask is not None:
        dA.mul_(mask)
    # dA where A > 0, else 0: the values of ``dA.masked_fill_(A <= 0, 0.0)`` (a NaN in A keeps
    # dA in both) in one elementwise pass, in place (the kernel of relu's backward; the
    # boolean-mask fill took ~10x as long)
    torch.ops.aten.threshold_backward.grad_input(dA, A, 0, grad_input=dA)
    torch.bmm(X.transpose(1, 2), dA, out=gW1)
    torch.sum(dA, dim=1, out=gb1)
    return loss, buffers.grads


def shared_model_loss_and_grads(theta: Params, X: torch.Tensor, y: torch.Tensor,
                                mask: torch.Tensor | None, buffers: StackedGradBuffers,
                                ) -> tuple[torch.Tensor, Params]:
    """:func:`stacked_loss_and_grads` of n copies of ONE model ``theta`` (the broadcast model
    every client evaluates at): the products with the model's weights (``X W1``, ``A W2``,
    ``dO W2ᵀ``) are one matrix product over all n·B rows instead of n batched products of n
    stacked copies, and no copy of the model is stacked. The numbers are those of the stacked
    path bit for bit (each row's dot products are the same; a test checks it); the
    per-client sums (``Aᵀ dO``, ``Xᵀ dZ`` and the bias sums) stay batched.
    """
    W1, b1, W2, b2 = theta
    n, B, d = X.shape
    h, K = W1.shape[1], W2.shape[1]
    gW1, gb1, gW2, gb2 = buffers.grads
    A = torch.addmm(b1, X.view(n * B, d), W1, out=buffers.Z.view(n * B, h)).relu_()
    if mask is not None:
        A.mul_(mask.view(n * B, h))
    O = torch.addmm(b2, A, W2, out=buffers.O.view(n * B, K)).view(n, B, K)
    logp = torch.log_softmax(O, dim=-1)
    loss = -logp.gather(-1, y.unsqueeze(-1)).squeeze(-1).mean(dim=1)
    dlogp = torch.zeros_like(O).scatter_(-1, y.unsqueeze(-1), -1.0 / B)
    dO = torch._log_softmax_backward_data(dlogp, logp, -1, O.dtype)
    A = A.view(n, B, h)
    torch.bmm(A.transpose(1, 2), dO, out=gW2)
    torch.sum(dO, dim=1, out=gb2)
    dA = torch.mm(dO.view(n * B, K), W2.T, out=buffers.dA.view(n * B, h)).view(n, B, h)
    if mask is not None:
        dA.mul_(mask)
    torch.ops.aten.threshold_backward.grad_input(dA, A, 0, grad_input=dA)
    torch.bmm(X.transpose(1, 2), dA, out=gW1)
    torch.sum(dA, dim=1, out=gb1)
    return loss, buffers.grads


def stacked_sgd_step(params: Params, X: torch.Tensor, y: torch.Tensor,
                     mask: torch.Tensor | None, buffers: StackedGradBuffers, lr: float,
                     lr_correction: Params | None = None) -> None:
    """One local SGD step of n stacked models, in place:
    ``u <- u - lr_correction - lr grad f_i(u; X_i, y_i)`` (``lr_correction = lr c_i`` or None).

    The backpropagation of :func:`stacked_loss_and_grads`, with every weight update fused into
    the product that makes its gradient (``W <- W - lr Aᵀ dO`` is one ``baddbmm_`` with
    ``alpha = -lr``, a bias ``b <- b - lr sum_b dO`` one ``sub_``): no gradient tensor is
    written and read back, about half the memory traffic of the unfused step on the 784 x 50
    first layer. ``dA = dO W2ᵀ`` is formed before W2 moves. The rounding differs from
    ``u - lr (g + c)`` (two roundings fewer per entry); the tests hold both to the loop oracle
    within the float32 bound of docs/design.md#tolerances-of-the-vectorized-paths.
    """
    W1, b1, W2, b2 = params
    B = X.shape[1]
    A = torch.baddbmm(b1.unsqueeze(1), X, W1, out=buffers.Z).relu_()
    if mask is not None:
        A.mul_(mask)
    # the logits class-major, (n, K, B): the softmax and its backward then reduce over a
    # non-innermost axis of K = 10 entries, a kernel vectorized over the batch (~15x as fast
    # as the reduction over an innermost axis of 10); the values differ from the batch-major
    # ones only in the order of the K-term sums (within step_bound's (K + 3) u)
    OT = torch.baddbmm(b2.unsqueeze(2), W2.transpose(1, 2), A.transpose(1, 2), out=buffers.OT)
    logp = torch.log_softmax(OT, dim=1)
    dlogp = torch.zeros_like(OT).scatter_(1, y.unsqueeze(1), -1.0 / B)
    dOT = torch._log_softmax_backward_data(dlogp, logp, 1, OT.dtype)
    dO = dOT.transpose(1, 2)
    dA = torch.bmm(dO, W2.transpose(1, 2), out=buffers.dA)   # with W2 before its update
    if lr_correction is not None:
        for u, c in zip(params, lr_correction, strict=True):
            u.sub_(c)
    W2.baddbmm_(A.transpose(1, 2), dO, alpha=-lr)
    b2.sub_(dOT.sum(dim=2), alpha=lr)
    if mask is not None:
        dA.mul_(mask)
    torch.ops.aten.threshold_backward.grad_input(dA, A, 0, grad_input=dA)
    W1.baddbmm_(X.transpose(1, 2), dA, alpha=-lr)
    b1.sub_(dA.sum(dim=1), alpha=lr)


def cross_entropy_per_client(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy per client: logits (n, B, K), y (n, B) -> (n,)."""
    n, B, K = logits.shape
    return F.cross_entropy(logits.reshape(n * B, K), y.reshape(n * B),
                           reduction="none").reshape(n, B).mean(dim=1)


def stack(params: Params, n: int) -> Params:
    """N copies of one model (the server broadcast), as independent tensors."""
    return tuple(p.unsqueeze(0).expand(n, *p.shape).clone() for p in params)


def weighted_sum(weights: torch.Tensor, stacked: Params) -> Params:
    """``sum_i weights_i x_i`` over the client axis (weights may be negative, e.g. lambda)."""
    return tuple(torch.tensordot(weights.to(p.dtype), p, dims=1) for p in stacked)
