"""A singular Newton system in Algorithm 2 fails the run explicitly (monks-1 n = 20 crash).

The paper's Algorithm 1 has no safeguard against a dual blow-up: once ``[mu + beta c]_+`` is so
large that ``prox + rho`` falls below the round-off of the generalized Hessian, the client
Newton step of (19) cannot be solved. The run must stop with a ``DivergenceError`` naming the
outer iteration and the quantity
(docs/deviations.md#constrfl-monks-1-with-20-clients-breakdown).
"""

from __future__ import annotations

import numpy as np
import pytest

from repro.constrfl.config import ProxALConfig
from repro.constrfl.merit import Merit
from repro.constrfl.problem import neyman_pearson
from repro.constrfl.proxal import FedProxAL
from repro.constrfl.start import ProxALInit
from repro.constrfl.subsolvers import NewtonBreakdown, newton_solve
from repro.core.validation import DivergenceError


def _tiny_np():
    """Two clients, d = 3, two class-1 rows each: the class-1 Gram matrix has rank 2 < d."""
    X0 = np.array([[[1.0, 0.0, 1.0], [0.0, 1.0, -1.0]], [[1.0, 1.0, 0.0], [-1.0, 0.0, 1.0]]])
    X1 = np.array([[[1.0, 2.0, 0.0], [0.0, 1.0, 1.0]], [[2.0, 0.0, 1.0], [1.0, -1.0, 0.0]]])
    return neyman_pearson(X0, X1, 0.2)


def test_well_scaled_multipliers_take_the_newton_step():
    prob = _tiny_np()
    merit = Merit(prob.clients[0], np.full((2, 1), 1.0), np.zeros(3), 300.0, 1.0 / 900)
    U, info = newton_solve(merit, np.zeros((2, 3)), np.zeros((2, 3)), 0.01, np.zeros(3), 1e-10)
    assert info.success.all() and np.all(info.residual <= 1e-10)


def test_newton_breakdown_names_the_party_and_the_condition_number():
    prob = _tiny_np()
    # mu = 1e30: the rank-2 class-1 Gram term is 1e30 times prox + rho = 0.0111...
    mu = np.array([[1.0], [1e30]])
    merit = Merit(prob.clients[0], mu, np.zeros(3), 300.0, 1.0 / 900)
    with pytest.raises(NewtonBreakdown, match="party 1") as info:
        newton_solve(merit, np.zeros((2, 3)), np.zeros((2, 3)), 0.01, np.zeros(3), 1e-10)
    assert info.value.party == 1
    assert info.value.cond > 1e16          # beyond 1/eps_machine = 4.5e15
    assert info.value.hess_norm > 1e28


def test_algorithm1_fails_with_divergence_error_naming_the_outer_iteration():
    prob = _tiny_np()
    cfg = ProxALConfig(beta=300.0, s_bar=1e-3, rho=0.01, q=0.9, k_max=5, t_max=20,
                       solver_tol_floor=1e-12)
    alg = FedProxAL(prob, cfg, init=ProxALInit(np.full(3, 1 / np.sqrt(3)),
                                               mus=(np.array([[1.0], [1e30]]),)))
    with pytest.raises(DivergenceError) as info:
        alg.run()
    err = info.value
    assert err.round == 0 and err.value > 1e16
    msg = str(err)
    assert msg.startswith("diverged at round 0: cond of the Newton Hessian of party 1")
    assert "client step (19) of ADMM round 0" in msg and "max mu^k = 1e+30" in msg
    assert "\n" not in msg                  # the runner records the first line as the reason
    assert isinstance(err.__cause__, NewtonBreakdown)
    assert alg.state.k == 0 and alg.state.admm_rounds == []   # nothing half-recorded


def test_admm_survives_eps_underflow_to_zero():
    # q = 1e-200: eps_3 = q^2 underflows to 0.0, as 0.9^t does after ~7,000 rounds (T <= 10,001
    # in the LCQP protocol). The diagnostic ratio residual / eps divided by zero there.
    prob = _tiny_np()
    cfg = ProxALConfig(beta=300.0, s_bar=1e-3, rho=0.01, q=1e-200, k_max=1, t_max=4,
                       solver_tol_floor=1e-12)
    alg = FedProxAL(prob, cfg, init=ProxALInit(np.full(3, 1 / np.sqrt(3))))
    assert 0.0 == cfg.q ** 2
    st = alg.run()
    assert st.k == 1 and st.admm_rounds[0] >= 3 and np.all(np.isfinite(st.w))
