"""The shared Clarabel fallback: the tolerance used is reported, only `optimal` is accepted."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from repro.core.groundtruth import clarabel_settings, solve_clarabel


def test_settings():
    assert clarabel_settings(1e-9) == {"tol_gap_abs": 1e-9, "tol_gap_rel": 1e-9,
                                       "tol_feas": 1e-9, "max_iter": 500}


def test_first_tolerance_solves_a_simple_qp():
    # min ||x - y||^2 s.t. sum x = 1, x >= 0, with y = (0.5, 0.5, 2): x* = (0, 0, 1),
    # f* = 0.25 + 0.25 + 1 = 1.5
    x = cp.Variable(3)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(x - np.array([0.5, 0.5, 2.0]))),
                      [cp.sum(x) == 1, x >= 0])
    assert solve_clarabel(prob) == 0
    assert prob.status == "optimal"
    assert abs(prob.value - 1.5) < 1e-8
    assert np.max(np.abs(x.value - [0.0, 0.0, 1.0])) < 1e-5


def test_infeasible_problem_exhausts_every_tolerance():
    x = cp.Variable()
    prob = cp.Problem(cp.Minimize(x), [x >= 1, x <= 0])
    assert solve_clarabel(prob, (1e-9, 1e-8)) == 2
    assert prob.status == "infeasible"
