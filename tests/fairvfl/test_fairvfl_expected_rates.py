"""EO / CEO as randomized predictors: exact expectations against 10^5
draws, our EO against fairlearn's ThresholdOptimizer, the ROC-based reading of "EO".
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from repro.fairvfl.ceo import ceo_apply, ceo_expected, ceo_mixing
from repro.fairvfl.eo import eo_apply, eo_expected, eo_fit
from repro.fairvfl.evaluate import metrics_from_predictor
from repro.fairvfl.roc_eo import roc_eo_expected, roc_eo_fit

LINEAR = ("acc", "fpr_a", "fpr_b", "fnr_a", "fnr_b")  # linear in q: E[metric] = metric(E q)


def _problem(seed, n):
    rng = np.random.default_rng(seed)
    s = rng.random(n) < 0.4
    y = np.where(rng.random(n) < np.where(s, 0.3, 0.6), 1, -1)
    z = 1.2 * y + rng.standard_normal(n) + 0.8 * s - 0.3
    return z, y, s


def _draw_average(draw, n_draws, n):
    rng = np.random.Generator(np.random.PCG64(123))
    ones, score = np.zeros(n), np.zeros(n)
    for _ in range(n_draws):
        yhat, p_tilde = draw(rng)
        ones += yhat == 1
        score += p_tilde
    return ones / n_draws, score / n_draws


@pytest.mark.parametrize("method", ["eo", "ceo"])
def test_expected_rates_equal_the_average_of_1e5_draws(method):
    z, y, s = _problem(0, 2000)
    zt, yt, st = _problem(1, 80)
    if method == "eo":
        p = eo_fit(z, y, s)
        assert np.any((p > 0.01) & (p < 0.99))  # a genuinely randomized predictor
        e = eo_expected(z, y, s, zt, st)
        draw = lambda rng: eo_apply(p, zt, st, rng)  # noqa: E731
    else:
        mix = ceo_mixing(expit(z), (y == 1).astype(int), s, "fnr")
        assert 0.05 < mix["alpha"] < 0.95
        e = ceo_expected(z, y, s, zt, st)
        draw = lambda rng: ceo_apply(mix, zt, st, rng)  # noqa: E731
    q_avg, score_avg = _draw_average(draw, 100_000, len(zt))
    got = metrics_from_predictor(yt, st, e.q, e.losses, e.score)
    avg = metrics_from_predictor(yt, st, q_avg, e.losses, score_avg)
    for key in (*LINEAR, "dfp_score1", "dfn_score1"):
        assert abs(got[key] - avg[key]) <= 1e-2, key
    # per row, not only in aggregate (10^5 draws: std <= 0.0016 per row)
    assert np.max(np.abs(e.q - q_avg)) <= 1e-2
    assert np.max(np.abs(e.score - score_avg)) <= 1e-2


def test_a_planted_error_in_the_expectation_is_seen_by_the_draws():
    """The check can fail: a predictor that ignores the flips differs from the draws."""
    z, y, s = _problem(0, 2000)
    zt, yt, st = _problem(1, 80)
    p = eo_fit(z, y, s)
    q_avg, _ = _draw_average(lambda rng: eo_apply(p, zt, st, rng), 20_000, len(zt))
    planted = (zt >= 0).astype(float)
    assert np.max(np.abs(planted - q_avg)) > 0.05


def _fixed_scores(binary: bool):
    """A prefit sklearn estimator whose prediction is column 0 (thresholded or not)."""
    from sklearn.base import BaseEstimator, ClassifierMixin

    class FixedScores(ClassifierMixin, BaseEstimator):
        def __init__(self, binary=True):
            self.binary = binary

        def fit(self, X, y):
            self.fitted_ = True
            return self

        def predict(self, X):
            z = np.asarray(X)[:, 0]
            return (z >= 0).astype(int) if self.binary else expit(z)

    return FixedScores(binary).fit(None, None)


@pytest.mark.parametrize("binary", [True, False], ids=["decisions", "scores"])
def test_eo_agrees_with_fairlearn_threshold_optimizer(binary):
    """Fairlearn optimizes on a 1000-point FPR grid; ours is the exact LP: accuracy to 0.1
    point, every group rate to 0.005 (decisions: our EO; scores: the ROC-based reading).
    """
    postprocessing = pytest.importorskip("fairlearn.postprocessing")  # the dev extra
    z, y, s = _problem(0, 20_000)
    zt, yt, st = _problem(1, 20_000)
    to = postprocessing.ThresholdOptimizer(
        estimator=_fixed_scores(binary), constraints="equalized_odds",
        objective="accuracy_score", prefit=True, predict_method="predict")
    to.fit(z[:, None], (y == 1).astype(int), sensitive_features=s)
    q_fl = to._pmf_predict(zt[:, None], sensitive_features=st)[:, 1]
    e = (eo_expected if binary else roc_eo_expected)(z, y, s, zt, st)
    ours = metrics_from_predictor(yt, st, e.q, e.losses, e.score)
    theirs = metrics_from_predictor(yt, st, q_fl, e.losses, e.score)
    assert abs(ours["acc"] - theirs["acc"]) <= 1e-3
    for key in LINEAR[1:]:
        assert abs(ours[key] - theirs[key]) <= 5e-3, key


def test_roc_eo_equalizes_training_rates_and_beats_the_decision_predictor():
    z, y, s = _problem(3, 3000)
    Y = (y == 1).astype(int)
    mix, err = roc_eo_fit(expit(z), Y, s)
    e = roc_eo_expected(z, y, s, z, s)
    train = metrics_from_predictor(y, s, e.q, e.losses, e.score)
    assert abs(train["fpr_a"] - train["fpr_b"]) <= 1e-9
    assert abs(train["fnr_a"] - train["fnr_b"]) <= 1e-9
    assert abs((1 - train["acc"]) - err) <= 1e-9
    for g in ("a", "b"):
        assert abs(mix[g].weights.sum() - 1) <= 1e-12
    # the thresholded decision is one ROC point per group: the score-based LP is no worse
    dec = metrics_from_predictor(y, s, eo_expected(z, y, s, z, s).q, e.losses, e.score)
    assert train["acc"] >= dec["acc"] - 1e-12
