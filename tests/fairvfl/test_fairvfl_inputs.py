"""Issue #14 rows 6 and 11 (fairvfl): the public API refuses bad inputs with a ``ValueError``
naming the argument and the remedy, and the MLP's step is never the linear model's by accident.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.fairvfl import FedBCD
from repro.fairvfl.ceo import ceo_postprocess
from repro.fairvfl.eo import eo_postprocess
from repro.fairvfl.evaluate import metrics_from_scores
from repro.fairvfl.fair_vfl import FairVFL, FairVFLParams
from repro.fairvfl.instances import linear_blocks, synthetic_instance
from repro.fairvfl.models import LinearBlock, MLPBlock
from repro.fairvfl.problem import FairnessGroups


@pytest.fixture
def inst():
    return synthetic_instance(np.random.default_rng(3), n=120, m=6, K=3)


def _linear(X, blocks):
    return linear_blocks(X, blocks)


def test_labels_in_zero_one_raise_with_the_remedy(inst):
    """Row 6: a 0-labelled row would add log 2 and no gradient, a different objective."""
    X, y, s, blocks = inst
    y01 = (y + 1) / 2
    for make in (lambda: FairVFL(_linear(X, blocks), y01, s, FairVFLParams()),
                 lambda: FedBCD(_linear(X, blocks), y01, s),
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
        FairVFL(_linear(X, blocks), y, s, FairVFLParams())


def test_label_and_group_shapes_are_checked(inst):
    X, y, s, blocks = inst
    with pytest.raises(ValueError, match=r"y must be one-dimensional.*\(120, 1\)"):
        FairVFL(_linear(X, blocks), y[:, None], s, FairVFLParams())
    with pytest.raises(ValueError, match=r"s must have one entry per row of y \(120\), got 119"):
        FairVFL(_linear(X, blocks), y, s[:-1], FairVFLParams())
    with pytest.raises(ValueError, match=r"s must hold booleans or 0/1.*got 2"):
        FairVFL(_linear(X, blocks), y, s.astype(int) * 2, FairVFLParams())


def test_party_row_counts_must_agree(inst):
    """Row 6: rows that differ across parties gave a raw numpy broadcast error."""
    X, y, s, blocks = inst
    parties = _linear(X, blocks)
    parties[1] = LinearBlock(X[:-5, blocks[1]])
    with pytest.raises(ValueError, match=r"blocks\[1\] has 115 rows, y has 120"):
        FairVFL(parties, y, s, FairVFLParams())
    with pytest.raises(ValueError, match="blocks must hold at least one party"):
        FairVFL([], y, s, FairVFLParams())


def test_test_scores_check_parties_and_rows(inst):
    X, y, s, blocks = inst
    alg = FairVFL(_linear(X, blocks), y, s, FairVFLParams())
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
    (specs/fairvfl.md §3.2, A15); a FairVFLParams() with an MLPBlock must not silently use it.
    """
    X, y, s, blocks = inst
    gens = [torch.Generator().manual_seed(k) for k in range(len(blocks))]
    mlp = [MLPBlock(X[:, b], (4, 4)) for b in blocks]
    with pytest.raises(ValueError, match=r"eta.*MLPBlock.*FairVFLParams\(eta=2\.0\)"):
        FairVFL(mlp, y, s, FairVFLParams(), init_generators=gens)
    with pytest.raises(ValueError, match=r"eta"):
        FedBCD(mlp, y, s, init_generators=gens)
    alg = FairVFL(mlp, y, s, FairVFLParams(eta=2.0), init_generators=gens)
    assert alg.eta == 2.0


def test_linear_default_step_is_the_papers(inst):
    """[C] §V-A / [J] §5.1: eta_t = 100 for the linear model when no step is given."""
    X, y, s, blocks = inst
    assert FairVFLParams().eta is None
    a = FairVFL(_linear(X, blocks), y, s, FairVFLParams())
    b = FairVFL(_linear(X, blocks), y, s, FairVFLParams(eta=100.0))
    assert a.eta == 100.0
    a.run(3)
    b.run(3)
    for ta, tb in zip(a.thetas(), b.thetas(), strict=True):
        assert np.array_equal(ta, tb)


def test_blocks_take_numpy_and_return_numpy(inst):
    X, y, s, blocks = inst
    gens = [torch.Generator().manual_seed(k) for k in range(len(blocks))]
    alg = FairVFL([MLPBlock(X[:, b], (4, 4)) for b in blocks], y, s,
                  FairVFLParams(eta=2.0), init_generators=gens)
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
