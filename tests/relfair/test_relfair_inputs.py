"""relfair's public API checks labels, shapes and client parts with a ``ValueError`` naming
the argument; ``ClientEngine.evaluate`` returns numpy; a numpy ``theta0`` is accepted.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.relfair import (
    ClientEngine,
    ClientProblem,
    FedAvg,
    FedAvgConfig,
    RelativeAmbiguitySet,
    ScaffPDIA,
    ScaffPDIAConfig,
    TrainSetup,
    init_params,
    split_clients,
)

N, D, K = 4, 5, 3


def _arrays(seed=0, rows=200):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, D)).astype(np.float32)
    y = (X[:, :K] + 0.3 * rng.normal(size=(rows, K))).argmax(axis=1)
    parts = np.array_split(rng.permutation(rows), N)
    return X, y, parts, rng


@pytest.fixture
def engine():
    X, y, parts, rng = _arrays()
    return ClientEngine(split_clients(X, y, parts, rng, classes=K))


def test_split_clients_checks_shapes():
    X, y, parts, rng = _arrays()
    with pytest.raises(ValueError, match=r"X must be two-dimensional \(rows, features\), "
                                         r"got shape \(200,\)"):
        split_clients(X[:, 0], y, parts, rng, classes=K)
    with pytest.raises(ValueError, match=r"y must have one entry per row of X \(200\), got 199"):
        split_clients(X, y[:-1], parts, rng, classes=K)
    with pytest.raises(ValueError, match=r"y must be one-dimensional"):
        split_clients(X, y[:, None], parts, rng, classes=K)


def test_split_clients_checks_labels():
    X, y, parts, rng = _arrays()
    with pytest.raises(ValueError, match=r"y must hold integer labels in 0\.\.2 "
                                         r"\(classes = 3\), got 3"):
        split_clients(X, np.where(y == 0, 3, y), parts, rng, classes=K)
    with pytest.raises(ValueError, match=r"y must hold integer labels.*got -1"):
        split_clients(X, y - 1, parts, rng, classes=K)
    with pytest.raises(ValueError, match=r"y must hold integer labels.*got \d\.5"):
        split_clients(X, y + 0.5, parts, rng, classes=K)


def test_split_clients_checks_parts():
    X, y, parts, rng = _arrays()
    bad = [p.copy() for p in parts]
    bad[2][0] = 200
    with pytest.raises(ValueError, match=r"parts\[2\] holds row 200, X has 200 rows"):
        split_clients(X, y, bad, rng, classes=K)
    bad = [p.copy() for p in parts]
    bad[3][0] = bad[1][0]
    with pytest.raises(ValueError, match=r"parts\[3\] repeats row \d+ of parts\[1\]"):
        split_clients(X, y, bad, rng, classes=K)
    with pytest.raises(ValueError, match=r"parts must hold at least one client"):
        split_clients(X, y, [], rng, classes=K)


def test_evaluate_returns_numpy(engine):
    """Row 11: evaluate returned torch tensors beside numpy state."""
    theta = init_params(D, 8, K, torch.Generator().manual_seed(0))
    loss, acc = engine.evaluate(theta, "val")
    for a in (loss, acc):
        assert isinstance(a, np.ndarray) and a.dtype == np.float64 and a.shape == (N,)
    assert np.all((acc >= 0) & (acc <= 1)) and np.all(loss > 0)
    # a numpy model gives the same numbers
    loss2, acc2 = engine.evaluate(tuple(p.numpy() for p in theta), "val")
    assert np.array_equal(loss, loss2) and np.array_equal(acc, acc2)


def test_evaluate_checks_split_and_model(engine):
    theta = init_params(D, 8, K, torch.Generator().manual_seed(0))
    with pytest.raises(ValueError, match=r"split must be one of \('train', 'val'\), got 'test'"):
        engine.evaluate(theta, "test")
    wrong = init_params(D + 1, 8, K, torch.Generator().manual_seed(0))
    with pytest.raises(ValueError, match=r"theta\[0\] must have shape \(5, 8\).*\(6, 8\)"):
        engine.evaluate(wrong, "val")
    with pytest.raises(ValueError, match=r"theta must be a tuple \(W1, b1, W2, b2\)"):
        engine.evaluate(theta[:2], "val")


def test_algorithms_take_a_numpy_theta0(engine):
    """Numpy theta0 equals the same values as torch tensors, round for round."""
    problem = ClientProblem(engine.data, TrainSetup(batch=8, hidden=8, dropout=0.0))
    theta = init_params(D, 8, K, torch.Generator().manual_seed(0))
    a = FedAvg(problem, FedAvgConfig(), init=tuple(p.numpy().copy() for p in theta),
               rng=torch.Generator().manual_seed(1))
    b = FedAvg(problem, FedAvgConfig(), init=theta, rng=torch.Generator().manual_seed(1))
    a.run(2)
    b.run(2)
    assert all(torch.equal(p, q) for p, q in zip(a.state.theta, b.state.theta, strict=True))


def test_algorithms_check_theta0_shapes(engine):
    problem = ClientProblem(engine.data, TrainSetup(batch=8, hidden=8, dropout=0.0))
    wrong = init_params(D, 8, K + 1, torch.Generator().manual_seed(0))
    config = ScaffPDIAConfig(RelativeAmbiguitySet(N, 0.5, 0.5, 0.2))
    with pytest.raises(ValueError, match=r"init\[2\] must have shape \(8, 3\).*\(8, 4\)"):
        ScaffPDIA(problem, config, init=wrong, rng=torch.Generator().manual_seed(1))
    theta = init_params(D, 9, K, torch.Generator().manual_seed(0))
    with pytest.raises(ValueError, match=r"init\[0\] must have shape \(5, 8\)"):
        FedAvg(problem, FedAvgConfig(), init=theta, rng=torch.Generator().manual_seed(1))
    with pytest.raises(ValueError, match="ClientProblem.data must be a ClientData"):
        ClientProblem(engine, TrainSetup())


def test_init_none_is_the_default_init_from_rng_and_rng_none_is_seed_0(engine):
    """``init=None``: theta^0 drawn from ``rng`` (init_params); ``rng=None``: seed 0, never
    global state (two runs equal bitwise).
    """
    problem = ClientProblem(engine.data, TrainSetup(batch=8, hidden=8, dropout=0.0))
    a = FedAvg(problem, FedAvgConfig(local_work="steps"), rng=torch.Generator().manual_seed(4))
    ref = init_params(D, 8, K, torch.Generator().manual_seed(4))
    assert all(torch.equal(p, q) for p, q in zip(a.state.theta, ref, strict=True))
    torch.manual_seed(123)
    b = FedAvg(problem, FedAvgConfig(local_work="steps")).run(2)
    torch.manual_seed(456)
    c = FedAvg(problem, FedAvgConfig(local_work="steps")).run(2)
    assert all(torch.equal(p, q) for p, q in zip(b.theta, c.theta, strict=True))
