"""MNIST / MNIST-M construction (specs/fedmm.md §4.1)."""

from __future__ import annotations

import numpy as np
import pytest

from repro.core.data.mnist import load_mnist
from repro.fedmm.clients import allocate_split_clients, allocate_two_clients, code_evaluated_client
from repro.fedmm.data import blend, make_mnistm, mnist_split, mnistm_split


def test_mnist_tf_splits():
    X, y = mnist_split("train")
    Xv, _ = mnist_split("validation")
    Xt, yt = mnist_split("test")
    assert X.shape == (55000, 28, 28, 3) and Xv.shape == (5000, 28, 28, 3)
    assert Xt.shape == (10000, 28, 28, 3) and len(yt) == 10000
    assert set(np.unique(X[:100])) == {0, 255}
    raw = load_mnist("train")
    assert np.array_equal(X[0, :, :, 1], np.where(raw.X[5000] > 0, 255, 0))
    assert np.array_equal(y[:50], raw.y[5000:5050])


def test_blend_is_abs_difference_of_patch_and_digit():
    pool = (np.full((30, 40, 3), 100, np.uint8), np.arange(50 * 60 * 3).reshape(50, 60, 3)
            .astype(np.uint8))
    digits = np.zeros((2, 28, 28, 3), np.uint8)
    digits[:, 10:15, 5:20] = 255
    out = blend(digits, pool, np.array([0, 1]), np.array([[0.5, 0.5], [0.99, 0.0]]))
    assert np.all(out[0][digits[0] == 255] == 155) and np.all(out[0][digits[0] == 0] == 100)
    r, c = int(0.99 * 22), 0
    patch = pool[1][r:r + 28, c:c + 28].astype(int)
    assert np.array_equal(out[1], np.abs(patch - digits[1]).astype(np.uint8))


def test_mnistm_deterministic_prefix_and_labels(isolated):
    X, y = mnistm_split("test", 40)
    X2, _ = mnistm_split("test", 40)
    assert np.array_equal(X, X2)
    assert np.array_equal(y, mnist_split("test")[1][:40])
    assert X.shape == (40, 28, 28, 3) and X.dtype == np.uint8
    digits = mnist_split("test")[0][:40]
    pool = (np.zeros((40, 40, 3), np.uint8),)
    # a black background leaves the binarised digit itself: the recipe is |patch - digit|
    assert np.array_equal(make_mnistm(digits, pool, 42, "test", 10000), digits)
    other, _ = mnistm_split("test", 40, seed=7)
    assert not np.array_equal(other, X)
    # the full split (generated and cached) starts with the same 40 images
    full, _ = mnistm_split("test")
    assert full.shape == (10000, 28, 28, 3) and np.array_equal(full[:40], X)
    assert (isolated / "cache" / "fedmm" / "mnistm_v1_test_seed42.npy").is_file()
    assert np.array_equal(mnistm_split("test", 40)[0], X)  # read back from the cache


def test_code_evaluated_client_is_the_source_only_client_at_p1():
    """The authors' runs (source_ratio=0, target_ratio=1) evaluate their last client, which
    holds all the source data; in our mirrored allocation that is client 0.
    """
    clients = allocate_two_clients(100, 80, 1.0)
    i = code_evaluated_client(clients)
    assert i == 0
    assert len(clients[i].source) == 100 and len(clients[i].target) == 0
    assert len(clients[1 - i].source) == 0 and len(clients[1 - i].target) == 80
    assert clients[i].batch_split(64) == (64, 0)
    split = allocate_split_clients(100, 80, 2, 2)
    j = code_evaluated_client(split)
    assert len(split[j].source) == 50 and len(split[j].target) == 0
    with pytest.raises(ValueError, match="holds source data"):
        code_evaluated_client(allocate_two_clients(100, 80, 0.0))
