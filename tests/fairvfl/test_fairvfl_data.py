"""Preprocessing of specs/fairvfl.md §5: counts, label/group orientation, splits, party blocks."""

from __future__ import annotations

import numpy as np
import pytest

from repro.fairvfl.data import adult_table, compas_table, crime_table, make_split


@pytest.mark.parametrize(("fn", "shape", "n_a", "n_b", "pos"), [
    (adult_table, (45_222, 104), 1_669, 9_539, 11_208),
    (compas_table, (5_278, 26), 1_514, 1_281, 2_795),
    (crime_table, (1_994, 99), 616, 965, 1_581),
])
def test_table_counts(fn, shape, n_a, n_b, pos):
    t = fn()
    assert t.X.shape == shape
    assert np.sum(t.y == 1) == pos
    assert np.sum((t.y == 1) & t.s) == n_a and np.sum((t.y == 1) & ~t.s) == n_b
    assert np.all(np.isfinite(t.X))


def test_adult_columns():
    t = adult_table()
    assert t.feature_names[61] == "sex_Female" and t.feature_names[62] == "sex_Male"
    assert np.array_equal(t.s, t.X[:, 61] == 1)
    assert np.all(t.X[:, 6:].sum(axis=1) == 8)  # 8 one-hot attributes


@pytest.mark.parametrize(("dataset", "version", "sizes", "n_train", "n_test"), [
    ("adult", "conf", [19, 17, 17, 17, 17, 17], 40_000, 5_222),
    ("compas", "conf", [6, 4, 4, 4, 4, 4], 4_800, 478),
    ("compas", "journal", [16, 2, 2, 2, 2, 2], 4_800, 478),
    ("crime", "journal", [49, 10, 10, 10, 10, 10], 1_200, 794),
])
def test_split_sizes_blocks_and_scaling(dataset, version, sizes, n_train, n_test):
    sp = make_split(dataset, 0, version=version)
    assert sp.X_train.shape[0] == n_train and sp.X_test.shape[0] == n_test
    assert [len(b) for b in sp.blocks] == sizes
    assert np.array_equal(np.concatenate(sp.blocks), np.arange(sp.X_train.shape[1]))
    if dataset != "crime":
        n_num = {"adult": 6, "compas": 11}[dataset]
        np.testing.assert_allclose(sp.X_train[:, :n_num].mean(axis=0), 0, atol=1e-10)
        np.testing.assert_allclose(sp.X_train[:, :n_num].std(axis=0), 1, atol=1e-10)
    else:
        assert sp.X_train.min() >= 0 and sp.X_train.max() <= 1


def test_split_is_the_pcg64_permutation_and_smoke_subsample():
    t = compas_table()
    perm = np.random.Generator(np.random.PCG64(3)).permutation(len(t.y))
    sp = make_split("compas", 3)
    assert np.array_equal(sp.y_train, t.y[perm[:4800]])
    small = make_split("adult", 1, smoke=True)
    assert small.X_train.shape == (4_000, 104) and small.X_test.shape == (1_000, 104)
