"""Readings of A1: the encodings' dimensions and the r = 0.2 feasibility diagnostic (Clarabel)
against closed forms.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from repro.constrfl.data import _one_hot, load_np_dataset
from repro.constrfl.readings import FeasibilityReading, best_worst_class1_loss


def test_symmetric_class1_rows_cannot_beat_log2_so_r_is_infeasible():
    # rows come in pairs x, -x: log(1+e^-z) + log(1+e^z) >= 2 log 2, equality only at w = 0,
    # so the best worst-client loss is exactly log 2 = 0.693 > 0.2
    rng = np.random.default_rng(0)
    X1 = []
    for _ in range(3):
        half = rng.standard_normal((15, 4))
        X1.append(np.concatenate([half, -half]))
    worst, value, w, status = best_worst_class1_loss(X1)
    assert abs(worst - math.log(2)) <= 1e-6 and abs(value - math.log(2)) <= 1e-6
    assert np.max(np.abs(w)) <= 1e-4
    rd = FeasibilityReading("demo", "codes", 3, 4, worst, value, 0.2, status)
    assert not rd.feasible and rd.decided


def test_class1_rows_in_a_half_space_reach_any_r():
    # every class-1 row has x_0 >= 1: w = (s, 0, ...) drives the loss to log(1+e^-s) -> 0
    rng = np.random.default_rng(1)
    X1 = [np.column_stack([1 + rng.random(20), rng.standard_normal((20, 3))]) for _ in range(2)]
    worst, _, w, _ = best_worst_class1_loss(X1)
    assert worst <= 1e-3
    assert FeasibilityReading("demo", "codes", 2, 4, worst, 0.0, 0.2, "optimal").feasible
    # the planted error: a reading that claims feasibility on the symmetric set is caught
    sym = [np.concatenate([x, -x]) for x in X1]
    assert best_worst_class1_loss(sym)[0] > 0.2


def test_the_bound_is_the_worst_client_not_the_mean():
    # client 0 separable (loss -> 0), client 1 symmetric (>= log 2): the max is log 2
    rng = np.random.default_rng(2)
    a = np.column_stack([1 + rng.random(10), rng.standard_normal((10, 2))])
    b = rng.standard_normal((10, 3))
    worst, value, _, _ = best_worst_class1_loss([a, np.concatenate([b, -b])])
    assert abs(worst - math.log(2)) <= 1e-5 and abs(value - math.log(2)) <= 1e-5


def test_one_hot_columns_and_bad_input():
    col = np.array(["b", "?", "a", "b"])
    np.testing.assert_array_equal(_one_hot(col), [[0, 0, 1], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
    with pytest.raises(ValueError, match="encoding must be one of"):
        load_np_dataset("monks-1", encoding="binary")
    with pytest.raises(ValueError, match="non-empty"):
        best_worst_class1_loss([])


def test_monks1_encodings_have_the_stated_dimensions():
    codes = load_np_dataset("monks-1", encoding="codes")  # in the data manifest: never skipped
    onehot = load_np_dataset("monks-1", encoding="onehot")
    assert (codes.d, onehot.d) == (6, 17)       # 3+3+2+3+4+2 categories
    assert np.array_equal(codes.y, onehot.y)
