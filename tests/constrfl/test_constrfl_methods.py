"""constrfl's methods package: one module per method, named as the paper's tables print them,
each built through ``build`` into the algorithm the experiments run, and each experiment
naming the methods its cells run.
"""

from __future__ import annotations

import numpy as np
import pytest

from repro.constrfl import METHODS, build
from repro.constrfl.config import ProxALConfig, reference_flags
from repro.constrfl.cproxal import CentralProxAL
from repro.constrfl.instances import qp_ball
from repro.constrfl.methods import tiny_problem
from repro.constrfl.problem import lcqp_paper, unit_sphere_w0
from repro.constrfl.proxal import FedProxAL
from repro.constrfl.start import ProxALInit, paper_start
from repro.engine.registry import load_all


def test_methods_are_named_as_the_tables_print_them():
    # the paper's two are among the registered methods (a new method file adds one)
    known = ("Algorithm 1", "cProx-AL")
    assert set(known) <= set(METHODS)
    assert {n: METHODS[n].algorithm for n in known} == {
        "Algorithm 1": FedProxAL, "cProx-AL": CentralProxAL}
    assert {n: METHODS[n].module for n in known} == {
        "Algorithm 1": "repro.constrfl.methods.algorithm1",
        "cProx-AL": "repro.constrfl.methods.cprox_al"}


def test_each_experiment_names_the_methods_its_cells_run():
    exps = {k: v for k, v in load_all().items() if k.startswith("constrfl.")}
    known = {
        "constrfl.fig1": ("Algorithm 1", "cProx-AL"), "constrfl.fig2": ("Algorithm 1", "cProx-AL"),
        "constrfl.table1": ("Algorithm 1", "cProx-AL"),
        "constrfl.table2": ("Algorithm 1", "cProx-AL"), "constrfl.table3": (),
        "constrfl.table4": ("Algorithm 1", "cProx-AL")}
    assert set(known) <= set(exps)   # the paper's items are among the registered experiments
    assert {k: exps[k].methods for k in known} == known
    assert all(set(e.methods) <= set(METHODS) for e in exps.values())


@pytest.mark.parametrize("name", sorted(METHODS))
def test_build_gives_the_algorithm_bit_for_bit(name):
    problem = qp_ball(np.random.default_rng(0))
    fields = dict(beta=2.0, s_bar=1e-2, rho=1.0, q=0.5, eps1=1e-3, eps2=1e-3, k_max=5,
                  t_max=50, cprox_k_max=5)
    cfg = ProxALConfig(**fields)
    start = ProxALInit(unit_sphere_w0(problem.d, 0))
    built = build(name, problem, cfg, init=start).run()
    from_options = build(name, problem, init=start, **fields).run()   # configure(problem, ...)
    direct = METHODS[name].algorithm(problem, cfg, init=start).run()
    assert built.k == direct.k == from_options.k >= 1
    assert np.array_equal(built.w, direct.w) and np.array_equal(from_options.w, direct.w)
    assert METHODS[name].configure(problem, **fields) == cfg


@pytest.mark.parametrize("name", sorted(METHODS))
def test_no_init_is_the_papers_start(name):
    """``init=None``: the experiments' trial-0 w^0 (A3, D7) and mu^0 = 0 (Sec. 5)."""
    problem = tiny_problem(3)
    cfg = ProxALConfig(beta=2.0, s_bar=1e-2, k_max=3, cprox_k_max=3)
    a = build(name, problem, cfg)
    np.testing.assert_array_equal(a.state.w, unit_sphere_w0(problem.d, 0))
    assert not a.state.mu0.any() and not any(m.any() for m in a.state.mus)
    b = build(name, problem, cfg, init=paper_start(problem))
    np.testing.assert_array_equal(a.run().w, b.run().w)


def test_init_is_checked_against_the_problem():
    problem = tiny_problem(0)
    cfg = ProxALConfig()
    with pytest.raises(ValueError, match=r"init.w must have shape \(6,\)"):
        FedProxAL(problem, cfg, init=ProxALInit(np.zeros(5)))
    with pytest.raises(ValueError, match=r"init.mus\[0\] must have shape \(3, 2\)"):
        FedProxAL(problem, cfg, init=ProxALInit(np.zeros(6), mus=(np.zeros((3, 1)),)))
    with pytest.raises(ValueError, match="init.mu0 must be >= 0"):
        CentralProxAL(problem, cfg, init=ProxALInit(np.zeros(6), mu0=-np.ones((1, 1))))
    with pytest.raises(ValueError, match="init must be a ProxALInit"):
        FedProxAL(problem, cfg, init=np.zeros(6))
    # equality constraints (the LCQP of App. E.2) have free multipliers: a negative start is
    # Table 4's D12 start from cProx-AL's multipliers, accepted as given
    lcqp = lcqp_paper(6, 2, 1, np.random.default_rng(12))
    neg = ProxALInit(np.zeros(6), -np.ones((1, 1)), (-np.ones((2, 1)),))
    assert FedProxAL(lcqp, cfg, init=neg).state.mus[0].tolist() == [[-1.0], [-1.0]]


def test_run_follows_algorithm_1s_rule_or_the_callers():
    problem = tiny_problem(1)
    cfg = ProxALConfig(beta=2.0, s_bar=1e-2, rho=1.0, q=0.5, eps1=1e-2, eps2=1e-2)
    own = FedProxAL(problem, cfg)
    seen = []
    st = own.run(callback=lambda r, s, m: seen.append((r, s.k, m.round)))
    assert st.stopped and st.stop_status == "certified (11)"
    assert seen == [(k, k, k) for k in range(1, st.k + 1)]
    # rounds= runs exactly that many outer iterations, past (11); stop= ends on the caller's test
    longer = FedProxAL(problem, cfg).run(st.k + 2)
    assert longer.k == st.k + 2
    np.testing.assert_array_equal(
        FedProxAL(problem, cfg).run(stop=lambda s: s.stopped).w, st.w)
    capped = FedProxAL(problem, cfg.replace(k_max=2)).run()
    assert capped.k == 2 and capped.stop_status == "cap"


def test_build_names_the_methods_on_an_unknown_name_and_refuses_config_and_options():
    problem = qp_ball(np.random.default_rng(0))
    with pytest.raises(ValueError, match="cProx-AL"):
        build("ADMM", problem, ProxALConfig())
    with pytest.raises(ValueError, match="cProx-AL"):
        build("ADMM", problem, beta=2.0)
    with pytest.raises(ValueError, match="not both"):
        build("Algorithm 1", problem, ProxALConfig(), beta=2.0)
    with pytest.raises(ValueError, match="config must be a ProxALConfig"):
        build("Algorithm 1", problem, {"beta": 2.0})
    lcqp = build("cProx-AL", problem, reference=reference_flags("lcqp"))
    assert lcqp.config.reference.cprox_tau_in_stop is False
