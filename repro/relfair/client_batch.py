"""The client updates of all n clients at once, shared by the six methods
(docs/decisions.md#relfair-pseudocode lines 4-14, §3): :class:`ClientEngine` (its public name; the
module is named for what it batches, not to be confused with the experiment engine
``repro.engine``).

One per-client step is written twice: ``backend="loop"`` runs every client on its own model in a
Python loop (the equality oracle of the tests and the baseline of ``bench/relfair.py``);
``backend="vectorized"`` keeps the n client models as stacked tensors and runs all clients with
batched matrix products and hand-written backpropagation
(:func:`repro.relfair.models.stacked_loss_and_grads`), updating preallocated buffers in place.
Both take the same minibatch indices and dropout masks (``RoundDraws``) and agree to float32
rounding.

A method adds its own per-step term to the local gradient through ``local_term`` (a
:data:`LocalTerm`, in the style of a composable gradient transform): FedProx's proximal
gradient ``mu (u - theta)`` is :func:`proximal`, and :func:`sum_terms` composes several; the
local loop itself is never rewritten for a new method.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from repro.core.validation import check_choice
from repro.relfair.clients import ClientData, RoundDraws
from repro.relfair.models import (
    Params,
    StackedGradBuffers,
    as_params,
    cross_entropy_per_client,
    forward,
    shared_model_loss_and_grads,
    stack,
    stacked_loss_and_grads,
    stacked_sgd_step,
)

__all__ = ["BACKENDS", "ClientEngine", "LocalTerm", "proximal", "sum_terms"]

BACKENDS = ("loop", "vectorized")

LocalTerm = Callable[[Params, torch.Tensor], Params]
"""``term(u, rows) -> Params``: a per-step term added to the local gradient of the stacked
models ``u`` (k, ...) of the clients ``rows`` (k,) (their indices among the n clients: every
client, or those still stepping under a per-client schedule), computed at the models before the
step. It reads ``u`` and per-client data by ``rows``, and returns tensors shaped as ``u``."""


def proximal(anchor: Params, mu: float) -> LocalTerm:
    """The gradient of ``(mu/2) ||u_i - anchor||^2``: ``mu (u_i - anchor)`` for every client (the
    anchor is one model, the round's broadcast, shared by all rows).
    """
    def term(u: Params, rows: torch.Tensor) -> Params:
        return tuple(mu * (ui - a) for ui, a in zip(u, anchor, strict=True))
    return term


def sum_terms(*terms: LocalTerm) -> LocalTerm:
    """One term that is the sum of ``terms`` (each evaluated at the same models)."""
    def term(u: Params, rows: torch.Tensor) -> Params:
        parts = [t(u, rows) for t in terms]
        return tuple(sum(ps[1:], ps[0]) for ps in zip(*parts, strict=True))
    return term
# rows of a split evaluated at a time: a chunk's hidden activations (0.8 MB) stay in the
# core's L2, and the 784 x 50 product runs ~12 % faster than on chunks of 2048 (fewer, larger
# GEMMs); each row's numbers do not depend on the chunk (the products treat rows alone; the
# loop oracle evaluates each client's rows in one product)
_EVAL_ROWS = 4096


class ClientEngine:
    """Gradients, local SGD and evaluation for all clients, on one backend."""

    def __init__(self, data: ClientData, backend: str = "vectorized") -> None:
        check_choice("backend", backend, BACKENDS)
        self.data = data
        self.backend = backend
        self._owner = {s: data.owner(s) for s in ("train", "val")}
        self._scratch: StackedGradBuffers | None = None
        self._scratch_key: tuple | None = None

    # ----------------------------------------------------------------- stochastic gradients
    def gradients(self, params: Params, idx: torch.Tensor, mask: torch.Tensor | None
                  ) -> tuple[torch.Tensor, Params]:
        """Minibatch losses (n,) and gradients of every client at its own model.

        ``params`` is stacked (n, ...); ``idx`` (n, B); ``mask`` (n, B, h) or None. Train mode.
        """
        if self.backend == "vectorized":
            return self._stacked_gradients(params, idx, mask, None)
        X, y = self.data.X_train[idx], self.data.y_train[idx]
        with torch.enable_grad():
            losses, per_client = [], []
            for i in range(self.data.n):
                P = tuple(p[i].detach().requires_grad_(True) for p in params)
                logits = forward(P, X[i], None if mask is None else mask[i])
                loss = torch.nn.functional.cross_entropy(logits, y[i])
                per_client.append(torch.autograd.grad(loss, P))
                losses.append(loss.detach())
            grads = tuple(torch.stack([g[k] for g in per_client]) for k in range(len(params)))
            return torch.stack(losses), grads

    def _stacked_gradients(self, params: Params, idx: torch.Tensor, mask: torch.Tensor | None,
                           buffers: StackedGradBuffers | None, losses: bool = True
                           ) -> tuple[torch.Tensor | None, Params]:
        """Vectorized backend: one gather of the n minibatches (one index tensor), then
        :func:`stacked_loss_and_grads`; with ``buffers`` the gradients alias them; without
        ``losses`` the losses are not computed (None).
        """
        n, B = idx.shape
        if buffers is None:
            buffers = StackedGradBuffers(params, B)
        flat = idx.reshape(-1)
        X = torch.index_select(self.data.X_train, 0, flat, out=buffers.X.view(n * B, -1))
        y = self.data.y_train[flat].view(n, B)
        return stacked_loss_and_grads(params, X.view(n, B, -1), y, mask, buffers,
                                      losses=losses)

    def _sgd_step(self, u: Params, idx: torch.Tensor, mask: torch.Tensor | None,
                  buffers: StackedGradBuffers, lr: float, lr_corr: Params | None,
                  term: LocalTerm | None = None, rows: torch.Tensor | None = None) -> None:
        """One in-place local step of the stacked models ``u`` on the minibatches ``idx``
        (one gather of the rows, then :func:`stacked_sgd_step`); a local ``term`` of the
        clients ``rows`` is evaluated at ``u`` before the step and joins the correction.
        """
        if term is not None:
            extra = tuple(lr * t for t in term(u, rows))
            lr_corr = extra if lr_corr is None else tuple(
                c + e for c, e in zip(lr_corr, extra, strict=True))
        n, B = idx.shape
        X = torch.index_select(self.data.X_train, 0, idx.reshape(-1),
                               out=buffers.X.view(n * B, -1))
        y = self.data.y_train[idx.reshape(-1)].view(n, B)
        stacked_sgd_step(u, X.view(n, B, -1), y, mask, buffers, lr, lr_corr)

    def gradients_at(self, theta: Params, draws: RoundDraws, step: int
                     ) -> tuple[torch.Tensor, Params]:
        """Every client's minibatch loss and gradient at the broadcast model ``theta``
        (vectorized: :func:`shared_model_loss_and_grads`, the stacked path's numbers without
        stacking n copies of ``theta``).
        """
        mask = None if draws.mask is None else draws.mask[step]
        if self.backend != "vectorized":
            return self.gradients(stack(theta, self.data.n), draws.idx[step], mask)
        idx = draws.idx[step]
        n, B = idx.shape
        buffers = StackedGradBuffers(tuple(p.expand(n, *p.shape) for p in theta), B)
        X = torch.index_select(self.data.X_train, 0, idx.reshape(-1),
                               out=buffers.X.view(n * B, -1))
        y = self.data.y_train[idx.reshape(-1)].view(n, B)
        return shared_model_loss_and_grads(theta, X.view(n, B, -1), y, mask, buffers)

    # ----------------------------------------------------------------- local updates (Alg. 2)
    def local_sgd(self, theta: Params, lr: float, draws: RoundDraws, steps: range,
                  correction: Params | None = None, snapshot_at: int | None = None,
                  client_steps: np.ndarray | None = None, local_term: LocalTerm | None = None
                  ) -> tuple[Params, Params | None]:
        """``u_{i,j} = u_{i,j-1} - lr (grad f_i(u_{i,j-1}; xi_{i,j}) + correction_i
        + term_i(u_{i,j-1}))``.

        ``correction_i = c - c_i`` for the Scaffold family (Alg. 2 line 4), None for plain
        local SGD (FedAvg, DRFA). ``local_term`` (:data:`LocalTerm`, None: no term) is a
        method's own per-step term, e.g. FedProx's :func:`proximal`. ``steps`` are the draw
        indices used in order. With ``snapshot_at = t`` the second result is the models after
        ``t`` steps (DRFA), else None.
        ``client_steps`` (n,): client i takes only its first ``client_steps[i]`` of ``steps``
        and then keeps its model (the per-client epoch schedule of App. J.2's reading; its
        gradients at later steps are computed with the others and multiplied by 0).
        """
        active = None
        if client_steps is not None:
            client_steps = np.asarray(client_steps)
            if client_steps.shape != (self.data.n,) or client_steps.min() < 0:
                raise ValueError(f"client_steps must be {self.data.n} non-negative counts, "
                                 f"got shape {client_steps.shape}")
            active = torch.from_numpy(client_steps.astype(np.int64))
        if self.backend == "vectorized":
            return self._local_sgd_stacked(theta, lr, draws, steps, correction, snapshot_at,
                                           active, local_term)
        u = stack(theta, self.data.n)
        rows = torch.arange(self.data.n)
        snap = u if snapshot_at == 0 else None
        for j, s in enumerate(steps, start=1):
            _, g = self.gradients(u, draws.idx[s], None if draws.mask is None else draws.mask[s])
            if correction is not None:
                g = tuple(gi + ci for gi, ci in zip(g, correction, strict=True))
            if local_term is not None:
                g = tuple(gi + ti for gi, ti in zip(g, local_term(u, rows), strict=True))
            if active is not None:
                on = (active >= j).to(torch.float32)
                g = tuple(gi * on.view(-1, *([1] * (gi.dim() - 1))) for gi in g)
            u = tuple(ui - lr * gi for ui, gi in zip(u, g, strict=True))
            if snapshot_at == j:
                snap = u
        return u, snap

    def _buffers(self, params: Params, batch: int) -> StackedGradBuffers:
        """Scratch tensors of the local steps, kept across rounds (nothing returned aliases
        them: local_sgd returns the models, never the gradients).
        """
        key = (batch, *(tuple(p.shape) for p in params))
        if self._scratch_key != key:
            self._scratch, self._scratch_key = StackedGradBuffers(params, batch), key
        return self._scratch

    def _local_sgd_stacked(self, theta: Params, lr: float, draws: RoundDraws, steps: range,
                           correction: Params | None, snapshot_at: int | None,
                           active: torch.Tensor | None = None, term: LocalTerm | None = None
                           ) -> tuple[Params, Params | None]:
        """:meth:`local_sgd` on stacked models updated in place: the same operations in the
        same order as the loop (``g += correction; u -= lr * g``), no per-step allocation of
        model-sized tensors. With a per-client schedule (``active``) only the clients still
        stepping are computed (:meth:`_local_sgd_scheduled`).
        """
        if active is not None:
            return self._local_sgd_scheduled(theta, lr, draws, steps, correction, snapshot_at,
                                             active, term)
        u = stack(theta, self.data.n)
        rows = torch.arange(self.data.n)
        snap = tuple(p.clone() for p in u) if snapshot_at == 0 else None
        buffers = self._buffers(u, draws.idx.shape[-1])
        lr_corr = None if correction is None else tuple(lr * c for c in correction)
        for j, s in enumerate(steps, start=1):
            self._sgd_step(u, draws.idx[s], None if draws.mask is None else draws.mask[s],
                           buffers, lr, lr_corr, term, rows)
            if snapshot_at == j:
                snap = tuple(p.clone() for p in u)
        return u, snap

    def _local_sgd_scheduled(self, theta: Params, lr: float, draws: RoundDraws, steps: range,
                             correction: Params | None, snapshot_at: int | None,
                             active: torch.Tensor, term: LocalTerm | None = None
                             ) -> tuple[Params, Params | None]:
        """Client i takes the first ``active[i]`` steps, then keeps its model. The clients are
        ordered by decreasing step count, so those still stepping at step j are a prefix of
        k_j clients, computed on views of the stacked models and buffers: the work is
        sum_i active[i] client steps, not n max_i active[i] (about half on the MNIST split,
        where the largest client takes twice the mean count). Each client's arithmetic is that
        of the full-batch path (batched products treat each client alone).
        """
        n = self.data.n
        order = torch.argsort(active, descending=True, stable=True)
        inverse = torch.empty_like(order)
        inverse[order] = torch.arange(n)
        counts = active[order].numpy()
        u = stack(theta, n)  # every row is theta: already in client order `order`
        corr = None if correction is None else tuple(lr * c.index_select(0, order)
                                                     for c in correction)
        snap = tuple(p.clone() for p in u) if snapshot_at == 0 else None
        buffers = self._buffers(u, draws.idx.shape[-1])
        idx = draws.idx.index_select(1, order)  # every step's minibatches in client order
        for j, s in enumerate(steps, start=1):
            k = int(np.count_nonzero(counts >= j))
            if k:
                rows = order[:k]
                head = tuple(p[:k] for p in u)
                mask = None if draws.mask is None else draws.mask[s].index_select(0, rows)
                self._sgd_step(head, idx[s, :k], mask, buffers.head(k), lr,
                               None if corr is None else tuple(c[:k] for c in corr), term, rows)
            if snapshot_at == j:
                snap = tuple(p.clone() for p in u)
        u = tuple(p.index_select(0, inverse) for p in u)
        snap = None if snap is None else tuple(p.index_select(0, inverse) for p in snap)
        return u, snap

    # ----------------------------------------------------------------- evaluation (eval mode)
    def evaluate(self, theta: Params, split: str = "val") -> tuple[np.ndarray, np.ndarray]:
        """Per-client mean cross-entropy and accuracy of one model on a whole split
        (docs/decisions.md#relfair-client-loss).

        ``theta = (W1, b1, W2, b2)``, torch tensors or numpy arrays; ``split`` is ``"train"``
        or ``"val"``. Returns two float64 numpy arrays of one entry per client (torch stays
        inside the engine).
        """
        check_choice("split", split, ("train", "val"))
        theta = as_params("theta", theta, self.data.d_in, self.data.classes)
        losses, accs = self._evaluate(theta, split)
        return losses.numpy(), accs.numpy()

    @torch.no_grad()
    def _evaluate(self, theta: Params, split: str) -> tuple[torch.Tensor, torch.Tensor]:
        """The loop backend evaluates each client on its own rows (the oracle of the segment
        sums below); the vectorized one runs the model over the concatenated split in chunks
        and sums per client with ``index_add``.
        """
        X = self.data.X_train if split == "train" else self.data.X_val
        y = self.data.y_train if split == "train" else self.data.y_val
        n = self.data.n
        if self.backend == "loop":
            offs = self.data.train_offsets if split == "train" else self.data.val_offsets
            losses, accs = torch.empty(n, dtype=torch.float64), torch.empty(n, dtype=torch.float64)
            for i in range(n):
                logits = forward(theta, X[offs[i]:offs[i + 1]])
                yy = y[offs[i]:offs[i + 1]]
                ce = torch.nn.functional.cross_entropy(logits, yy, reduction="none")
                losses[i] = ce.double().mean()
                accs[i] = (logits.argmax(dim=1) == yy).double().mean()
            return losses, accs
        owner = self._owner[split]
        loss_sum = torch.zeros(n, dtype=torch.float64)
        correct = torch.zeros(n, dtype=torch.float64)
        for lo in range(0, X.shape[0], _EVAL_ROWS):
            hi = lo + _EVAL_ROWS
            logits = forward(theta, X[lo:hi])
            yy = y[lo:hi]
            ce = torch.nn.functional.cross_entropy(logits, yy, reduction="none")
            loss_sum.index_add_(0, owner[lo:hi], ce.double())
            correct.index_add_(0, owner[lo:hi], (logits.argmax(dim=1) == yy).double())
        counts = torch.bincount(owner, minlength=n).double()
        return loss_sum / counts, correct / counts

    @torch.no_grad()
    def minibatch_losses(self, theta: Params, idx: torch.Tensor) -> torch.Tensor:
        """Eval-mode minibatch losses of one model, one minibatch per client: idx (n, B)."""
        X, y = self.data.X_train[idx], self.data.y_train[idx]
        n, B, d = X.shape
        logits = forward(theta, X.reshape(n * B, d)).reshape(n, B, -1)
        return cross_entropy_per_client(logits, y)
