"""The one return type of every loader: plain numpy arrays plus metadata."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Dataset:
    """A loaded data split.

    Attributes
    ----------
    X : array of shape (n, d) (or (n, H, W[, C]) for images)
        Features as stored upstream, before any paper-specific preprocessing.
    y : array of shape (n,)
        Labels.
    feature_names : list of str
        One name per column of ``X`` (empty for images).
    groups : dict of str to array of shape (n,)
        Sensitive/group attributes by name (e.g. ``"sex"``, ``"race"``), raw values.
    name : str
        ``"<dataset>/<split>"``.
    meta : dict
        Anything else a paper needs (label names, source files and their sha256, ...).
    """

    X: np.ndarray
    y: np.ndarray
    feature_names: list[str]
    name: str
    groups: dict[str, np.ndarray] = field(default_factory=dict)
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.X) != len(self.y):
            raise ValueError(f"{self.name}: X has {len(self.X)} rows but y has {len(self.y)}")
        for key, g in self.groups.items():
            if len(g) != len(self.y):
                raise ValueError(f"{self.name}: group {key!r} has {len(g)} rows, y {len(self.y)}")

    @property
    def n(self) -> int:
        return len(self.y)
