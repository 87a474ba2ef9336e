"""Federated datasets of Table 1 (specs/relfair.md §4.1): MNIST / CIFAR-10, "hetero-dir" clients.

Pool: the official training split only (A12), pixels scaled to [0, 1] and flattened, no
standardization (A13). Clients: ``dirichlet_label_split`` with concentration 0.5, the minimum
client size 10 and the N/n balancing cap of Yurochkin et al.'s code (specs/relfair.md §4.1);
then each client's samples are split 80:20 into train/validation (paper §7). Smoke scale
partitions a random 4,000-image subset among 20 clients (specs/relfair.md §10).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from repro.core.partition import dirichlet_label_split
from repro.relfair.clients import ClientData, split_clients

__all__ = ["TASKS", "load_federated"]

TASKS = ("MNIST", "CIFAR10")
DIRICHLET_ALPHA = 0.5
MIN_CLIENT_SIZE = 10


@lru_cache(maxsize=1)
def _pool(task: str) -> tuple[np.ndarray, np.ndarray]:
    """The scaled training pool, cached per process (the cells of a sweep share it); the
    arrays are read-only so that no caller can change the cached copy.
    """
    if task == "MNIST":
        from repro.core.data.mnist import load_mnist

        ds = load_mnist("train")
    elif task == "CIFAR10":
        from repro.core.data.cifar10 import load_cifar10

        ds = load_cifar10(split="train")
    else:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    X = np.asarray(ds.X).reshape(len(ds.y), -1).astype(np.float32) / 255.0
    y = np.asarray(ds.y).astype(np.int64)
    X.flags.writeable = False
    y.flags.writeable = False
    return X, y


def load_federated(task: str, n_clients: int, rng: np.random.Generator,
                   subset: int | None = None) -> ClientData:
    """Partition ``task``'s training pool among ``n_clients`` (``subset`` images if given)."""
    X, y = _pool(task)
    if subset is not None:
        keep = np.sort(rng.choice(len(y), size=subset, replace=False))
        X, y = X[keep], y[keep]
    parts = dirichlet_label_split(y, n_clients, DIRICHLET_ALPHA, rng,
                                  min_size=MIN_CLIENT_SIZE, balance=True)
    return split_clients(X, y, parts, rng, train_fraction=0.8, classes=10)
