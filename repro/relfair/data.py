"""Federated datasets of Table 1 (docs/decisions.md#relfair-partition): MNIST / CIFAR-10,
"hetero-dir" clients.

Pool: the official training split only (docs/decisions.md#relfair-data-pool), pixels scaled to [0,
1] and flattened, no standardization (docs/decisions.md#relfair-preprocessing). Clients:
``dirichlet_label_split`` with concentration 0.5, the minimum client size 10 and the N/n balancing
cap of Yurochkin et al.'s code (docs/decisions.md#relfair-partition); then each client's samples are
split 80:20 into train/validation (paper §7). Smoke scale partitions a random 4,000-image subset
among 20 clients (docs/decisions.md#relfair-cost).

The declared search for FedAvg's collapse (``relfair.fedavg_search``) varies the partition the
text leaves to Yurochkin et al.'s code: the Dirichlet concentration, the balancing cap, or
McMahan et al.'s two-class shards instead (``partition``, ``alpha``, ``balance``); the tables
use the defaults.
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


PARTITIONS = ("dirichlet", "shards")


def two_class_shards(labels, n_clients: int, rng: np.random.Generator) -> list[np.ndarray]:
    """McMahan et al. (2017)'s pathological split: the rows sorted by label, cut into ``2 n``
    equal shards, two random shards per client (so most clients hold two classes).
    """
    order = np.argsort(np.asarray(labels), kind="stable")
    shards = np.array_split(order, 2 * n_clients)
    pick = rng.permutation(2 * n_clients)
    return [np.concatenate([shards[pick[2 * i]], shards[pick[2 * i + 1]]])
            for i in range(n_clients)]


def load_federated(task: str, n_clients: int, rng: np.random.Generator,
                   subset: int | None = None, *, partition: str = "dirichlet",
                   alpha: float = DIRICHLET_ALPHA, balance: bool = True) -> ClientData:
    """Partition ``task``'s training pool among ``n_clients`` (``subset`` images if given):
    Dirichlet(``alpha``) label split with the N/n cap where ``balance`` (the paper's), or
    two-class shards.
    """
    if partition not in PARTITIONS:
        raise ValueError(f"partition must be one of {PARTITIONS}, got {partition!r}")
    X, y = _pool(task)
    if subset is not None:
        keep = np.sort(rng.choice(len(y), size=subset, replace=False))
        X, y = X[keep], y[keep]
    if partition == "shards":
        parts = two_class_shards(y, n_clients, rng)
    else:
        parts = dirichlet_label_split(y, n_clients, alpha, rng, min_size=MIN_CLIENT_SIZE,
                                      balance=balance)
    return split_clients(X, y, parts, rng, train_fraction=0.8, classes=10)
