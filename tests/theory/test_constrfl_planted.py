"""Every constrfl theory check fails on plausible one-line bugs planted in ``repro/``.

Each test runs the check clean (it must pass with a margin >= 0), plants one bug in the
package (a monkeypatch of a function, method or constant of ``repro.constrfl``; never of
``theory/``), runs it again (it must fail with a margin < 0), all in the same test. Where the
statement involves a step size there are two plants, one too small and one too large.
"""

from __future__ import annotations

import numpy as np
import pytest

import repro.constrfl.admm as admm
import repro.constrfl.merit as merit_mod
import repro.constrfl.proxal as proxal
import theory.constrfl.outer as CO
import theory.constrfl.pep_inner as PEP_INNER
import theory.constrfl.pep_outer as PEP_OUTER
from repro.constrfl.config import ProxALConfig
from repro.constrfl.merit import Merit
from theory.registry import load_check_modules, registered, seed_for

load_check_modules()


def _run(name):
    CO.sweep.cache_clear()  # the three Algorithm-1 sweep checks share a cached run
    for cached in (PEP_INNER.inner_runs, PEP_INNER.inner_subproblem, PEP_OUTER.ppa_run):
        cached.cache_clear()   # the PEP checks' cached runs of the package
    entry = registered()[name]
    return entry.func(seed_for(entry.seed_name or name), "small")


def _wrap(mp, owner, attr, make):
    mp.setattr(owner, attr, make(getattr(owner, attr)))


# ----------------------------------------------------------------------------- the plants
def _server_rho(factor):
    """(18) aggregated with ``factor * rho`` per client (rho_total = factor rho n)."""
    def make(orig):
        def planted(self, merit, rho, n_blocks, config, backend, factor_cache=None):
            orig(self, merit, factor * rho, n_blocks, config, backend, factor_cache)
        return planted
    return make


def _dual_step(factor):
    """(20) as ``lambda + factor rho (u - w)`` (the stored multipliers; uploads unchanged)."""
    def make(orig):
        def planted(self, msg, eps):
            old = [lam.copy() for lam in self.Lam]
            ups = orig(self, msg, eps)
            self.Lam = [o + factor * (lam - o) for o, lam in zip(old, self.Lam, strict=True)]
            return ups
        return planted
    return make


def _client_damped(factor):
    """Client step (19) relaxed: ``u^{t+1} = u^t + factor (u_solve - u^t)``."""
    def make(orig):
        def planted(self, msg, eps):
            old = [u.copy() for u in self.U]
            ups = orig(self, msg, eps)
            self.U = [o + factor * (u - o) for o, u in zip(old, self.U, strict=True)]
            return ups
        return planted
    return make


def _client_solve_skipped(orig):
    """(19) not solved: the clients' solver returns its starting point."""
    def planted(method, merit, U0, lin, rho, ctr, tol, *args, **kwargs):
        U, info = orig(method, merit, U0, lin, rho, ctr, tol, *args, **kwargs)
        return (np.array(U0, dtype=float), info) if merit.block.size > 1 else (U, info)
    return planted


def _client_state_lost(orig):
    def planted(self, msg, eps):
        old = ([u.copy() for u in self.U], [lam.copy() for lam in self.Lam])
        ups = orig(self, msg, eps)
        self.U, self.Lam = old
        return ups
    return planted


def _stop_test_without(term: str):
    def make(orig):
        def planted(self):
            k, c, w_old = self.state.k, self.config, self.state.w.copy()
            msgs = orig(self)
            s, tau = self.state, c.tau(k)
            dw = float(np.max(np.abs(s.w - w_old)))
            s.stopped = (tau <= c.eps1 if term == "tau only"
                         else dw + c.beta * tau <= c.beta * c.eps1)
            return msgs
        return planted
    return make


