"""Every manifest-backed loader reproduces the counts of ``shared/data/MANIFEST.md`` exactly."""

from __future__ import annotations

import gzip
from collections import Counter

import numpy as np
import pytest

from repro.core.data import (
    LOADERS,
    bsds500_meta,
    fetch,
    list_bsds500,
    load_a8a,
    load_adult,
    load_breast_cancer_wisconsin,
    load_bsds500_image,
    load_compas,
    load_crime,
    load_mnist,
    load_monks,
    load_penguins,
    parse_libsvm,
)
from repro.core.data.mnist import IMAGES_MAGIC, LABELS_MAGIC, parse_idx_ubyte


@pytest.fixture(scope="module")
def adult():
    return {split: load_adult(split) for split in ("train", "test")}


@pytest.fixture(scope="module")
def mnist():
    return {split: load_mnist(split) for split in ("train", "test")}


@pytest.fixture(scope="module")
def a8a():
    return {split: load_a8a(split) for split in ("train", "test")}


@pytest.fixture(scope="module")
def compas():
    return load_compas()


@pytest.fixture(scope="module")
def crime():
    return load_crime()


# --- adult ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("split", "n", "n_low", "n_high", "n_question"), [
    ("train", 32_561, 24_720, 7_841, 2_399),
    ("test", 16_281, 12_435, 3_846, 1_221),
])
def test_adult_counts(adult, split, n, n_low, n_high, n_question):
    d = adult[split]
    assert d.X.shape == (n, 14)
    assert len(d.feature_names) == 14
    assert Counter(d.y.tolist()) == {0: n_low, 1: n_high}
    assert int(np.any(d.X == "?", axis=1).sum()) == n_question
    assert d.groups["sex"].shape == (n,)
    assert set(d.groups["sex"]) == {"Male", "Female"}
    assert len(set(d.groups["race"])) == 5


def test_adult_raw_values(adult):
    d = adult["train"]
    assert d.X[0].tolist() == [
        39.0, "State-gov", 77516.0, "Bachelors", 13.0, "Never-married", "Adm-clerical",
        "Not-in-family", "White", "Male", 2174.0, 0.0, 40.0, "United-States",
    ]
    # "?" only ever occurs in the three categorical columns the UCI description names.
    with_question = {d.feature_names[j] for j in np.nonzero(np.any(d.X == "?", axis=0))[0]}
    assert with_question == {"workclass", "occupation", "native-country"}
    numeric = [d.feature_names.index(c) for c in d.meta["numeric_features"]]
    assert np.isfinite(d.X[:, numeric].astype(float)).all()
    # Test labels lose their trailing dot; the first test row is a "<=50K." in the file.
    assert adult["test"].y[0] == 0


# --- compas -----------------------------------------------------------------------------------

def test_compas_counts(compas):
    assert compas.X.shape == (7_214, 53)
    assert len(compas.feature_names) == 53
    assert compas.feature_names.count("decile_score") == 2
    assert compas.feature_names.count("priors_count") == 2
    assert Counter(compas.y.tolist()) == {0: 3_963, 1: 3_251}
    assert Counter(compas.groups["sex"].tolist()) == {"Male": 5_819, "Female": 1_395}
    assert Counter(compas.groups["race"].tolist()) == {
        "African-American": 3_696, "Caucasian": 2_454, "Hispanic": 637, "Other": 377,
        "Asian": 32, "Native American": 18,
    }
    assert len(compas.meta["numeric_columns"]) == 20
    j = compas.feature_names.index("days_b_screening_arrest")
    assert int(np.isnan(compas.X[:, j].astype(float)).sum()) == 307


# --- communities and crime --------------------------------------------------------------------

def test_crime_counts(crime):
    assert crime.X.shape == (1_994, 126)
    assert crime.X.dtype == np.float64
    assert len(crime.meta["attributes"]) == 128
    assert crime.y.shape == (1_994,)
    assert crime.y.min() >= 0.0 and crime.y.max() <= 1.0
    assert "ViolentCrimesPerPop" not in crime.feature_names
    assert crime.meta["communityname"][:2].tolist() == ["Lakewoodcity", "Tukwilacity"]
    counts = crime.meta["missing_counts"]
    assert counts["OtherPerCap"] == 1
    assert counts["county"] == 1_174
    assert counts["community"] == 1_177
    assert sorted(c for c in counts.values() if c == 1_675) == [1_675] * 22
    assert len(counts) == 25
    # NaN in X is exactly the "?" of the numeric predictors.
    assert int(np.isnan(crime.X).sum()) == 1 + 1_174 + 1_177 + 22 * 1_675
    assert not np.isnan(crime.y).any()
    j = crime.feature_names.index("racepctblack")
    np.testing.assert_array_equal(crime.groups["racepctblack"], crime.X[:, j])


# --- mnist ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("split", "n"), [("train", 60_000), ("test", 10_000)])
def test_mnist_counts(mnist, split, n):
    d = mnist[split]
    assert d.X.shape == (n, 28, 28)
    assert d.X.dtype == np.uint8 and d.y.dtype == np.uint8
    assert sorted(np.unique(d.y).tolist()) == list(range(10))
    assert int(d.X.max()) == 255


