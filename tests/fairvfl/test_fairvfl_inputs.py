"""fairvfl's public API refuses bad inputs with a ``ValueError`` naming the argument and the
remedy, and the MLP's step is never the linear model's by accident.
"""

from __future__ import annotations

import numpy as np
import pytest

from repro.fairvfl import FedBCD
from repro.fairvfl.ceo import ceo_postprocess
from repro.fairvfl.eo import eo_postprocess
from repro.fairvfl.evaluate import metrics_from_scores
from repro.fairvfl.fair_vfl import FairVFL, FairVFLConfig
from repro.fairvfl.instances import linear_blocks, synthetic_instance
from repro.fairvfl.models import LinearBlock, MLPBlock
from repro.fairvfl.problem import FairnessGroups, VFLProblem


@pytest.fixture
def inst():
    return synthetic_instance(np.random.default_rng(3), n=120, m=6, K=3)


def _linear(X, blocks):
    return linear_blocks(X, blocks)


def test_labels_in_zero_one_raise_with_the_remedy(inst):
    """Row 6: a 0-labelled row would add log 2 and no gradient, a different objective."""
    X, y, s, blocks = inst
    y01 = (y + 1) / 2
    for make in (lambda: FairVFL(VFLProblem(_linear(X, blocks), y01, s), FairVFLConfig()),
                 lambda: FedBCD(VFLProblem(_linear(X, blocks), y01, s)),
                 lambda: FairnessGroups.from_labels(y01, s)):
        with pytest.raises(ValueError, match=r"y must hold labels in \{-1, \+1\}") as err:
            make()
        assert "2 * y - 1" in str(err.value)  # the remedy for {0, 1} labels
        assert "0" in str(err.value)  # and what was found


@pytest.mark.parametrize("bad", [np.array([1.0, -1.0, 2.0]), np.array([1.0, -1.0, np.nan])])
def test_other_label_values_raise(inst, bad):
    X, y, s, blocks = inst
    y = y.copy()
    y[:3] = bad
    with pytest.raises(ValueError, match=r"y must hold labels in \{-1, \+1\}"):
        FairVFL(VFLProblem(_linear(X, blocks), y, s), FairVFLConfig())


def test_label_and_group_shapes_are_checked(inst):
    X, y, s, blocks = inst
    with pytest.raises(ValueError, match=r"y must be one-dimensional.*\(120, 1\)"):
        FairVFL(VFLProblem(_linear(X, blocks), y[:, None], s), FairVFLConfig())
    with pytest.raises(ValueError, match=r"s must have one entry per row of y \(120\), got 119"):
        FairVFL(VFLProblem(_linear(X, blocks), y, s[:-1]), FairVFLConfig())
    with pytest.raises(ValueError, match=r"s must hold booleans or 0/1.*got 2"):
        FairVFL(VFLProblem(_linear(X, blocks), y, s.astype(int) * 2), FairVFLConfig())


def test_party_row_counts_must_agree(inst):
    """Row 6: rows that differ across parties gave a raw numpy broadcast error."""
    X, y, s, blocks = inst
    parties = _linear(X, blocks)
    parties[1] = LinearBlock(X[:-5, blocks[1]])
    with pytest.raises(ValueError, match=r"blocks\[1\] has 115 rows, y has 120"):
        FairVFL(VFLProblem(parties, y, s), FairVFLConfig())
    with pytest.raises(ValueError, match="blocks must hold at least one party"):
        FairVFL(VFLProblem([], y, s), FairVFLConfig())


def test_test_scores_check_parties_and_rows(inst):
    X, y, s, blocks = inst
    alg = FairVFL(VFLProblem(_linear(X, blocks), y, s), FairVFLConfig())
    alg.run(2)
    tests = [X[:30, b] for b in blocks]
    assert alg.test_scores(tests).shape == (30,)
    with pytest.raises(ValueError, match=r"X_test_blocks must hold one matrix per party \(3\)"):
        alg.test_scores(tests[:2])
    tests[2] = tests[2][:29]
    with pytest.raises(ValueError, match=r"X_test_blocks\[2\] has 29 rows, X_test_blocks\[0\]"):
        alg.test_scores(tests)
    tests = [X[:30, b] for b in blocks]
    tests[0] = tests[0][:, :1]
    with pytest.raises(ValueError, match=r"X_test_blocks\[0\] has 1 columns, party 0 has 2"):
        alg.test_scores(tests)


