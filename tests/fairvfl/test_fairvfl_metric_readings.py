"""DFP/DFN under the five readings of [J] §5.2, against numbers worked out
by hand on an 8-sample example.
"""

from __future__ import annotations

import numpy as np
import pytest

from repro.core.metrics import dfn, dfp
from repro.fairvfl.evaluate import metrics_from_decisions
from repro.fairvfl.metric_readings import METRIC_READINGS, PRIMARY_METRIC_READING, rate_readings

# group a: rows 0-3, group b: rows 4-7
Y = np.array([1, 1, -1, -1, 1, -1, -1, -1])
S = np.array([True] * 4 + [False] * 4)
YHAT = np.array([1, -1, 1, -1, 1, 1, -1, -1])
H = np.array([0.9, 0.4, 0.6, 0.2, 0.8, 0.7, 0.3, 0.1])

# By hand (see the rows above):
#   a: negatives rows 2, 3 -> one predicted +  -> FPR_a = 1/2; positives rows 0, 1 -> one
#      predicted - -> FNR_a = 1/2.   b: negatives rows 5, 6, 7 -> one + -> FPR_b = 1/3;
#      positive row 4 predicted + -> FNR_b = 0.
#   conditional: DFP = 1/2 - 1/3 = 1/6, DFN = 1/2 - 0 = 1/2; swapped: (1/2, 1/6).
#   joint: FP_a = 1/4, FP_b = 1/4 -> DFP 0; FN_a = 1/4, FN_b = 0 -> DFN 1/4.
#   score1: mean h on negatives a = (0.6 + 0.2)/2 = 0.4, b = (0.7 + 0.3 + 0.1)/3 = 11/30
#      -> DFP = 1/30; mean 1 - h on positives a = (0.1 + 0.6)/2 = 0.35, b = 0.2 -> DFN 0.15.
#   score0: (0.15, 1/30).  accuracy: rows 0, 3, 4, 6, 7 right -> 5/8.
HAND = {"dfp": 1 / 6, "dfn": 1 / 2, "dfp_cond": 1 / 6, "dfn_cond": 1 / 2,
        "dfp_swap": 1 / 2, "dfn_swap": 1 / 6,
        "dfp_joint": 0.0, "dfn_joint": 1 / 4, "dfp_score1": 1 / 30, "dfn_score1": 0.15,
        "dfp_score0": 0.15, "dfn_score0": 1 / 30}


@pytest.mark.parametrize("key", sorted(HAND))
def test_each_reading_on_the_hand_example(key):
    got = rate_readings(Y, S, (YHAT == 1).astype(float), H)
    assert abs(got[key] - HAND[key]) <= 1e-12


def test_metrics_carry_every_reading_and_the_hand_accuracy():
    m = metrics_from_decisions(Y, S, YHAT, np.zeros(8), H)
    assert abs(m["acc"] - 5 / 8) <= 1e-15
    assert (m["fpr_a"], m["fpr_b"], m["fnr_a"], m["fnr_b"]) == pytest.approx(
        (1 / 2, 1 / 3, 1 / 2, 0.0), abs=1e-15)
    for r in METRIC_READINGS.values():
        dfp_r, dfn_r = r.values(m)
        assert abs(dfp_r - HAND[r.keys[0]]) <= 1e-12 and abs(dfn_r - HAND[r.keys[1]]) <= 1e-12
        assert r.basis and r.title
    assert PRIMARY_METRIC_READING.keys == ("dfp_cond", "dfn_cond")
    assert (m["dfp"], m["dfn"]) == (m["dfp_cond"], m["dfn_cond"])
    assert len(METRIC_READINGS) == 5


def test_primary_equals_core_rates_and_a_planted_swap_is_seen():
    rng = np.random.default_rng(0)
    y = np.where(rng.random(300) < 0.3, 1, -1)
    s = rng.random(300) < 0.4
    yhat = np.where(rng.random(300) < 0.35, 1, -1)
    got = rate_readings(y, s, (yhat == 1).astype(float), rng.random(300))
    assert abs(got["dfp"] - dfp(y, yhat, s)) <= 1e-15
    assert abs(got["dfn"] - dfn(y, yhat, s)) <= 1e-15
    assert abs(got["dfp"] - got["dfn"]) > 1e-3  # the swap reading differs from the primary


def test_randomized_predictor_uses_probabilities():
    q = np.full(8, 0.5)
    got = rate_readings(Y, S, q, H)
    assert got["dfp"] == 0.0 and got["dfn"] == 0.0
    # joint: FP_a = 0.5 * 2 / 4, FP_b = 0.5 * 3 / 4 -> 1/8
    assert abs(got["dfp_joint"] - 1 / 8) <= 1e-15


def test_bad_probability_is_refused():
    with pytest.raises(ValueError, match="q must hold probabilities"):
        rate_readings(Y, S, np.full(8, 1.5), H)
