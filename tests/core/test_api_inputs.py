"""#14 row 6 for paper 003 (constrfl): the problem builders of the public API check shapes,
labels and the clients' row layout with a ValueError naming the argument (they used to build a
problem silently, or fail later with a numpy broadcast error).
"""

from __future__ import annotations

import numpy as np
import pytest

from repro.constrfl import fairness, neyman_pearson


def _np_data(n=3, m0=8, m1=5, d=4, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, m0, d)), rng.normal(size=(n, m1, d))


def _fair_data(n=2, M=10, d=4, seed=0):
    rng = np.random.default_rng(seed)
    Xc = rng.normal(size=(n, M, d))
    Xc[..., -1] = rng.integers(0, 2, size=(n, M))
    Xs = rng.normal(size=(12, d))
    Xs[:, -1] = rng.integers(0, 2, size=12)
    return Xc, rng.integers(0, 2, size=(n, M)), Xs, rng.integers(0, 2, size=12)


def test_neyman_pearson_checks_shapes():
    X0, X1 = _np_data()
    assert neyman_pearson(X0, X1).clients[0].size == 3
    with pytest.raises(ValueError, match=r"X0 must be three-dimensional \(clients, rows, "
                                         r"features\), got shape \(8, 4\)"):
        neyman_pearson(X0[0], X1)
    with pytest.raises(ValueError, match=r"X1 must hold one block per client of X0 \(3\), got 2"):
        neyman_pearson(X0, X1[:2])
    with pytest.raises(ValueError, match=r"X1 must have 4 features \(as X0\), got 3"):
        neyman_pearson(X0, X1[..., :3])
    with pytest.raises(ValueError, match=r"r must be in"):
        neyman_pearson(X0, X1, r=float("nan"))


def test_fairness_checks_labels_shapes_and_the_sensitive_column():
    Xc, yc, Xs, ys = _fair_data()
    assert fairness(Xc, yc, Xs, ys).clients[0].size == 2
    with pytest.raises(ValueError, match=r"yc must hold labels in \{0, 1\}, got -1"):
        fairness(Xc, 2 * yc - 1, Xs, ys)
    with pytest.raises(ValueError, match=r"ys must hold labels in \{0, 1\}, got -1"):
        fairness(Xc, yc, Xs, 2 * ys - 1)
    with pytest.raises(ValueError, match=r"yc must have shape \(2, 10\) \(one label per row of "
                                         r"Xc\), got \(2, 9\)"):
        fairness(Xc, yc[:, :9], Xs, ys)
    with pytest.raises(ValueError, match=r"ys must have one entry per row of Xs \(12\), got 11"):
        fairness(Xc, yc, Xs, ys[:11])
    with pytest.raises(ValueError, match=r"Xs must have 4 features \(as Xc\), got 3"):
        fairness(Xc, yc, Xs[:, :3], ys)
    bad = Xc.copy()
    bad[0, 0, -1] = 0.5
    with pytest.raises(ValueError, match=r"Xc\[\.\.\., -1\] \(the sensitive attribute\) must "
                                         r"hold labels in \{0, 1\}, got 0\.5"):
        fairness(bad, yc, Xs, ys)