def test_mlp_without_an_explicit_step_raises(inst):
    """Row 11: eta = 100 ([J] §5.1, the linear model's) does not train the MLP
    (specs/fairvfl.md §3.2, A15); a FairVFLConfig() with an MLPBlock must not silently use it.
    """
    X, y, s, blocks = inst
    mlp = [MLPBlock(X[:, b], (4, 4)) for b in blocks]
    with pytest.raises(ValueError, match=r"eta.*MLPBlock.*FairVFLConfig\(eta=2\.0\)"):
        FairVFL(VFLProblem(mlp, y, s), FairVFLConfig())
    with pytest.raises(ValueError, match=r"eta"):
        FedBCD(VFLProblem(mlp, y, s))
    alg = FairVFL(VFLProblem(mlp, y, s), FairVFLConfig(eta=2.0))
    assert alg.eta == 2.0


def test_linear_default_step_is_the_papers(inst):
    """[C] §V-A / [J] §5.1: eta_t = 100 for the linear model when no step is given."""
    X, y, s, blocks = inst
    assert FairVFLConfig().eta is None
    a = FairVFL(VFLProblem(_linear(X, blocks), y, s), FairVFLConfig())
    b = FairVFL(VFLProblem(_linear(X, blocks), y, s), FairVFLConfig(eta=100.0))
    assert a.eta == 100.0
    a.run(3)
    b.run(3)
    for ta, tb in zip(a.thetas(), b.thetas(), strict=True):
        assert np.array_equal(ta, tb)


def test_blocks_take_numpy_and_return_numpy(inst):
    X, y, s, blocks = inst
    alg = FairVFL(VFLProblem([MLPBlock(X[:, b], (4, 4)) for b in blocks], y, s),
                  FairVFLConfig(eta=2.0))
    alg.run(1)
    assert all(isinstance(t, np.ndarray) and t.dtype == np.float64 for t in alg.thetas())
    z = alg.test_scores([X[:10, b] for b in blocks])
    assert isinstance(z, np.ndarray) and z.dtype == np.float64


def test_baselines_and_metrics_check_labels_and_lengths(inst):
    X, y, s, blocks = inst
    z = X[:, 0]
    y01 = (y + 1) / 2
    for fn in (eo_postprocess, ceo_postprocess):
        with pytest.raises(ValueError, match=r"y_train must hold labels in \{-1, \+1\}"):
            fn(z, y01, s, z, s, 0)
        with pytest.raises(ValueError, match=r"s_train must have one entry per row of "
                                             r"z_train \(120\), got 100"):
            fn(z, y, s[:100], z, s, 0)
        with pytest.raises(ValueError, match=r"s_test must have one entry per row of "
                                             r"z_test \(50\), got 120"):
            fn(z, y, s, z[:50], s, 0)
    with pytest.raises(ValueError, match=r"y must hold labels in \{-1, \+1\}"):
        metrics_from_scores(y01, s, z)
    with pytest.raises(ValueError, match=r"z must have one entry per row of y \(120\)"):
        metrics_from_scores(y, s, z[:7])