def _initial_multipliers(orig):
    def planted(self, problem, config, **kwargs):
        orig(self, problem, config, **kwargs)
        self.state.mu0 = np.ones_like(self.state.mu0)
        self.state.mus = [np.ones_like(m) for m in self.state.mus]
    return planted


def _tau(formula):
    return lambda mp: mp.setattr(ProxALConfig, "tau", formula)


def _hess_beta(factor):
    """Generalized Hessian with ``factor beta`` on the active constraints' outer products."""
    def make(orig):
        def planted(self, H, J, active, d):
            H = H + factor * self.beta * np.matmul(J.transpose(0, 2, 1) * active[:, None, :], J)
            H[:, np.arange(d), np.arange(d)] += self.prox
            return H
        return planted
    return make


PLANTS = {
    "constrfl.lemma42_admm_bounds": {
        "server (18) with rho/2": lambda mp: _wrap(mp, admm.ServerSide, "__init__",
                                                   _server_rho(0.5)),
        "server (18) with 2 rho": lambda mp: _wrap(mp, admm.ServerSide, "__init__",
                                                   _server_rho(2.0)),
        "dual step (20) with rho/2": lambda mp: _wrap(mp, admm.ClientSide, "round",
                                                      _dual_step(0.5)),
        "dual step (20) with 2 rho": lambda mp: _wrap(mp, admm.ClientSide, "round",
                                                      _dual_step(2.0)),
        "client step (19) not solved": lambda mp: _wrap(mp, admm, "solve",
                                                        _client_solve_skipped),
    },
    "constrfl.theorem32_inner_total": {
        "server (18) with rho/2": lambda mp: _wrap(mp, admm.ServerSide, "__init__",
                                                   _server_rho(0.5)),
        "server (18) with 2 rho": lambda mp: _wrap(mp, admm.ServerSide, "__init__",
                                                   _server_rho(2.0)),
        "clients lose their state updates": lambda mp: _wrap(mp, admm.ClientSide, "round",
                                                             _client_state_lost),
    },
    "constrfl.theorem41_42_admm_linear_rate": {
        "client step damped by 10%": lambda mp: _wrap(mp, admm.ClientSide, "round",
                                                      _client_damped(0.9)),
        "client step over-relaxed by 10%": lambda mp: _wrap(mp, admm.ClientSide, "round",
                                                            _client_damped(1.1)),
        "dual step (20) with rho/2": lambda mp: _wrap(mp, admm.ClientSide, "round",
                                                      _dual_step(0.5)),
    },
    "constrfl.lemma41_local_lipschitz": {
        "grad P_0 missing the factor 2": lambda mp: _wrap(
            mp, Merit, "grad", lambda g: lambda self, W: 0.5 * g(self, W)),
        "Hessian with beta/2 on the constraint term": lambda mp: _wrap(
            mp, Merit, "_finish_hess", _hess_beta(0.5)),
        "Hessian with 2 beta on the constraint term": lambda mp: _wrap(
            mp, Merit, "_finish_hess", _hess_beta(2.0)),
    },
    "constrfl.mistyped_statements": {
        "tau_k = s_bar / k^2 (off by one)": _tau(lambda self, k: self.s_bar / max(k, 1e-3) ** 2),
        "tau_k = s_bar / (k+1) (decays too slowly)": _tau(lambda self, k: self.s_bar / (k + 1)),
    },
    "constrfl.theorem31_output": {
        "stop test (11) without its multiplier term": lambda mp: _wrap(
            mp, proxal.FedProxAL, "step", _stop_test_without("dmu")),
        "tau_k = s_bar / (k+1) (too large)": _tau(lambda self, k: self.s_bar / (k + 1)),
        "tau_k = s_bar / (k+2)^2 (too small)": _tau(lambda self, k: self.s_bar / (k + 2) ** 2),
    },
    "constrfl.lemma31_bounded_iterates": {
        "Algorithm 1 started from mu^0 = 1": lambda mp: _wrap(
            mp, proxal.FedProxAL, "__init__", _initial_multipliers),
        "multiplier update with 2 beta": lambda mp: _wrap(
            mp, proxal, "multiplier_update",
            lambda f: lambda block, mu, W, beta: f(block, mu, W, 2 * beta)),
        "multiplier update with beta/2": lambda mp: _wrap(
            mp, proxal, "multiplier_update",
            lambda f: lambda block, mu, W, beta: f(block, mu, W, 0.5 * beta)),
    },
    "constrfl.theorem32_outer_complexity": {
        "stop test (11) reduced to tau_k <= eps1": lambda mp: _wrap(
            mp, proxal.FedProxAL, "step", _stop_test_without("tau only")),
        "tau_k = s_bar / (k+2)^2 (too small)": _tau(lambda self, k: self.s_bar / (k + 2) ** 2),
    },
    "constrfl.lemma_a2_resolvent_firm_nonexpansive": {
        "[mu + beta c]_+ without the positive part": lambda mp: mp.setattr(
            merit_mod, "_plus", lambda block, s: s),
    },
    # performance estimation: the replay of the worst quadratic through the package's round,
    # Lemma A.1's inexactness on Algorithm 1's iterates, the package's own stop at (11)
    "constrfl.pep_lemma_b3_factor": {
        "dual step (20) damped by 10%": lambda mp: _wrap(mp, admm.ClientSide, "round",
                                                         _dual_step(0.9)),
        "server (18) with 2 rho": lambda mp: _wrap(mp, admm.ServerSide, "__init__",
                                                   _server_rho(2.0)),
    },
    "constrfl.pep_lemma42_radius": {
        "server (18) with 2 rho": lambda mp: _wrap(mp, admm.ServerSide, "__init__",
                                                   _server_rho(2.0)),
        "server (18) with rho/2": lambda mp: _wrap(mp, admm.ServerSide, "__init__",
                                                   _server_rho(0.5)),
    },
    "constrfl.pep_lemma_a2_firm": {
        "multiplier update with 2 beta": lambda mp: _wrap(
            mp, proxal, "multiplier_update",
            lambda f: lambda block, mu, W, beta: f(block, mu, W, 2 * beta)),
    },
    "constrfl.pep_lemma_a3_ppa": {
        "multiplier update with beta/2": lambda mp: _wrap(
            mp, proxal, "multiplier_update",
            lambda f: lambda block, mu, W, beta: f(block, mu, W, 0.5 * beta)),
    },
    "constrfl.pep_counts_74_48_83_84": {
        "stop test (11) reduced to tau_k <= eps1": lambda mp: _wrap(
            mp, proxal.FedProxAL, "step", _stop_test_without("tau only")),
    },
    "constrfl.lemma_a1_a2_iterates": {
        "multiplier update with 2 beta": lambda mp: _wrap(
            mp, proxal, "multiplier_update",
            lambda f: lambda block, mu, W, beta: f(block, mu, W, 2 * beta)),
        "multiplier update with beta/2": lambda mp: _wrap(
            mp, proxal, "multiplier_update",
            lambda f: lambda block, mu, W, beta: f(block, mu, W, 0.5 * beta)),
    },
}

def test_every_constrfl_check_has_plants():
    assert set(PLANTS) == {n for n in registered() if n.startswith("constrfl.")}


@pytest.mark.parametrize("name", sorted(PLANTS))
def test_check_fails_on_each_planted_bug(name, monkeypatch):
    """Clean pass, then every plant of this check (one at a time) fails with margin < 0."""
    clean = _run(name)
    assert clean.passed and clean.worst_margin >= 0, (name, clean.details)
    missed = {}
    for plant, apply in PLANTS[name].items():
        with monkeypatch.context() as mp:
            apply(mp)
            planted = _run(name)
        if planted.passed or not planted.worst_margin < 0:
            missed[plant] = planted.worst_margin
    assert not missed, (name, missed)