def test_mnist_known_class_counts(mnist):
    assert np.bincount(mnist["test"].y).tolist() == [
        980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    assert np.bincount(mnist["train"].y).tolist() == [
        5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]


def test_mnist_bad_magic_is_a_clear_error():
    with gzip.open(fetch("mnist", "t10k-labels-idx1-ubyte.gz")) as f:
        raw = f.read()
    assert parse_idx_ubyte(raw, LABELS_MAGIC).shape == (10_000,)
    with pytest.raises(ValueError, match="bad IDX magic number 0x00000801, expected 0x00000803"):
        parse_idx_ubyte(raw, IMAGES_MAGIC)
    with pytest.raises(ValueError, match="header says shape"):
        parse_idx_ubyte(raw[:-1], LABELS_MAGIC)


# --- penguins ---------------------------------------------------------------------------------

def test_penguins_counts():
    d = load_penguins()
    assert d.X.shape == (344, 7)
    assert d.meta["label_names"] == ["Adelie", "Chinstrap", "Gentoo"]
    assert np.bincount(d.y).tolist() == [152, 68, 124]
    numeric = [d.feature_names.index(c) for c in d.meta["numeric_features"]]
    assert np.isnan(d.X[:, numeric].astype(float)).sum(axis=0).tolist() == [2, 2, 2, 2, 0]
    assert Counter(d.groups["sex"].tolist()) == {"male": 168, "female": 165, "NA": 11}


# --- uci binary -------------------------------------------------------------------------------

def test_breast_cancer_wisconsin_counts():
    d = load_breast_cancer_wisconsin()
    assert d.X.shape == (699, 9)
    assert Counter(d.y.tolist()) == {2: 458, 4: 241}
    assert np.isnan(d.X).sum(axis=0).tolist() == [0, 0, 0, 0, 0, 16, 0, 0, 0]
    assert np.nanmin(d.X) == 1.0 and np.nanmax(d.X) == 10.0
    assert d.meta["id"][0] == 1_000_025


@pytest.mark.parametrize(("split", "n", "first_id"), [
    ("train", 124, "data_5"), ("test", 432, "data_1"),
])
def test_monks_counts(split, n, first_id):
    d = load_monks(1, split)
    assert d.X.shape == (n, 6)
    assert Counter(d.y.tolist()) == {0: n // 2, 1: n // 2}
    assert d.X.max(axis=0).tolist() == [3, 3, 2, 3, 4, 2]
    assert d.meta["id"][0] == first_id
    # MONK-1's target concept: (a1 = a2) or (a5 = 1), noise-free.
    concept = (d.X[:, 0] == d.X[:, 1]) | (d.X[:, 4] == 1)
    np.testing.assert_array_equal(d.y, concept.astype(np.int64))


def test_monks_rejects_problems_not_in_manifest():
    with pytest.raises(ValueError, match="problem must be 1"):
        load_monks(2)


# --- libsvm -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("split", "n", "n_neg", "n_pos"), [
    ("train", 22_696, 17_190, 5_506),
    ("test", 9_865, 7_530, 2_335),
])
def test_a8a_counts(a8a, split, n, n_neg, n_pos):
    d = a8a[split]
    assert d.X.shape == (n, 123)
    assert Counter(d.y.tolist()) == {-1: n_neg, 1: n_pos}
    assert set(np.unique(d.X).tolist()) == {0.0, 1.0}


def test_a8a_test_never_uses_feature_123(a8a):
    assert not a8a["test"].X[:, 122].any()
    assert a8a["train"].X[:, 122].any()
    # Every a8a row encodes all 14 Adult attributes, one indicator each (missing values none).
    assert int(a8a["train"].X.sum(axis=1).max()) == 14


def test_parse_libsvm_small():
    X, y = parse_libsvm("+1 1:0.5 3:2\n-1 2:-1.5\n\n1\n", n_features=4)
    np.testing.assert_array_equal(y, [1.0, -1.0, 1.0])
    np.testing.assert_array_equal(X, [[0.5, 0, 2, 0], [0, -1.5, 0, 0], [0, 0, 0, 0]])
    assert parse_libsvm("1 2:1 # comment 9:9\n")[0].shape == (1, 2)
    with pytest.raises(ValueError, match="exceeds n_features=2"):
        parse_libsvm("1 3:1\n", n_features=2)
    with pytest.raises(ValueError, match="1-based"):
        parse_libsvm("1 0:1\n")


# --- bsds500 ----------------------------------------------------------------------------------

def test_bsds500_counts():
    paths = {split: list_bsds500(split) for split in ("train", "val", "test")}
    assert [len(p) for p in paths.values()] == [200, 100, 200]
    assert all(p.suffix == ".jpg" and p.is_file() for ps in paths.values() for p in ps)
    assert len(bsds500_meta("train")["not_pristine"]) == 63
    assert bsds500_meta("val")["not_pristine"] == []
    assert bsds500_meta("test")["not_pristine"] == []
    image = load_bsds500_image(paths["val"][0])
    assert image.dtype == np.uint8
    assert image.shape in {(321, 481, 3), (481, 321, 3)}


def test_loaders_registry():
    assert {"adult", "compas", "crime", "mnist", "penguins", "breast_cancer_wisconsin",
            "monks", "a8a", "bsds500", "cifar10", "office31"} <= set(LOADERS)
    assert all(callable(f) for f in LOADERS.values())