def test_constructor_arguments_are_checked(inst):
    """Problem, config, init, rng and backend each refused with its name."""
    X, y, s, blocks = inst
    problem = VFLProblem(_linear(X, blocks), y, s)
    with pytest.raises(ValueError, match=r"problem must be a VFLProblem.*got list"):
        FairVFL(_linear(X, blocks), FairVFLConfig())
    with pytest.raises(ValueError, match=r"config must be a FairVFLConfig, got dict"):
        FairVFL(problem, {"eps": 0.01})
    for bad in (-1, 1.5, True, np.random.default_rng(0)):
        with pytest.raises(ValueError, match=r"rng must be the run's seed, an integer >= 0"):
            FairVFL(problem, FairVFLConfig(), rng=bad)
    with pytest.raises(ValueError, match=r"backend must be one of"):
        FairVFL(problem, FairVFLConfig(), backend="gpu")
    with pytest.raises(ValueError, match=r"init must hold one starting point per block \(3\), "
                                         r"got 2"):
        FairVFL(problem, FairVFLConfig(), init=[np.zeros(3)] * 2)
    with pytest.raises(ValueError, match=r"init\[1\] must be a vector of party 1's 2 columns, "
                                         r"got shape \(3,\)"):
        FairVFL(problem, FairVFLConfig(), init=[np.zeros(2), np.zeros(3), np.zeros(2)])
    with pytest.raises(ValueError, match=r"eta and eta_schedule are both given"):
        FairVFLConfig(eta=5.0, eta_schedule=lambda t: 5.0)
    with pytest.raises(ValueError, match=r"c_schedule must be a function of the round t"):
        FairVFLConfig(c_schedule=0.1)
    with pytest.raises(ValueError, match=r"groups must be a FairnessGroups built from these"):
        VFLProblem(_linear(X, blocks), y, s, groups=FairnessGroups.from_labels(-y, s))


def test_init_is_the_starting_point(inst):
    """``init`` replaces ``block.init``: the initial upload is ``X^k theta_k^0``."""
    X, y, s, blocks = inst
    theta0 = [np.full(len(b), 0.1 * (k + 1)) for k, b in enumerate(blocks)]
    alg = FairVFL(VFLProblem(_linear(X, blocks), y, s), FairVFLConfig(), init=theta0)
    assert all(np.array_equal(a, b) for a, b in zip(alg.thetas(), theta0, strict=True))
    z0 = sum(X[:, b] @ t for b, t in zip(blocks, theta0, strict=True))
    assert np.max(np.abs(alg.server.z - z0)) <= 1e-12
    theta0[0][:] = 7.0  # the algorithm holds its own copy
    assert np.all(alg.thetas()[0] == 0.1)


def test_mlp_init_depends_on_the_seed_and_the_party_only(inst):
    """Rng = the run's seed: FedBCD and FairVFL of one seed start from one network (J1b)."""
    X, y, s, blocks = inst

    def start(cls, seed, cfg):
        mlp = [MLPBlock(X[:, b], (4, 4)) for b in blocks]
        return [t.copy() for t in cls(VFLProblem(mlp, y, s), cfg, rng=seed).thetas()]

    a = start(FairVFL, 3, FairVFLConfig(eta=2.0, eps=0.1))
    b = start(FedBCD, 3, FairVFLConfig(eta=2.0))
    c = start(FairVFL, 4, FairVFLConfig(eta=2.0))
    assert all(np.array_equal(u, v) for u, v in zip(a, b, strict=True))
    assert not any(np.array_equal(u, v) for u, v in zip(a, c, strict=True))
    assert not np.array_equal(a[0], a[1][: len(a[0])])  # one generator per party


def test_loop_backend_equals_the_vectorized_one(inst):
    """backend='loop' (per-sample VJP, the oracle) gives the vectorized run's iterates."""
    X, y, s, blocks = inst
    cfg = FairVFLConfig(eps=0.01, eta=5.0, beta=1.0, Q=2, roles="journal")
    fast = FairVFL(VFLProblem(_linear(X, blocks), y, s), cfg)
    loop = FairVFL(VFLProblem(_linear(X, blocks), y, s), cfg, backend="loop")
    fast.run(10)
    loop.run(10)
    for a, b in zip(fast.thetas(), loop.thetas(), strict=True):
        assert np.max(np.abs(a - b)) <= 1e-12 * (1 + np.max(np.abs(a)))
    assert np.max(np.abs(fast.state.lam - loop.state.lam)) <= 1e-12
    assert fast.state.lam.max() > 0  # the constraint acted in the compared run
