"""No silent long runs: Algorithms 1 and 3 decide before their first round whether the convex
constraint set is empty, and say so in one error instead of running every round their caps
allow; a run says how it ended (its stop test, or the cap it exhausted); ``verbose`` prints a
line per outer iteration.
"""

from __future__ import annotations

import time

import cvxpy as cp
import numpy as np
import pytest

from repro.constrfl import CProxAL, ProxAL, ProxALConfig, ProxALInit
from repro.constrfl.feasibility import InfeasibleConstraints, feasibility
from repro.constrfl.problem import fairness, lcqp_reference, neyman_pearson


def _data():
    """4 clients x 60 class-0 and 60 class-1 rows, d = 5, classes N(-0.5, 1) and N(+0.5, 1)."""
    rng = np.random.default_rng(42)
    X0 = rng.normal(-0.5, 1.0, size=(4, 60, 5))
    X1 = rng.normal(0.5, 1.0, size=(4, 60, 5))
    return X0, X1


def _smallest_largest_loss(X1) -> float:
    """min_w max_i (class-1 mean logistic loss of client i), by cvxpy (Clarabel)."""
    w = cp.Variable(X1.shape[2])
    losses = [cp.sum(cp.logistic(-X1[i] @ w)) / X1.shape[1] for i in range(X1.shape[0])]
    prob = cp.Problem(cp.Minimize(cp.maximum(*losses)))
    prob.solve(solver=cp.CLARABEL)
    assert prob.status == cp.OPTIMAL
    return float(prob.value)


@pytest.mark.parametrize("algorithm", [ProxAL, CProxAL])
def test_an_infeasible_neyman_pearson_problem_ends_in_seconds_naming_it(algorithm):
    X0, X1 = _data()
    t0 = time.perf_counter()
    with pytest.raises(InfeasibleConstraints, match=r"the constraints are infeasible: no w "
                       r"meets every constraint .* nothing was run"):
        algorithm(neyman_pearson(X0, X1, r=0.2), ProxALConfig(),
                  init=ProxALInit(np.zeros(5))).run()
    assert time.perf_counter() - t0 < 5.0


def test_the_feasibility_answer_agrees_with_cvxpy():
    X0, X1 = _data()
    best = _smallest_largest_loss(X1)
    assert 0.2 < best < 0.6  # r = 0.2 infeasible, r = 0.6 feasible
    f = feasibility(neyman_pearson(X0, X1, r=0.2))
    assert f.checked and not f.feasible
    assert f.violation == pytest.approx(best - 0.2, abs=1e-6)
    assert f.dual_bound == pytest.approx(best - 0.2, abs=1e-6) and f.dual_bound > 0
    g = feasibility(neyman_pearson(X0, X1, r=best + 1e-3))
    assert g.checked and g.feasible and g.violation <= 1e-6


def test_a_feasible_run_says_how_it_ended_and_a_capped_one_says_so(capsys):
    X0, X1 = _data()
    problem, init = neyman_pearson(X0, X1, r=0.6), ProxALInit(np.zeros(5))
    alg = ProxAL(problem, ProxALConfig(), init=init)
    state = alg.run(verbose=True)
    assert alg.feasibility.checked and alg.feasibility.feasible
    assert state.stopped and state.message == f"stopped by (11) after {state.k} outer iterations"
    err = capsys.readouterr().err.splitlines()
    assert len(err) == state.k + 1 and err[0].startswith("Algorithm 1: outer iteration 1, ADMM ")
    assert err[-1] == f"Algorithm 1: {state.message}"
    capped = ProxAL(problem, ProxALConfig(k_max=2), init=init).run()
    assert capped.stop_status == "cap" and capped.message.startswith(
        "reached the cap k_max = 2 outer iterations without meeting (11): not converged")
    central = CProxAL(problem, ProxALConfig(cprox_k_max=1), init=init).run()
    assert central.message.startswith("reached the cap cprox_k_max = 1 outer iterations")


def test_the_check_can_be_turned_off_and_skips_what_it_cannot_decide():
    X0, X1 = _data()
    state = ProxAL(neyman_pearson(X0, X1, r=0.2), ProxALConfig(k_max=2, check_feasibility=False),
                   init=ProxALInit(np.zeros(5))).run()
    assert state.k == 2 and state.stop_status == "cap"
    assert feasibility(lcqp_reference(20, 2, 2)).why == "equality constraints are not checked"
    rng = np.random.default_rng(0)
    Xc = np.concatenate([rng.normal(size=(2, 30, 3)), rng.integers(0, 2, (2, 30, 1))], axis=2)
    Xs = np.concatenate([rng.normal(size=(20, 3)), rng.integers(0, 2, (20, 1))], axis=1)
    fair = fairness(Xc, rng.integers(0, 2, (2, 30)), Xs, rng.integers(0, 2, 20))
    assert feasibility(fair).why == "nonconvex constraints are not checked"
    with pytest.raises(ValueError, match="check_feasibility must be a bool"):
        ProxALConfig(check_feasibility="yes")
