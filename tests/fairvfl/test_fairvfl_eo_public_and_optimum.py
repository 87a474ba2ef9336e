"""The readings added for the unstated settings of the Fair VFL tables: the public equalized-odds
code's LP (repro/fairvfl/eo_public.py) against cvxpy/Clarabel written from the description
independently; FedBCD's optimum (repro/fairvfl/optimum.py) against cvxpy's logistic
regression; the recorded multipliers are the last primal step's.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from scipy.special import expit

from repro.fairvfl.eo_public import eo_public_expected, eo_public_fit, eo_public_program
from repro.fairvfl.postprocessing import labels01

CLARABEL = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}


def _scores(seed, n=400):
    rng = np.random.default_rng(seed)
    s = rng.random(n) < 0.4
    y = np.where(rng.random(n) < np.where(s, 0.3, 0.6), 1, -1)
    z = 1.2 * y + rng.standard_normal(n) + 0.8 * s
    return z, y, s


def _cvxpy_public(z, Y, a):
    """The description written row by row: a decision kept with probability p_{yhat,g} scores
    h, flipped 1 - h; the objective sums each group's FPR~ + FNR~ of the decisions; the
    constraints equalize the mean post-processed score on negatives and on positives.
    """
    p = cp.Variable(4)
    h, yhat = expit(z), (z >= 0).astype(int)
    obj, g_pos, g_neg = 0, [], []
    for j, mask in enumerate((a, ~a)):
        p1, p0 = p[2 * j], p[2 * j + 1]
        means = []
        for lab in (1, 0):
            rows = np.flatnonzero(mask & (Y == lab))
            # P(Y~ = 1) of each row, and its post-processed score E[p~]
            prob_one = [p1 if yhat[i] else p0 for i in rows]
            score = [p1 * h[i] + (1 - p1) * (1 - h[i]) if yhat[i]
                     else p0 * (1 - h[i]) + (1 - p0) * h[i] for i in rows]
            means.append((sum(prob_one) / len(rows), sum(score) / len(rows)))
        (tpr, gpos), (fpr, gneg) = means
        obj = obj + fpr + (1 - tpr)
        g_pos.append(gpos)
        g_neg.append(gneg)
    prob = cp.Problem(cp.Minimize(obj), [p >= 0, p <= 1, g_pos[0] == g_pos[1],
                                         g_neg[0] == g_neg[1]])
    prob.solve(solver=cp.CLARABEL, **CLARABEL)
    return prob, p.value


@pytest.mark.parametrize("seed", range(4))
def test_the_public_code_lp_matches_its_description_solved_by_cvxpy(seed):
    z, y, s = _scores(seed, n=160)
    Y = labels01(y)
    p = eo_public_fit(z, y, s)
    prob, p_cvx = _cvxpy_public(z, Y, s)
    assert prob.status == "optimal"
    c, A = eo_public_program(z, Y, s)
    # the same optimal value (our objective drops the constant 2 of sum_g (1 + ...))
    assert abs((2.0 + c @ p) - prob.value) <= 1e-7
    assert np.max(np.abs(A[:, :4] @ p - A[:, 4])) <= 1e-9
    assert np.all(p >= -1e-12) and np.all(p <= 1 + 1e-12)
    # its generalized rates are equal across the groups, evaluated from the definition
    h, yhat = expit(z), (z >= 0).astype(int)
    for lab in (1, 0):
        rates = []
        for j, mask in enumerate((s, ~s)):
            rows = mask & (Y == lab)
            keep = np.where(yhat[rows] == 1, p[2 * j], 1 - p[2 * j + 1])
            rates.append(np.mean(keep * h[rows] + (1 - keep) * (1 - h[rows])))
        assert abs(rates[0] - rates[1]) <= 1e-9


def test_the_public_code_differs_from_hardts_program_where_the_groups_differ_in_size():
    """Hardt's LP weights each group's errors by its rows; the public code's sums the rates:
    on a problem with a small group the two choose different mixing rates.
    """
    from repro.fairvfl.eo import eo_fit

    z, y, s = _scores(3, n=600)
    assert np.max(np.abs(eo_public_fit(z, y, s) - eo_fit(z, y, s))) > 0.05
    e = eo_public_expected(z, y, s, z, s)
    assert np.all((e.q >= 0) & (e.q <= 1)) and e.losses.shape == z.shape


def test_fedbcds_optimum_is_the_logistic_regression_minimizer():
    from repro.fairvfl.instances import linear_blocks, synthetic_instance
    from repro.fairvfl.optimum import lm_optimum

    rng = np.random.default_rng(0)
    X, y, s, blocks = synthetic_instance(rng, n=120, m=8, K=3)
    parts = linear_blocks(X, blocks)
    mu = 2e-4 / 120
    theta = np.concatenate(lm_optimum(parts, y, mu))
    Xall = np.hstack([np.asarray(p.X.toarray() if hasattr(p.X, "toarray") else p.X)
                      for p in parts])
    w = cp.Variable(Xall.shape[1])
    obj = cp.sum(cp.logistic(cp.multiply(-y, Xall @ w))) / len(y) + mu / 2 * cp.sum_squares(w)
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver=cp.CLARABEL, **CLARABEL)
    assert prob.status == "optimal"
    ours = np.mean(np.logaddexp(0, -y * (Xall @ theta))) + mu / 2 * theta @ theta
    assert ours <= prob.value + 1e-9
    assert np.max(np.abs(theta - w.value)) <= 1e-4 * (1 + np.max(np.abs(w.value)))


def test_the_recorded_multipliers_are_the_ones_the_last_primal_step_used():
    """``lam1``/``lam2`` of a record: lam^(T-1), what round T's primal step read; the dual
    step after it computes lam^(T), which no primal step uses.
    """
    from repro.engine.experiment import RunContext
    from repro.fairvfl.experiments._run import cell_algorithm, run_cell

    cfg = {"dataset": "crime", "version": "conf", "model": "LM", "method": "FairVFL",
           "eps": 0.01, "Q": 1, "T": 30, "eta": 100.0, "seed": 0, "log_every": 1}
    _, alg = cell_algorithm(cfg)
    used = []   # the lam each round's primal step read: the one broadcast to the parties
    alg.run(30, callback=lambda t, state, msgs: used.append(
        next(m.lam for m in msgs.downlink if hasattr(m, "lam")).copy()))
    rec = run_cell(cfg, RunContext("fairvfl.conf_table1", cfg, 1))
    assert (rec.metrics["lam1"], rec.metrics["lam2"]) == (used[-1][0], used[-1][1])
    assert used[-1][0] > 0   # the constraint is active: the check compares nonzero values
    assert alg.state.lam[0] != used[-1][0]   # the extra dual step moved it: not recorded
