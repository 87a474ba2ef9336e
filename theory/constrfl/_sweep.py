"""The runs of Algorithm 1 the three outer checks share (no check): the eps sweep on QP-ball,
a run started 1e-4 off the KKT pair, runs with s_bar = 1 (the stop on the beta tau_k term of
(11)) and one run per experiment path of Algorithm 1 (:mod:`theory.constrfl.outer`). Every
quantity recorded is computed here from the package's iterates and the reference of
:mod:`theory.constrfl.reference`.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from repro.constrfl.config import ProxALConfig, ReferenceFlags, reference_flags
from repro.constrfl.instances import qp_ball
from repro.constrfl.methods import build
from repro.constrfl.problem import lcqp_reference
from repro.constrfl.proxal import FedProxAL
from repro.constrfl.start import ProxALInit
from theory.constrfl.reference import (
    Ground,
    grad_sum,
    kkt_residuals,
    outer_merits,
    stack_mu,
    state_mu,
)
from theory.constrfl.resolvent import resolvent
from theory.constrfl.schedule import outer_floor, stop_test_11, tau
from theory.paths import constrfl_key
from theory.registry import seed_for

BETA, S_BAR = 2.0, 1e-2
EPS = {"small": (1e-1, 3e-2, 1e-2), "default": (1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4)}
LCQP_HYPER = dict(beta=10.0, s_bar=0.1, rho=1.0, q=0.9)       # Table 4
BASE = dict(beta=BETA, s_bar=S_BAR, rho=1.0, q=0.5)


def _config(hyper: dict, eps: float, t_max: int = 5000, **kw) -> ProxALConfig:
    return ProxALConfig(**hyper, eps1=eps, eps2=eps, k_max=2000, t_max=t_max,
                        solver_tol_floor=1e-13, **kw)


PATHS = {  # name -> (instance, config maker)
    "qp newton": ("qp", lambda eps: _config(BASE, eps)),
    "qp newton_clip+reuse": ("qp", lambda eps: _config(BASE, eps, solver="newton_clip",
                                                       hessian_reuse=True)),
    # Table 2's primary reading: the fairness script's tolerances and solver (on QP-ball's
    # hyperparameters: its own beta 50, rho 0.1 make each call ~30x longer, the same path)
    "qp script flags": ("qp", lambda eps: _config(BASE, eps, solver="newton_clip",
                                                hessian_reuse=True,
                                                reference=reference_flags("fairness"))),
    # Table 1's NP script (the diagnostic constrfl.np_script; docs/decisions.md
    # #constrfl-reference-code): ADMM from w^0, (22) with the new multiplier, no server term in
    # (23), the script's tolerances; its conclusions are findings where (10) fails
    "qp np flags": ("qp", lambda eps: _config(BASE, eps, reference=reference_flags("np"))),
    "lcqp paper": ("lcqp", lambda eps: _config(LCQP_HYPER, eps,
                                               reference=ReferenceFlags(cprox_tau_in_stop=False))),
    "lcqp reference": ("lcqp", lambda eps: _config(LCQP_HYPER, eps,
                                                   reference=reference_flags("lcqp"))),
}


def _start(problem, cfg, w0, mu_start=None):
    """Algorithm 1's start: ``(w^0, mu^0 = 0)`` (or ``mu_start``, stacked by party), or
    (docs/decisions.md#constrfl-lcqp-mu0-from-cprox,
    reference LCQP) cProx-AL's final multipliers from the same w^0.
    """
    if mu_start is not None:
        m0 = problem.server.m
        return ProxALInit(w0, mu_start[:m0][None],
                          (mu_start[m0:].reshape(problem.clients[0].size, -1),))
    if not cfg.reference.mu0_from_cprox:
        return ProxALInit(w0)
    cs = build("cProx-AL", problem, cfg, init=ProxALInit(w0)).run()
    return ProxALInit(w0, cs.mu0, tuple(cs.mus))


def _run(problem, w_star, mu_star, w0, cfg: ProxALConfig, key: str, mu_start=None) -> dict:
    """Algorithm 1 (the package's ``FedProxAL``) from ``w0`` with every quantity of Theorem
    3.1 / Lemma 3.1 recorded; ``r_0`` from the start the lemma assumes (the run's own mu^0).
    """
    init = _start(problem, cfg, w0, mu_start)
    alg = FedProxAL(problem, cfg, init=init)
    beta, eps = cfg.beta, cfg.eps1
    # mu^0 as the check handed it (zeros where it handed none), never read from the package
    mu_0 = np.concatenate([
        np.zeros(problem.server.m) if init.mu0 is None else np.ravel(init.mu0),
        *([np.zeros(b.size * b.m) for b in problem.clients] if init.mus is None
          else [np.ravel(m) for m in init.mus])])
    r0 = float(np.linalg.norm(np.concatenate([w0 - w_star, mu_0 - mu_star])))
    joint = [r0]
    pre, taus, pkg_taus, step_ratio, tau_blocked = [], [], [], [], 0
    stop_theory, mu_prev = None, mu_0
    offset = cfg.reference.prox_den_offset
    while not alg.state.stopped and alg.state.k < cfg.k_max:
        k = alg.state.k
        w_prev = alg.state.w.copy()
        ms = outer_merits(problem, w_prev, state_mu(alg.state), beta, offset)
        alg.step()
        w = alg.state.w
        tau_k = tau(cfg.s_bar, k)                     # Algorithm 1 line 2, from the paper
        pre.append(1.0 - float(np.max(np.abs(grad_sum(ms, w)))) / tau_k)      # (10)
        mu = stack_mu(state_mu(alg.state))
        if stop_theory is None and stop_test_11(w, w_prev, mu, mu_prev, beta, tau_k, eps, eps):
            stop_theory = k + 1                        # (11) evaluated here on the iterates
        dw = float(np.max(np.abs(w - w_prev)))
        dmu = float(np.max(np.abs(mu - mu_prev), initial=0.0))
        tau_blocked += int(dw <= beta * eps and dmu <= beta * eps and
                           dw + beta * tau_k > beta * eps)
        mu_prev_k, mu_prev = mu_prev, mu
        joint.append(float(np.linalg.norm(np.concatenate([w - w_star, mu - mu_star]))))
        taus.append(tau_k)
        pkg_taus.append(float(alg.last_admm.tau))     # the tau Algorithm 2 was handed
        wJ, muJ, _ = resolvent(problem, beta, w_prev, mu_prev_k, w_start=w)
        step_ratio.append(float(np.linalg.norm(np.concatenate([wJ - w, muJ - mu])))
                          / (beta * np.sqrt(problem.d) * tau_k))
    bound43 = r0 + beta * np.sqrt(problem.d) * np.concatenate([[0.0], np.cumsum(taus)])
    st = alg.state
    s1, s2 = kkt_residuals(problem, st.w, state_mu(st))
    joint_a = np.array(joint)
    return {"key": key, "eps": eps, "K": st.k, "stopped": st.stopped, "stationarity": s1,
            "feasibility": s2, "precondition_margin": min(pre), "r0": r0, "beta": beta,
            "s_bar": cfg.s_bar, "d": problem.d,
            "eq43_relative_margin": float(np.min(
                (bound43[1:] - joint_a[1:]) / np.maximum(bound43[1:] - r0, 1e-300))),
            "eq43_tightest_ratio": float(np.max((joint_a[1:] - r0)
                                                / np.maximum(bound43[1:] - r0, 1e-300))),
            "max_joint_dist_k_ge_1": float(joint_a[1:].max()),
            "k_above_r0": int(np.sum(joint_a[1:] > r0)), "k_count": len(joint) - 1,
            "K_stop_test_11": stop_theory, "K_floor": outer_floor(cfg.s_bar, eps),
            "step_ratio_max": float(max(step_ratio)), "tau_blocked_rounds": tau_blocked,
            "max_multiplier": float(np.abs(stack_mu(state_mu(st))).max(initial=0.0)),
            "inexactness": float(max(1 - p for p in pre)),
            "schedule_rel_error": float(np.max(np.abs(
                np.array(pkg_taus) / np.array(taus) - 1.0)))}


def _unit(rng, d):
    g = rng.standard_normal(d)
    return g / np.linalg.norm(g)


def sweep(seed: int, size: str) -> dict:
    """The runs the three checks of this module share (one sweep, seeded by the name
    ``constrfl.outer``, whichever check asks first): :func:`_sweep`.
    """
    return _sweep(seed_for("constrfl.outer"), size)


@lru_cache(maxsize=4)
def _sweep(seed: int, size: str) -> dict:
    """The eps sweep on QP-ball (the paper's algorithm, Newton); one run started 1e-4 off the
    KKT pair (r_0 = 1e-4: the distances are the inexactness Lemma 3.1's sum term bounds);
    s_bar = 1 runs (the stop on the tau_k term); and one run per other experiment path.
    """
    rng = np.random.default_rng(seed)
    gt = Ground()
    problem = qp_ball(rng)
    w_star, mu_star = gt.kkt(problem)
    mu_star = stack_mu(mu_star)
    w0 = _unit(rng, problem.d)
    key0 = constrfl_key(PATHS["qp newton"][1](1e-3), quadratic=False)
    runs = [_run(problem, w_star, mu_star, w0, PATHS["qp newton"][1](e), key0)
            for e in EPS[size]]
    # 1e-4 off the KKT pair (exactly at it the first inexact solve may stay put): r_0 = 1e-4
    at_solution = [_run(problem, w_star, mu_star, w_star + 1e-4 * _unit(rng, problem.d),
                        _config(BASE, EPS[size][-1]), key0, mu_start=mu_star)]
    at_solution[0]["start"] = "1e-4 off the KKT pair"
    tau_runs = [_run(problem, w_star, mu_star, w0, _config({**BASE, "s_bar": 1.0}, e), key0)
                for e in ((1e-2,) if size == "small" else (1e-2, 1e-3))]
    path_eps = 1e-2 if size == "small" else 1e-3
    lcqp = lcqp_reference(8, 2, 1)
    lw, lmu = gt.kkt(lcqp)
    lmu = stack_mu(lmu)
    lw0 = _unit(rng, lcqp.d)
    paths = []
    for name, (inst, make) in PATHS.items():
        if name == "qp newton":
            continue
        cfg = make(path_eps)
        key = constrfl_key(cfg, quadratic=inst == "lcqp")
        if inst == "qp":
            paths.append(_run(problem, w_star, mu_star, w0, cfg, key))
        else:
            paths.append(_run(lcqp, lw, lmu, lw0, cfg, key))
    r0 = float(np.linalg.norm(np.concatenate([w0 - w_star, mu_star])))
    return {"runs": runs, "at_solution": at_solution, "tau_runs": tau_runs, "paths": paths,
            "r0": r0, "d": problem.d, "n": problem.n, "gt": gt.as_dict(),
            "all_optimal": gt.all_optimal, "key0": key0}


sweep.cache_clear = _sweep.cache_clear  # the planted-bug tests clear the shared runs
