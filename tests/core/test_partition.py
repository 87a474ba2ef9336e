"""repro.core.partition: exact counts, coverage, reproducibility."""

from __future__ import annotations

import doctest
import warnings

import numpy as np
import pytest

from repro.core import partition as S


def _assert_exact_cover(parts, n_total):
    joined = np.concatenate(parts)
    assert joined.dtype == np.int64
    assert np.array_equal(np.sort(joined), np.arange(n_total))


# ------------------------------------------------------------------------- vertical


@pytest.mark.parametrize(("m", "expected"), [
    (104, [19, 17, 17, 17, 17, 17]),   # ADULT, [C] and [J]
    (26, [6, 4, 4, 4, 4, 4]),          # COMPAS, [C]
    (99, [19, 16, 16, 16, 16, 16]),    # C&C, [C]
])
def test_vertical_split_conference_counts(m, expected):
    blocks = S.vertical_split(m, 6)
    assert [b.size for b in blocks] == expected
    assert np.array_equal(np.concatenate(blocks), np.arange(m))  # contiguous, in order


def test_vertical_split_journal_sizes():
    blocks = S.vertical_split(99, 6, sizes=[49, 10, 10, 10, 10, 10])  # C&C, [J]
    assert [b[0] for b in blocks] == [0, 49, 59, 69, 79, 89]
    assert blocks[-1][-1] == 98
    assert [b.tolist() for b in S.vertical_split(3, 1)] == [[0, 1, 2]]


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"n_features": 3, "n_parties": 4}, ["n_features", ">= n_parties = 4", "3"]),
    ({"n_features": 10, "n_parties": 0}, ["n_parties", ">= 1", "0"]),
    ({"n_features": 10, "n_parties": 2, "sizes": [5, 4]}, ["sum to n_features = 10", "9"]),
    ({"n_features": 10, "n_parties": 2, "sizes": [10, 0]}, ["sizes must be >= 1"]),
    ({"n_features": 10, "n_parties": 3, "sizes": [5, 5]}, ["3 integers"]),
])
def test_vertical_split_errors(kwargs, words):
    with pytest.raises(ValueError) as info:
        S.vertical_split(**kwargs)
    for word in words:
        assert word in str(info.value)


# ------------------------------------------------------------------------- Dirichlet


def _labels(counts):
    return np.repeat(np.arange(len(counts)), counts)


LABELS = np.random.default_rng(99).permutation(_labels([130, 70, 100, 90, 110]))


def test_dirichlet_every_index_once_and_min_size():
    parts = S.dirichlet_label_split(LABELS, 20, 0.5, np.random.default_rng(1))
    assert len(parts) == 20
    _assert_exact_cover(parts, LABELS.size)
    assert min(p.size for p in parts) >= 10


def test_dirichlet_reproducible_and_seed_dependent():
    a = S.dirichlet_label_split(LABELS, 10, 0.5, np.random.default_rng(7))
    b = S.dirichlet_label_split(LABELS, 10, 0.5, np.random.default_rng(7))
    c = S.dirichlet_label_split(LABELS, 10, 0.5, np.random.default_rng(8))
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not all(x.size == y.size and np.array_equal(x, y) for x, y in zip(a, c, strict=True))


def test_dirichlet_skew_follows_alpha():
    def dominant_share(alpha):
        parts = S.dirichlet_label_split(LABELS, 10, alpha, np.random.default_rng(3), min_size=5)
        return np.median([np.bincount(LABELS[p]).max() / p.size for p in parts])

    # Uniform class mix has dominant share 130/500 = 0.26; alpha = 0.1 must be far more skewed.
    assert dominant_share(1e6) < 0.3 < 0.5 < dominant_share(0.1)


def test_dirichlet_near_uniform_proportions_cut_by_floor():
    # alpha -> inf: p = 1/n up to ~1e-4, so every client gets N_k/n of each class up to one.
    labels = _labels([100, 60])
    parts = S.dirichlet_label_split(labels, 4, 1e9, np.random.default_rng(0), min_size=0)
    counts = np.array([np.bincount(labels[p], minlength=2) for p in parts])
    assert np.all(np.abs(counts - np.array([25, 15])) <= 1)
    assert counts.sum(axis=0).tolist() == [100, 60]


def test_dirichlet_tiny_alpha_no_nan():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for seed in range(5):
            parts = S.dirichlet_label_split(LABELS, 10, 1e-3, np.random.default_rng(seed),
                                            min_size=0)
            _assert_exact_cover(parts, LABELS.size)


def test_dirichlet_single_client_gets_everything():
    parts = S.dirichlet_label_split(LABELS, 1, 0.5, np.random.default_rng(0))
    _assert_exact_cover(parts, LABELS.size)


def test_dirichlet_errors():
    rng = np.random.default_rng(0)
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        S.dirichlet_label_split(LABELS, 5, 0.5, np.random.RandomState(0))
    with pytest.raises(ValueError, match=r"alpha must be in \(0, inf\)"):
        S.dirichlet_label_split(LABELS, 5, 0.0, rng)
    with pytest.raises(ValueError, match="min_size must be <= N / n_clients = 5"):
        S.dirichlet_label_split(LABELS, 100, 0.5, rng, min_size=6)
    with pytest.raises(RuntimeError, match="no split with every client >= 45"):
        S.dirichlet_label_split(LABELS, 10, 1e-3, rng, min_size=45, max_tries=3)


# ------------------------------------------------------------------------- stratified


@pytest.mark.parametrize("n_clients", [1, 3, 7, 20])
def test_stratified_sizes_and_class_counts(n_clients):
    labels = _labels([53, 31, 16])
    parts = S.stratified_equal_split(labels, n_clients, np.random.default_rng(5))
    _assert_exact_cover(parts, labels.size)
    sizes = np.array([p.size for p in parts])
    assert sizes.max() - sizes.min() <= 1 and sizes.sum() == 100
    counts = np.array([np.bincount(labels[p], minlength=3) for p in parts])
    for k, n_k in enumerate([53, 31, 16]):
        assert set(counts[:, k]) <= {n_k // n_clients, -(-n_k // n_clients)}


def test_stratified_drop_remainder_exact():
    labels = _labels([53, 31])
    parts = S.stratified_equal_split(labels, 5, np.random.default_rng(5), drop_remainder=True)
    counts = np.array([np.bincount(labels[p], minlength=2) for p in parts])
    assert counts.tolist() == [[10, 6]] * 5
    joined = np.concatenate(parts)
    assert np.unique(joined).size == joined.size == 80


def test_stratified_reproducible_and_seed_dependent():
    labels = _labels([40, 20])
    a = S.stratified_equal_split(labels, 6, np.random.default_rng(1))
    b = S.stratified_equal_split(labels, 6, np.random.default_rng(1))
    c = S.stratified_equal_split(labels, 6, np.random.default_rng(2))
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert any(not np.array_equal(np.sort(x), np.sort(y)) for x, y in zip(a, c, strict=True))


def test_stratified_errors():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="n_clients must be <= the number of samples 3"):
        S.stratified_equal_split([0, 1, 1], 4, rng)
    with pytest.raises(ValueError, match="largest class size 2"):
        S.stratified_equal_split([0, 1, 1], 3, rng, drop_remainder=True)
    with pytest.raises(ValueError, match="labels must be a non-empty 1-D array"):
        S.stratified_equal_split([], 1, rng)
    with pytest.raises(TypeError, match="Generator"):
        S.stratified_equal_split([0, 1], 1, 0)


def test_docstring_examples():
    failures, tried = doctest.testmod(S, verbose=False)
    assert tried >= 5 and failures == 0
