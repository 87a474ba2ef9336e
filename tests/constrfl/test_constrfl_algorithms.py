"""Algorithms 1-3 of paper 003 against closed forms, cvxpy/Clarabel and their loop oracles."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from repro.constrfl.admm import ClientSide, InexactADMM, ServerSide
from repro.constrfl.config import ProxALConfig, ReferenceFlags, reference_flags
from repro.constrfl.cproxal import CentralProxAL
from repro.constrfl.groundtruth import GroundTruth, solve_subproblem
from repro.constrfl.instances import np_small, qp_ball
from repro.constrfl.merit import Merit
from repro.constrfl.messages import (
    Broadcast,
    ClientUpload,
    DualChange,
    InitialUpload,
    OuterRoundMessages,
)
from repro.constrfl.problem import lcqp_paper, unit_sphere_w0
from repro.constrfl.proxal import FedProxAL
from repro.constrfl.start import ProxALInit
from repro.constrfl.subsolvers import ExactQuadratic


def _merits(problem, mu0, mus, center, beta, prox):
    server = Merit(problem.server, mu0, center, beta, prox)
    clients = [Merit(b, m, center, beta, prox) for b, m in zip(problem.clients, mus,
                                                                strict=True)]
    return server, clients


def _admm(problem, cfg, mu0, mus, center, tau, backend="vectorized", history=False):
    prox = 1.0 / ((problem.n + 1) * cfg.beta)
    sm, cms = _merits(problem, mu0, mus, center, cfg.beta, prox)
    clients = ClientSide(cms, cfg.rho, cfg, backend)
    server = ServerSide(sm, cfg.rho, clients.n, cfg, backend)
    return InexactADMM(server, clients, tau, center, q=cfg.q, t_max=cfg.t_max,
                       keep_history=history), sm, cms


@pytest.mark.parametrize("name,value", [("beta", 0.0), ("q", 1.0), ("eps1", 1.5), ("rho", -1),
                                        ("t_max", 0), ("s_bar", -0.1)])
def test_config_rejects_out_of_range(name, value):
    with pytest.raises(ValueError, match=name):
        ProxALConfig(**{name: value})


def test_config_rejects_unknown_flag_value():
    with pytest.raises(ValueError, match="admm_init"):
        ReferenceFlags(admm_init="zero")
    with pytest.raises(ValueError, match="prox_den_offset"):
        ReferenceFlags(prox_den_offset=3)
    with pytest.raises(ValueError, match="server_as_client must be a bool"):
        ReferenceFlags(server_as_client=1)
    # the flags live in the sub-config only, which must be a ReferenceFlags
    with pytest.raises(TypeError, match="admm_init"):
        ProxALConfig(admm_init="w0")
    with pytest.raises(ValueError, match="reference must be a ReferenceFlags"):
        ProxALConfig(reference={"admm_init": "w0"})


def test_reference_flags_name_the_reference_scripts_departures():
    assert ProxALConfig().reference == ReferenceFlags()
    assert ReferenceFlags().changed() == {}
    assert reference_flags("lcqp").changed() == {
        "epst_u": "new", "stop_server_term": "none", "prox_den_offset": 2,
        "mu0_from_cprox": True, "server_as_client": True, "cprox_tau_in_stop": False}
    assert reference_flags("np").changed() == {
        "admm_init": "w0", "epst_lambda": "new", "stop_server_term": "none",
        "solver_tol_factor": 1e-2, "eps_floor": 1e-10, "cprox_tol_factor": 1e-3}
    cfg = ProxALConfig(solver_tol_floor=1e-12, reference=reference_flags("np"))
    assert cfg.inner_tol(1.0) == 1e-2 and cfg.inner_tol(1e-11) == 1e-12
    with pytest.raises(ValueError, match="problem"):
        reference_flags("fedavg")


@pytest.mark.parametrize("make", [qp_ball, np_small])
def test_merit_gradient_and_hessian_match_finite_differences(make):
    rng = np.random.default_rng(3)
    problem = make(rng)
    blk = problem.clients[0]
    mu = np.abs(rng.standard_normal((blk.size, blk.m)))
    merit = Merit(blk, mu, rng.standard_normal(problem.d), 2.0, 0.125)
    W = rng.standard_normal((blk.size, problem.d))
    g, H = merit.grad(W), merit.hess(W)
    h = 1e-6
    for i in range(problem.d):
        e = np.zeros(problem.d)
        e[i] = h
        fd = (merit.value(W + e) - merit.value(W - e)) / (2 * h)
        np.testing.assert_allclose(g[:, i], fd, rtol=1e-6, atol=1e-7)
        fdh = (merit.grad(W + e) - merit.grad(W - e)) / (2 * h)
        np.testing.assert_allclose(H[:, :, i], fdh, rtol=1e-5, atol=1e-6)


def test_lcqp_quadratic_form_reproduces_the_merit():
    problem = lcqp_paper(7, 3, 2, np.random.default_rng(0))
    blk = problem.clients[0]
    rng = np.random.default_rng(1)
    merit = Merit(blk, rng.standard_normal((3, 2)), rng.standard_normal(7), 10.0, 0.025)
    Q, p = merit.quadratic_form()
    W = rng.standard_normal((3, 7))
    np.testing.assert_allclose(merit.grad(W), np.einsum("bij,bj->bi", Q, W) + p, atol=1e-12)
    np.testing.assert_allclose(merit.hess(W), Q, atol=1e-12)


@pytest.mark.parametrize("make,q", [(qp_ball, 0.5), (np_small, 0.5)])
def test_admm_fixed_point_equals_cvxpy_subproblem_solution(make, q):
    """Algorithm 2 run to tau = 1e-10 solves the consensus subproblem (12) that cvxpy solves."""
    rng = np.random.default_rng(11)
    problem = make(rng)
    cfg = ProxALConfig(beta=2.0, rho=1.0, q=q, t_max=3000, solver_tol_floor=1e-13)
    mu0 = np.full((1, problem.server.m), 0.5)
    mus = [np.full((b.size, b.m), 0.5) for b in problem.clients]
    center = rng.standard_normal(problem.d)
    admm, sm, cms = _admm(problem, cfg, mu0, mus, center, tau=1e-10)
    res = admm.run()
    assert res.certified
    gt = GroundTruth()
    mu_list = [mu0[0]] + [m for m in mus[0]]
    w_cvx, val_cvx, w_pol = solve_subproblem(problem, mu_list, center, cfg.beta, 1 / cfg.beta,
                                             gt)
    assert gt.statuses == {"optimal": 1}
    ell = sm.value(res.w[None])[0] + sum(m.value(np.broadcast_to(res.w, (m.block.size,
                                                                          problem.d))).sum()
                                         for m in cms)
    assert abs(ell - val_cvx) <= 1e-7 * (1 + abs(val_cvx))
    assert ell <= val_cvx + 1e-9 * (1 + abs(val_cvx))      # never worse than the solver
    g = sm.grad(res.w[None])[0] + sum(m.grad(np.broadcast_to(res.w, (m.block.size,
                                                                      problem.d))).sum(0)
                                      for m in cms)
    assert np.max(np.abs(g)) <= 1e-10                       # KKT residual of (12), Thm 4.1
    assert np.max(np.abs(res.w - w_cvx)) <= 1e-5            # cvxpy argmin, loose (~sqrt tol)
    assert np.max(np.abs(res.w - w_pol)) <= 1e-9            # polished reference


def test_admm_on_lcqp_subproblem_matches_the_linear_solve():
    problem = lcqp_paper(8, 3, 2, np.random.default_rng(2))
    cfg = ProxALConfig(beta=10.0, rho=1.0, t_max=5000)
    mu0 = np.array([[0.3, -0.2]])
    mus = [np.random.default_rng(3).standard_normal((3, 2))]
    center = np.random.default_rng(4).standard_normal(8)
    admm, sm, cms = _admm(problem, cfg, mu0, mus, center, tau=1e-11)
    res = admm.run()
    Q = sm.quadratic_form()[0].sum(0) + cms[0].quadratic_form()[0].sum(0)
    p = sm.quadratic_form()[1].sum(0) + cms[0].quadratic_form()[1].sum(0)
    w_star = np.linalg.solve(Q, -p)
    assert res.certified
    np.testing.assert_allclose(res.w, w_star, atol=1e-10)


def test_theorem_4_1_certificate_bounds_true_residual_every_round():
    """||sum_i grad P_i(w^{t+1})||_inf <= r0_t + sum_i epst_i (App. B.2) at every round."""
    problem = qp_ball(np.random.default_rng(5))
    cfg = ProxALConfig(beta=2.0, rho=1.0, q=0.6, t_max=80, solver_tol_floor=1e-13)
    mu0 = np.zeros((1, 1))
    mus = [np.full((3, 2), 0.3)]
    admm, sm, cms = _admm(problem, cfg, mu0, mus, np.zeros(6), tau=1e-12, history=True)
    admm.run()
    assert len(admm.history) == 80
    for h in admm.history:
        w = h["w"]
        g = sm.grad(w[None])[0] + cms[0].grad(np.broadcast_to(w, (3, 6))).sum(0)
        true = np.max(np.abs(g))
        cert = h["server_residual"] + h["sum_epst"]
        assert true <= cert + 1e-12 * (1 + true)


def test_admm_messages_carry_only_what_the_paper_allows():
    problem = qp_ball(np.random.default_rng(6))
    cfg = ProxALConfig(beta=2.0, rho=1.0, q=0.5, t_max=5)
    prox = 1.0 / ((problem.n + 1) * cfg.beta)
    sm, cms = _merits(problem, np.zeros((1, 1)), [np.zeros((3, 2))], np.zeros(6), 2.0, prox)
    clients = ClientSide(cms, cfg.rho, cfg, "vectorized")
    ups0 = clients.start(np.zeros(6))
    assert all(type(u) is InitialUpload for u in ups0)
    assert [f.name for f in dataclasses.fields(InitialUpload)] == ["client", "u_tilde"]
    server = ServerSide(sm, cfg.rho, clients.n, cfg, "vectorized")
    server.receive_initial(np.zeros(6), ups0)
    msg = server.aggregate(1.0)
    assert type(msg) is Broadcast and [f.name for f in dataclasses.fields(Broadcast)] == ["w"]
    ups = clients.round(msg, 1.0)
    assert all(type(u) is ClientUpload and u.u_tilde.shape == (6,) and
               isinstance(u.epst, float) for u in ups)
    assert [f.name for f in dataclasses.fields(ClientUpload)] == ["client", "u_tilde", "epst"]
    assert [f.name for f in dataclasses.fields(DualChange)] == ["client", "value"]
    # The server object holds its own party only: no client block, multiplier or state.
    client_arrays = {id(cms[0].block.A), id(cms[0].mu), id(clients.U[0]), id(clients.Lam[0])}
    held = {id(v) for v in vars(server).values()} | {id(v) for v in vars(server.merit).values()}
    assert not client_arrays & held
    alg = FedProxAL(problem, cfg.replace(k_max=2), init=ProxALInit(np.ones(6) / np.sqrt(6)))
    msgs = alg.step()
    assert type(msgs) is OuterRoundMessages and msgs.round == 1
    changes = msgs.dual_changes
    assert all(type(c) is DualChange and isinstance(c.value, float) for c in changes)
    assert [c.client for c in changes] == list(range(problem.n))
    assert msgs.uplink[-problem.n:] == changes   # line 8 comes after Algorithm 2


def test_outer_iteration_messages_are_what_the_counters_count():
    """One outer iteration's messages: Algorithm 2's line-1 uploads, a broadcast and n uploads
    per ADMM round, n dual changes; their floats are exactly the state's counters.
    """
    problem = qp_ball(np.random.default_rng(6))
    n, d = problem.n, problem.d
    cfg = ProxALConfig(beta=2.0, s_bar=1e-2, rho=1.0, q=0.5, k_max=3)
    alg = FedProxAL(problem, cfg, init=ProxALInit(unit_sphere_w0(d, 1)))
    up = down = 0
    for k in range(3):
        msgs = alg.step()
        rounds = alg.state.admm_rounds[-1]
        assert msgs.round == k + 1 and msgs.admm_rounds == rounds == len(msgs.broadcasts)
        assert len(msgs.initial_uploads) == n and len(msgs.client_uploads) == n * rounds
        assert len(msgs.dual_changes) == n
        assert len(msgs.uplink) == n + n * rounds + n and len(msgs.downlink) == rounds
        assert [u.client for u in msgs.client_uploads] == list(range(n)) * rounds
        # the last broadcast is Algorithm 2's output w^{k+1} (Algorithm 1 line 6)
        np.testing.assert_array_equal(msgs.broadcasts[-1].w, alg.state.w)
        up += msgs.floats_up()
        down += sum(b.floats() for b in msgs.broadcasts) * n
        assert (up, down) == (alg.state.floats_up, alg.state.floats_down)
    assert up == sum(n * d + n * r * (d + 1) + n for r in alg.state.admm_rounds)
    assert down == sum(r * d * n for r in alg.state.admm_rounds)


def test_cproxal_exchanges_no_messages():
    problem = qp_ball(np.random.default_rng(6))
    alg = CentralProxAL(problem, ProxALConfig(beta=2.0, s_bar=1e-2))
    seen = []
    alg.run(2, callback=lambda r, s, m: seen.append((r, m.downlink, m.uplink)))
    assert seen == [(1, (), ()), (2, (), ())]


@pytest.mark.parametrize("make", [qp_ball, np_small])
def test_vectorized_and_loop_backends_agree(make):
    problem = make(np.random.default_rng(7))
    cfg = ProxALConfig(beta=2.0, s_bar=1e-2, rho=1.0, q=0.5, eps1=1e-2, eps2=1e-2, k_max=4)
    w0 = unit_sphere_w0(problem.d, 0)
    a = FedProxAL(problem, cfg, init=ProxALInit(w0), backend="vectorized").run()
    b = FedProxAL(problem, cfg, init=ProxALInit(w0), backend="loop").run()
    assert a.admm_rounds == b.admm_rounds
    np.testing.assert_allclose(a.w, b.w, atol=1e-10, rtol=0)
    np.testing.assert_allclose(a.mus[0], b.mus[0], atol=1e-10, rtol=0)


def test_factorized_lcqp_client_step_equals_fresh_solves():
    problem = lcqp_paper(30, 4, 2, np.random.default_rng(8))
    cfg = ProxALConfig(reference=reference_flags("lcqp"))
    w0 = unit_sphere_w0(30, 1)
    a = FedProxAL(problem, cfg, init=ProxALInit(w0), backend="vectorized").run()
    b = FedProxAL(problem, cfg, init=ProxALInit(w0), backend="loop").run()
    assert a.admm_rounds == b.admm_rounds
    np.testing.assert_allclose(a.w, b.w, atol=1e-10, rtol=0)
    rng = np.random.default_rng(9)
    Q = rng.standard_normal((3, 5, 5))
    Q = Q @ Q.transpose(0, 2, 1) + np.eye(5)
    p, lin, ctr = rng.standard_normal((3, 3, 5))
    fast = ExactQuadratic(Q, p, 0.7).solve(lin, ctr)
    slow = ExactQuadratic(Q, p, 0.7, factorize=False).solve(lin, ctr)
    np.testing.assert_allclose(fast, slow, atol=1e-12)
    np.testing.assert_allclose(np.einsum("bij,bj->bi", Q + 0.7 * np.eye(5), fast),
                               0.7 * ctr - lin - p, atol=1e-12)


def test_algorithm1_needs_at_least_the_tau_floor_of_outer_iterations():
    """(11) needs beta tau_k < beta eps1, i.e. k+1 > sqrt(s_bar/eps1) (specs/constrfl.md §2.2)."""
    problem = qp_ball(np.random.default_rng(10))
    cfg = ProxALConfig(beta=2.0, s_bar=0.1, rho=1.0, q=0.5, eps1=1e-2, eps2=1e-2)
    st = FedProxAL(problem, cfg, init=ProxALInit(unit_sphere_w0(6, 2))).run()
    assert st.stopped
    assert st.k >= int(np.floor(np.sqrt(0.1 / 1e-2))) + 1
    assert all(st.admm_certified)


def test_cproxal_lcqp_step_is_the_closed_form_linear_solve():
    problem = lcqp_paper(6, 2, 1, np.random.default_rng(12))
    cfg = ProxALConfig(beta=10.0)
    w0 = unit_sphere_w0(6, 3)
    alg = CentralProxAL(problem, cfg, init=ProxALInit(w0))
    alg.step()
    A = problem.clients[0].A.sum(0)
    b = problem.clients[0].bvec.sum(0)
    C = np.concatenate([problem.server.G[0], *problem.clients[0].G])
    dd = np.concatenate([problem.server.r[0], *problem.clients[0].r])
    # ell_0 = f + (1/(2 beta))||0 + beta(Cw+d)||^2 + (1/(2 beta))||w - w0||^2
    w1 = np.linalg.solve(A + cfg.beta * C.T @ C + np.eye(6) / cfg.beta,
                         -b - cfg.beta * C.T @ dd + w0 / cfg.beta)
    np.testing.assert_allclose(alg.state.w, w1, atol=1e-12)
    np.testing.assert_allclose(np.concatenate([alg.state.mu0[0], *alg.state.mus[0]]),
                               cfg.beta * (C @ w1 + dd), atol=1e-12)
