"""The registered majority-vs-EO diagnostic (issue #16 item 3, first bullet)."""

from __future__ import annotations

import numpy as np
import pytest

from repro.fairvfl.baselines import eo_program, solve_eo_program
from repro.fairvfl.diagnostics import DIAGNOSTICS, majority_accuracy, majority_vs_eo


def test_adult_majority_rate_against_the_table_counts_and_j_eo():
    maj = majority_accuracy("adult", range(5))
    # every split holds all 45,222 rows, 11,208 of them > 50K (spec §5.1): the majority label
    # (<= 50K) is right on 34,014 rows whichever way the rows are split
    for tr, te in zip(maj["train_pct"], maj["test_pct"], strict=True):
        assert abs((40_000 * tr + 5_222 * te) / 45_222 - 100 * 34_014 / 45_222) <= 1e-9
    out = majority_vs_eo(["adult"])["adult"]
    assert out["J_table1_LM"] == 73.23 and out["C_tableI_LM"] == 79.2
    assert abs(out["C_minus_J_table1"] - 5.97) <= 1e-9
    # [J]'s EO is below the majority rate on the test and on the training splits (by ~2 pt)
    assert out["J_table1_minus_majority"] < -1.5
    assert out["J_table1_minus_majority_train"] < -1.5
    assert DIAGNOSTICS["fairvfl.majority_vs_eo"].function is majority_vs_eo


@pytest.mark.parametrize("seed", range(5))
def test_eo_optimum_is_never_worse_than_the_constant_classifiers(seed):
    """The reason behind the diagnostic: the constant classifiers (p = 0 or p = 1) satisfy
    equalized odds, so the LP's training error is at most min(P, N) / n."""
    rng = np.random.default_rng(seed)
    n = 500
    s = rng.random(n) < 0.3
    Y = (rng.random(n) < 0.25).astype(int)
    yhat = (rng.random(n) < np.where(Y == 1, 0.5 + 0.3 * s, 0.1)).astype(int)
    prog = eo_program(yhat, Y, s, "odds")
    _, err = solve_eo_program(prog)
    assert err <= min(Y.mean(), 1 - Y.mean()) + 1e-12
    for p in (np.zeros(4), np.ones(4)):
        assert np.max(np.abs(prog.A_eq @ p)) <= 1e-15
        assert abs(prog.constant + prog.c @ p - (Y.mean() if p[0] == 0 else 1 - Y.mean())) \
            <= 1e-12
