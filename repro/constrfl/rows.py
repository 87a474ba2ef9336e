"""A batched merit restricted to some of its parties: their rows of each array field, taken
without revalidating the block (Newton's active set shrinks as parties converge).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from repro.constrfl.merit import Merit

__all__ = ["restrict", "rows_of", "take_many"]


def rows_of(a: np.ndarray, idx) -> np.ndarray:
    a = np.asarray(a)
    return a if a.ndim == 1 else a[idx]


def restrict(merit: Merit, idx) -> Merit:
    """The merit of the parties ``idx`` of the block (a loop-free sub-batch)."""
    blk = getattr(merit, "block", None)
    if blk is None or len(idx) == blk.size:
        return merit
    sub = take_many(blk, idx)
    return Merit(sub, merit.mu[idx], merit.center, merit.beta, merit.prox)


_FIELDS: dict[type, tuple[str, ...]] = {}


def take_many(blk, idx):
    """``blk`` with the rows ``idx`` of its array fields: the fields ``dataclasses.replace``
    would pass (the block classes have only init fields), set on a new instance without
    calling ``__init__``/``__post_init__`` again: that only validates the shapes, and rows
    taken from a validated block have the validated layout (this runs every Newton iteration
    whose active set changes; the field names are looked up once per class).
    """
    cls = type(blk)
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS.setdefault(cls, tuple(f.name for f in dataclasses.fields(cls)))
    out = object.__new__(cls)
    for name in names:
        v = getattr(blk, name)
        object.__setattr__(out, name,
                           v[idx] if isinstance(v, np.ndarray) and v.ndim >= 1 else v)
    return out
