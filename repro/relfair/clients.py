"""Clients' data and the randomness of one round (docs/decisions.md#relfair-setting,
docs/decisions.md#relfair-partition, docs/decisions.md#relfair-cost).

All clients' samples live in one concatenated tensor per split; client ``i`` owns rows
``offsets[i]:offsets[i+1]``. A round's randomness -- minibatch indices ``(S, n, B)`` and dropout
masks ``(S, n, B, h)`` for its ``S`` gradient evaluations -- is drawn here, once, from the run's
``torch.Generator``, and handed to both client-update backends, so the loop oracle and the
vectorized path consume identical randomness.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from repro.core.validation import (
    check_class_labels,
    check_matrix,
    check_range,
    check_vector,
)

__all__ = ["ClientData", "RoundDraws", "draw_round", "split_clients"]

_KEY_CHUNK = 8  # steps of minibatch keys drawn at a time by draw_round


@dataclass(frozen=True)
class ClientData:
    """Per-client train and validation samples (float32 features, int64 labels)."""

    X_train: torch.Tensor
    y_train: torch.Tensor
    train_offsets: np.ndarray
    X_val: torch.Tensor
    y_val: torch.Tensor
    val_offsets: np.ndarray
    classes: int

    @property
    def n(self) -> int:
        return len(self.train_offsets) - 1

    @property
    def train_sizes(self) -> np.ndarray:
        return np.diff(self.train_offsets)

    @property
    def val_sizes(self) -> np.ndarray:
        return np.diff(self.val_offsets)

    @property
    def d_in(self) -> int:
        return int(self.X_train.shape[1])

    def owner(self, split: str) -> torch.Tensor:
        """Client id of every row of a split (for segment means)."""
        sizes = self.train_sizes if split == "train" else self.val_sizes
        return torch.from_numpy(np.repeat(np.arange(self.n), sizes))


def split_clients(X: np.ndarray, y: np.ndarray, parts: list[np.ndarray], rng: np.random.Generator,
                  *, train_fraction: float = 0.8, classes: int = 10) -> ClientData:
    """Each client's samples permuted; the first ``floor(0.8 N_i)`` train, the rest validation
    (paper §7 "80:20"; docs/decisions.md#relfair-partition).

    ``X`` (rows, features) and ``y`` (integer labels in ``0..classes-1``) are numpy arrays;
    ``parts[i]`` holds the rows of client ``i`` (no row in two clients). Bad inputs raise
    ``ValueError`` naming the argument.
    """
    check_range("train_fraction", train_fraction, low=0, high=1, low_open=True, high_open=True)
    X = check_matrix("X", X)
    y = check_vector("y", y, length=X.shape[0], length_of="X")
    check_class_labels("y", y, classes)
    _check_parts(parts, X.shape[0])
    tr, va = [], []
    for idx in parts:
        perm = rng.permutation(idx)
        k = int(np.floor(train_fraction * len(perm)))
        if k < 1 or k == len(perm):
            raise ValueError(f"a client with {len(perm)} samples cannot be split 80:20")
        tr.append(perm[:k])
        va.append(perm[k:])
    tr_idx, va_idx = np.concatenate(tr), np.concatenate(va)
    offs = [np.concatenate([[0], np.cumsum([len(p) for p in ps])]) for ps in (tr, va)]
    Xf = np.asarray(X, dtype=np.float32)
    return ClientData(
        X_train=torch.from_numpy(np.ascontiguousarray(Xf[tr_idx])),
        y_train=torch.from_numpy(np.asarray(y)[tr_idx].astype(np.int64)),
        train_offsets=offs[0],
        X_val=torch.from_numpy(np.ascontiguousarray(Xf[va_idx])),
        y_val=torch.from_numpy(np.asarray(y)[va_idx].astype(np.int64)),
        val_offsets=offs[1], classes=classes)


def _check_parts(parts: list[np.ndarray], rows: int) -> None:
    """Every part holds row indices of ``X``; no row belongs to two clients."""
    if len(parts) == 0:
        raise ValueError("parts must hold at least one client's row indices")
    owner = np.full(rows, -1)
    for i, idx in enumerate(parts):
        idx = check_vector(f"parts[{i}]", idx)
        if idx.size and idx.dtype.kind not in "iu":
            raise ValueError(f"parts[{i}] must hold integer row indices, got dtype {idx.dtype}")
        out = idx[(idx < 0) | (idx >= rows)]
        if out.size:
            raise ValueError(f"parts[{i}] holds row {int(out[0])}, X has {rows} rows")
        values, counts = np.unique(idx, return_counts=True)
        if (counts > 1).any():
            raise ValueError(f"parts[{i}] repeats row {int(values[counts > 1][0])}")
        taken = owner[idx] >= 0
        if taken.any():
            r = int(idx[taken][0])
            raise ValueError(f"parts[{i}] repeats row {r} of parts[{int(owner[r])}]; "
                             "a row belongs to one client")
        owner[idx] = i


@dataclass(frozen=True)
class RoundDraws:
    """Global row indices ``idx`` (S, n, B) into the train split and dropout masks
    ``mask`` (S, n, B, h) with entries 0 or 1/(1-p); ``mask`` is None without dropout.
    """

    idx: torch.Tensor
    mask: torch.Tensor | None


def draw_round(data: ClientData, steps: int, batch: int, hidden: int, dropout: float,
               generator: torch.Generator, needed: np.ndarray | None = None,
               mask_out: torch.Tensor | None = None) -> RoundDraws:
    """Minibatches for ``steps`` gradient evaluations of every client, and dropout masks.

    Each minibatch is ``batch`` distinct rows of the client's train split (the first ``batch``
    of a uniformly random permutation, drawn as the smallest of i.i.d. uniform keys), or
    ``batch`` rows drawn with replacement when the client has fewer
    (docs/decisions.md#relfair-cost).

    ``needed`` (steps, n) bool, optional: the minibatches a round reads (the per-client epoch
    schedule reads about half). Every key is drawn all the same (the generator's stream, hence
    every later draw, does not depend on ``needed``), but only the needed minibatches are
    selected from them: a minibatch that is not needed holds the client's first row ``batch``
    times (a valid row; the loop oracle computes a gradient there and multiplies it by 0).

    ``mask_out``: a float32 tensor of the masks' shape ``(steps, n, batch, hidden)`` the masks
    are drawn into (the same numbers: the generator fills it in order), kept by the caller
    across rounds: at paper scale the masks are ~100 MB a round, which a fresh tensor maps and
    faults in anew each time. The returned draws then alias it until the next draw into it.
    """
    sizes = torch.from_numpy(data.train_sizes)
    offsets = torch.from_numpy(data.train_offsets[:-1])
    n, nmax = len(sizes), int(sizes.max())
    # client i's keys at step s are keys[s, i, :N_i] (the rest of the row is drawn to keep the
    # stream and never read); the batch smallest in increasing order: topk returns exactly
    # argsort's first batch columns (keys are distinct float64 uniforms) at O(N_i) instead of
    # O(N_i log N_i), one call per client on its own rows (no fill of the padding; the
    # formulation with padding keys 2.0 is the oracle of tests/relfair/test_relfair_fast_engine)
    small = sizes < batch
    if needed is not None:
        needed = np.asarray(needed, dtype=bool)
        if needed.shape != (steps, n):
            raise ValueError(f"needed must be a ({steps}, {n}) bool array (steps x clients), "
                             f"got shape {needed.shape}")
    local = torch.zeros(steps, n, batch, dtype=torch.int64)
    big = np.flatnonzero(~small.numpy())
    # the (steps, n, nmax) keys are drawn _KEY_CHUNK steps at a time: the generator fills a
    # tensor element by element in order, so consecutive chunks are the one tensor's values
    # (the same stream), and topk reads keys still in cache (~15 % faster draw; 6 MB at a time
    # instead of 117 MB at paper scale)
    for c0 in range(0, steps, _KEY_CHUNK):
        c1 = min(steps, c0 + _KEY_CHUNK)
        keys = torch.rand(c1 - c0, n, nmax, generator=generator, dtype=torch.float64)
        for i in big:
            # topk treats each row alone: the needed rows' indices are those of the full call
            for lo, hi in ([(0, c1 - c0)] if needed is None else _runs(needed[c0:c1, i])):
                local[c0 + lo:c0 + hi, i] = torch.topk(keys[lo:hi, i, :int(sizes[i])], batch,
                                                       dim=-1, largest=False,
                                                       sorted=True).indices
    if small.any():
        repl = (torch.rand(steps, n, batch, generator=generator, dtype=torch.float64)
                * sizes[:, None]).long()
        local = torch.where(small[:, None], repl, local)
    idx = local + offsets[:, None]
    mask = None
    if dropout > 0:
        # in place on the uniforms: 1.0 where kept (u >= p), 0.0 else, then / (1 - p) -- the
        # values of (u >= p).to(float32) / (1 - p), without two more tensors of this size
        shape = (steps, n, batch, hidden)
        if mask_out is not None and (tuple(mask_out.shape) != shape
                                     or mask_out.dtype != torch.float32):
            raise ValueError(f"mask_out must be a float32 tensor of shape {shape}, got "
                             f"{mask_out.dtype} {tuple(mask_out.shape)}")
        mask = torch.rand(shape, generator=generator, out=mask_out)
        mask.ge_(dropout).div_(1.0 - dropout)
    return RoundDraws(idx=idx, mask=mask)


def _runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """The maximal runs ``[lo, hi)`` of True in a 1-d bool array."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], flags.astype(np.int8), [0]])))
    return [(int(lo), int(hi)) for lo, hi in zip(edges[::2], edges[1::2], strict=True)]
