"""What the post-processing baselines EO and CEO share (docs/decisions.md#fairvfl-eo,
docs/decisions.md#fairvfl-ceo, docs/decisions.md#fairvfl-pooling).

Both are fitted on FedBCD's pooled training scores (docs/decisions.md#fairvfl-post-processing-fit)
and applied to the test split: ``y`` in {-1, +1}, ``s`` True = group a. Both are randomized
predictors; a record reports their exact expectations per test row (``ExpectedPrediction``)
and, for continuity, one draw with ``Generator(PCG64(seed + TEST_SEED_OFFSET))``. The score-flip
convention (a flipped decision replaces the score ``h`` by ``1 - h``) is
docs/decisions.md#fairvfl-post-processing-deo. The algorithms: ``eo`` (Hardt et al.), ``ceo``
(Pleiss et al.), ``roc_eo`` (Hardt et al. on the continuous score).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from repro.core.validation import check_labels, check_vector
from repro.fairvfl.evaluate import post_processed_losses

TEST_SEED_OFFSET = 10_000  # docs/decisions.md#fairvfl-eo: Generator(PCG64(seed_run + 10_000))


@dataclass(frozen=True)
class ExpectedPrediction:
    """A randomized predictor by its exact expectations per test row: ``q = P(Y~ = +1)``,
    ``score = E[p~]`` (probability of ``y = +1`` after post-processing) and ``losses =
    E[-log clip(p~)]`` (the loss-based DEO is linear in the per-row losses).
    """

    q: np.ndarray
    score: np.ndarray
    losses: np.ndarray



def flip_expectation(q, z_test) -> ExpectedPrediction:
    """Expectations of a predictor that flips the base decision ``1[z >= 0]`` at random with
    ``P(Y~ = 1) = q`` and, where it flips, replaces the score ``h`` by ``1 - h``
    (docs/decisions.md#fairvfl-post-processing-deo).
    """
    q = np.asarray(q, dtype=np.float64)
    h = expit(np.asarray(z_test, dtype=np.float64))
    keep = np.where(np.asarray(z_test) >= 0, q, 1.0 - q)
    losses = (keep * post_processed_losses(h) + (1.0 - keep) * post_processed_losses(1.0 - h))
    return ExpectedPrediction(q, keep * h + (1.0 - keep) * (1.0 - h), losses)



def labels01(y) -> np.ndarray:
    return (np.asarray(y) == 1).astype(np.int64)



def check_postprocess_inputs(z_train, y_train, s_train, z_test, s_test) -> None:
    """One score, label in {-1, +1} and group per training row; one group per test row."""
    z_train = check_vector("z_train", z_train)
    check_vector("y_train", y_train, length=len(z_train), length_of="z_train")
    check_labels("y_train", y_train, (-1, 1), shown="labels in {-1, +1}",
                 remedy="for labels in {0, 1} pass 2 * y - 1")
    check_vector("s_train", s_train, length=len(z_train), length_of="z_train")
    z_test = check_vector("z_test", z_test)
    check_vector("s_test", s_test, length=len(z_test), length_of="z_test")
