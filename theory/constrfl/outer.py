"""Paper 003, Theorem 3.1, Lemma 3.1 and Theorem 3.2 on Algorithm 1 (specs/constrfl.md
§8.3-8.5), on QP-ball (d = 6, n = 3) with beta = 2, s_bar = 1e-2, rho = 1, q = 0.5, w^0 on
the unit sphere, mu^0 = 0, and an eps sweep (eps1 = eps2 = eps).

* Theorem 3.1: at termination both Definition-1 residuals are <= eps; precondition (10)
  ``||grad ell_k(w^{k+1})||_inf <= tau_k`` holds at every outer iteration.
* Lemma 3.1 with sqrt(d) (specs/constrfl.md §8.7 item 1), checked in the joint form its
  proof gives, (43):
  ``||(w^k, mu^k) - (w*, mu*)|| <= r_0 + beta sqrt(d) sum_{j<k} tau_j`` for every k >= 0
  (k = 0 included, ``r_0 = ||(w^0, 0) - (w*, mu*)||`` with Algorithm 1's mu^0 = 0), which
  implies (47)'s ``r_0 + 2 sqrt(d) s_bar beta``. The joint distance is what the proof bounds;
  its components (the old criterion) sit well inside. Looseness: (47)'s bound over the largest
  joint distance at k >= 1. The printed sqrt(n) version's margin is reported.
* Theorem 3.2 / (48): ``K(eps) <= 2 K_{eps,eps} + 1`` with
  ``K_{eps,eps} = [s_bar + sqrt(2)(r_0 + 4 sqrt(d) s_bar beta)/beta]^2 eps^-2`` (factor 2: Lemma
  A.3 bounds a minimum over [K, 2K], §8.7 item 4); fitted slope of log K vs log(1/eps) <= 2.2;
  and the floor ``K >= floor(sqrt(s_bar/eps)) + 1`` of stop test (11).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from repro.constrfl.config import ProxALConfig
from repro.constrfl.groundtruth import GroundTruth, solve_problem
from repro.constrfl.instances import qp_ball
from repro.constrfl.optimality import kkt_residuals
from repro.constrfl.proxal import FedProxAL
from repro.constrfl.start import ProxALInit
from theory.constrfl.resolvent import resolvent, stack_mu
from theory.constrfl.schedule import outer_floor, stop_test_11, tau
from theory.registry import register
from theory.result import CheckResult

BETA, S_BAR = 2.0, 1e-2
EPS = {"small": (1e-1, 1e-2, 1e-3), "default": (1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4)}


def _run(problem, w_star, mu_star, w0, eps, mu_start=None) -> dict:
    """Algorithm 1 (the package's ``FedProxAL``) from ``(w0, mu_start)`` (mu^0 = 0 when None),
    with every quantity of Theorem 3.1 / Lemma 3.1 recorded; ``r_0`` is measured from the
    start the theorem assumes (``mu_start`` or 0), not from the package's state.
    """
    cfg = ProxALConfig(beta=BETA, s_bar=S_BAR, rho=1.0, q=0.5, eps1=eps, eps2=eps,
                       k_max=2000, t_max=5000, solver_tol_floor=1e-13)
    m0 = mu_star.size
    mu_assumed = np.zeros(m0) if mu_start is None else np.asarray(mu_start, dtype=float)
    r0 = float(np.linalg.norm(np.concatenate([w0 - w_star, mu_assumed - mu_star])))
    if mu_start is None:
        alg = FedProxAL(problem, cfg, init=ProxALInit(w0))
    else:
        k0 = problem.server.m
        alg = FedProxAL(problem, cfg, init=ProxALInit(
            w0, mu_assumed[:k0][None], (mu_assumed[k0:].reshape(problem.clients[0].size, -1),)))
    pre, dist_w, dist_mu = [], [], []
    mu_0 = np.concatenate([alg.state.mu0.ravel(), alg.state.mus[0].ravel()])
    joint = [float(np.linalg.norm(np.concatenate([alg.state.w - w_star, mu_0 - mu_star])))]
    taus, pkg_taus, stop_theory, step_ratio = [], [], None, []
    mu_prev = mu_0
    while not alg.state.stopped and alg.state.k < cfg.k_max:
        k = alg.state.k
        w_prev = alg.state.w.copy()
        server_m, client_ms = alg.merits(alg.state.w)
        alg.step()
        w = alg.state.w
        tau_k = tau(S_BAR, k)                          # Algorithm 1 line 2, from the paper
        gsum = server_m.grad(w[None])[0] + sum(
            m.grad(np.broadcast_to(w, (m.block.size, w.size))).sum(0) for m in client_ms)
        # (10), relative to tau_k: 1 - ||grad ell_k(w^{k+1})||_inf / tau_k
        pre.append(1.0 - float(np.max(np.abs(gsum))) / tau_k)
        mu = np.concatenate([alg.state.mu0.ravel(), alg.state.mus[0].ravel()])
        if stop_theory is None and stop_test_11(w, w_prev, mu, mu_prev, BETA, tau_k, eps, eps):
            stop_theory = k + 1                        # (11) evaluated here on the iterates
        mu_prev_k, mu_prev = mu_prev, mu
        dist_w.append(float(np.linalg.norm(w - w_star)))
        dist_mu.append(float(np.linalg.norm(mu - mu_star)))
        joint.append(float(np.linalg.norm(np.concatenate([w - w_star, mu - mu_star]))))
        taus.append(tau_k)
        pkg_taus.append(float(alg.last_admm.tau))     # the tau Algorithm 2 was handed
        # the induction step of (43) (Lemma A.1 + firm non-expansiveness of J):
        # ||z^{k+1} - J z^k|| <= beta sqrt(d) tau_k, J computed here (theory.constrfl.resolvent)
        wJ, muJ, _ = resolvent(problem, BETA, w_prev, mu_prev_k, w_start=w)
        step_dist = float(np.linalg.norm(np.concatenate([wJ - w, muJ - mu])))
        step_ratio.append(step_dist / (BETA * np.sqrt(problem.d) * tau_k))
    # (43): ||z^k - z*|| <= r_0 + beta sqrt(d) sum_{j<k} tau_j, k = 0, 1, ...
    bound43 = r0 + BETA * np.sqrt(problem.d) * np.concatenate([[0.0], np.cumsum(taus)])
    st = alg.state
    s1, s2 = kkt_residuals(problem, st.w, st.mu0, st.mus)
    joint_a = np.array(joint)
    return {"eps": eps, "start": "solution" if mu_start is not None else "unit sphere, mu=0",
            "K": st.k, "stopped": st.stopped, "stationarity": s1,
            "feasibility": s2, "precondition_margin": min(pre),
            "inner_rounds": int(sum(st.admm_rounds)), "r0": r0,
            "max_dist_w": max(dist_w), "max_dist_mu": max(dist_mu),
            "eq43_margin": float(np.min(bound43 - joint_a)),
            # relative to the bound's sum term at k >= 1 (0 at k = 0, where (43) is r_0 itself)
            "eq43_relative_margin": float(np.min(
                (bound43[1:] - joint_a[1:]) / (bound43[1:] - r0))),
            "eq43_tightest_ratio": float(np.max((joint_a[1:] - r0) / (bound43[1:] - r0))),
            "max_joint_dist_k_ge_1": float(joint_a[1:].max()), "joint_dist_0": joint[0],
            "joint_dist_0_error": abs(joint[0] - r0),
            "k_above_r0": int(np.sum(joint_a[1:] > r0)), "k_count": len(joint) - 1,
            "w_error": float(np.linalg.norm(st.w - w_star)),
            "K_stop_test_11": stop_theory, "K_floor": outer_floor(S_BAR, eps),
            "step_ratio_max": float(max(step_ratio)),
            "schedule_rel_error": float(np.max(np.abs(
                np.array(pkg_taus) / np.array(taus) - 1.0)))}


@lru_cache(maxsize=4)
def sweep(seed: int, size: str) -> dict:
    """The eps sweep from ``w^0`` on the unit sphere with mu^0 = 0, and one run started at
    the KKT pair ``(w*, mu*)`` itself (r_0 = 0: there every iterate's distance is the
    inexactness Lemma 3.1's sum term bounds, so (43) bites).
    """
    rng = np.random.default_rng(seed)
    problem = qp_ball(rng)
    gt = GroundTruth()
    w_star, mu_star = solve_problem(problem, gt)
    mu_star = np.maximum(stack_mu(mu_star), 0.0)
    g = rng.standard_normal(problem.d)
    w0 = g / np.linalg.norm(g)
    r0 = float(np.linalg.norm(np.concatenate([w0 - w_star, mu_star])))
    runs = [_run(problem, w_star, mu_star, w0, eps) for eps in EPS[size]]
    at_solution = [_run(problem, w_star, mu_star, w_star.copy(), EPS[size][-1],
                        mu_start=mu_star)]
    return {"runs": runs, "at_solution": at_solution, "r0": r0, "d": problem.d,
            "n": problem.n, "gt": gt.as_dict(), "all_optimal": gt.all_optimal}


def _share_fail(share: float) -> float:
    """Margin of "some instance made the statement non-trivial": -1 when none did."""
    return np.inf if share > 0 else -1.0


@register("constrfl.theorem31_output", paper="003 constrfl",
          claim="If Algorithm 1 terminates, its output is (eps1, eps2)-optimal")
def check_output(seed: int, size: str) -> CheckResult:
    """Margins, all relative: ``1 - residual/eps`` for both Definition-1 residuals,
    ``1 - ||grad ell_k(w^{k+1})||_inf / tau_k`` for (10) with ``tau_k`` of Algorithm 1 line 2
    computed in ``theory.constrfl.schedule``, ``0.5 - |K - K_(11)|`` where ``K_(11)`` is the
    first k at which stop test (11), evaluated here on the package's iterates with that
    ``tau_k``, holds (an integer identity), -1 for a run that did not stop, and the tau
    Algorithm 2 was handed equal to ``tau_k`` (relative, 1e-12; margin ``1 - error/1e-12``).
    Non-trivial: a run whose terminal residual is at least 1e-2 eps.
    """
    s = sweep(seed, size)
    runs = s["runs"]
    margins = []
    for r in runs:
        k11 = r["K_stop_test_11"]
        stop_m = 0.5 - abs(r["K"] - k11) if k11 is not None else -1.0
        margins += [1 - r["stationarity"] / r["eps"], 1 - r["feasibility"] / r["eps"],
                    r["precondition_margin"], stop_m if r["stopped"] else -1.0,
                    1 - r["schedule_rel_error"] / 1e-12]
    ratios = [max(r["stationarity"], r["feasibility"]) / r["eps"] for r in runs]
    nontrivial = float(np.mean([x >= 1e-2 for x in ratios]))
    margin = min(*margins, _share_fail(nontrivial))
    close = runs[int(np.argmax(ratios))]
    res = max(close["stationarity"], close["feasibility"])
    return CheckResult(
        name="constrfl.theorem31_output", claim="Definition-1 residuals <= eps at termination; "
        "(10) ||grad ell_k(w^{k+1})||_inf <= tau_k = s_bar/(k+1)^2 at every outer iteration; "
        f"the package stops where (11) first holds. Non-trivial runs (residual >= 1e-2 eps): "
        f"{nontrivial:.0%}; tightest residual/eps {max(ratios):.3f}",
        paper="003 constrfl", equation="Theorem 3.1, (10)-(11), Algorithm 1 line 2",
        instances=len(runs), worst_margin=float(margin), ground_truth=s["gt"],
        passed=bool(margin >= 0 and s["all_optimal"]),
        measured=float(res), bound=float(close["eps"]),
        looseness=float(close["eps"] / res) if res > 0 else None,
        closest={k: close[k] for k in ("eps", "K", "K_stop_test_11", "stationarity",
                                        "feasibility", "precondition_margin")},
        details={"runs": runs, "nontrivial_share": nontrivial,
                 "criteria": "relative margins; stop identity 0.5 - |K - K_(11)|"})


@register("constrfl.lemma31_bounded_iterates", paper="003 constrfl",
          claim="All iterates stay within r_0 + 2 sqrt(d) s_bar beta of (w*, mu*)")
def check_bounded(seed: int, size: str) -> CheckResult:
    """(43) at every k >= 1 as a margin relative to its sum term ``beta sqrt(d) sum_{j<k}
    tau_j`` (tau_j from ``theory.constrfl.schedule``), the k = 0 identity ``||z^0 - z*|| = r_0``
    (r_0 from the start the lemma assumes, mu^0 = 0, not read from the package) to 1e-9, and
    (47). Non-trivial: iterates farther from z* than r_0 (where the sum term is needed); the
    run started at the KKT pair supplies them.
    """
    s = sweep(seed, size)
    runs = s["runs"] + s["at_solution"]
    bound_d = s["r0"] + 2 * np.sqrt(s["d"]) * S_BAR * BETA
    bound_n = s["r0"] + 2 * np.sqrt(s["n"]) * S_BAR * BETA
    worst = max(r["max_joint_dist_k_ge_1"] for r in s["runs"])
    m43 = min(r["eq43_relative_margin"] for r in runs)
    m0 = min(1e-9 * (1 + r["r0"]) - r["joint_dist_0_error"] for r in runs)
    m_step = min(1 - r["step_ratio_max"] for r in runs)
    m47 = min((r["r0"] + 2 * np.sqrt(s["d"]) * S_BAR * BETA - r["max_joint_dist_k_ge_1"])
              / (2 * np.sqrt(s["d"]) * S_BAR * BETA) for r in runs)
    above = sum(r["k_above_r0"] for r in runs)
    total = sum(r["k_count"] for r in runs)
    share = above / max(total, 1)
    margin = min(m43, m0 / 1e-9, m47, m_step, _share_fail(share))
    close = max(runs, key=lambda r: r["eq43_tightest_ratio"])
    return CheckResult(
        name="constrfl.lemma31_bounded_iterates", claim="||(w^k, mu^k) - (w*, mu*)|| <= r_0 + "
        "beta sqrt(d) sum_{j<k} tau_j (43) for all k >= 0, hence <= r_0 + 2 sqrt(d) s_bar beta "
        f"(47); induction step ||z^(k+1) - Jz^k|| <= beta sqrt(d) tau_k (tightest ratio "
        f"{1 - m_step:.3g}). Non-trivial (distance > r_0): {above}/{total} iterates; tightest "
        f"(distance - r_0) / sum term = {close['eq43_tightest_ratio']:.3g}",
        paper="003 constrfl", equation="Lemma 3.1, (15), (43), (47)",
        instances=total, worst_margin=float(margin),
        ground_truth=s["gt"], passed=bool(margin >= 0 and s["all_optimal"]),
        measured=float(worst), bound=float(bound_d), looseness=float(bound_d / worst),
        closest={"eps": close["eps"], "start": close["start"], "r0": close["r0"],
                 "eq43_tightest_ratio": close["eq43_tightest_ratio"],
                 "eq43_relative_margin": close["eq43_relative_margin"],
                 "joint_dist_0": close["joint_dist_0"],
                 "max_joint_dist_k_ge_1": close["max_joint_dist_k_ge_1"]},
        details={"r0": s["r0"], "bound_sqrt_d": bound_d, "printed_bound_sqrt_n": bound_n,
                 "printed_form_margin": bound_n - worst, "worst_distance": worst,
                 "eq43_relative_margin": m43, "k0_identity_margin": m0, "eq47_margin": m47,
                 "induction_step_margin": m_step,
                 "nontrivial_share": share, "runs": runs,
                 "max_component_distance": max(max(r["max_dist_w"], r["max_dist_mu"])
                                               for r in s["runs"])})


@register("constrfl.theorem32_outer_complexity", paper="003 constrfl",
          claim="Outer iterations K(eps) <= 2 K_{eps,eps} + 1 = O(eps^-2)")
def check_complexity(seed: int, size: str) -> CheckResult:
    """(48) ``K <= 2 K_{eps,eps} + 1`` (relative margin), fitted slope <= 2.2, the floor
    ``K >= K_floor = ceil(sqrt(s_bar/eps))`` of stop test (11) (exact rational arithmetic in
    ``theory.constrfl.schedule.outer_floor``; margin ``(K - K_floor)/K_floor``) and the exact
    count: ``K`` equals the first k where (11), evaluated here on the iterates, holds
    (margin ``0.5 - |K - K_(11)|``). Non-trivial: runs with ``K_floor >= 2``.
    """
    s = sweep(seed, size)
    runs = s["runs"]
    coef = (S_BAR + np.sqrt(2) * (s["r0"] + 4 * np.sqrt(s["d"]) * S_BAR * BETA) / BETA) ** 2
    margins, rows = [], []
    for r in runs:
        k_bound = 2 * coef * r["eps"] ** -2 + 1
        floor = r["K_floor"]
        k11 = r["K_stop_test_11"]
        margins += [(k_bound - r["K"]) / k_bound, (r["K"] - floor) / floor,
                    0.5 - abs(r["K"] - k11) if k11 is not None else -1.0,
                    np.inf if r["stopped"] else -1.0, 1 - r["schedule_rel_error"] / 1e-12]
        rows.append({"eps": r["eps"], "K": r["K"], "K_stop_test_11": k11, "bound": k_bound,
                     "floor": floor, "inner_rounds": r["inner_rounds"]})
    x = np.log(1 / np.array([r["eps"] for r in runs]))
    y = np.log(np.array([r["K"] for r in runs], dtype=float))
    slope = float(np.polyfit(x, y, 1)[0])
    margins.append(2.2 - slope)
    share = float(np.mean([r["floor"] >= 2 for r in rows]))
    margin = min(*margins, _share_fail(share))
    close = min(rows, key=lambda r: r["bound"] / r["K"])
    tight = min(rows, key=lambda r: r["K"] / r["floor"])
    return CheckResult(
        name="constrfl.theorem32_outer_complexity", claim="K(eps) <= 2 K_{eps,eps} + 1, "
        "slope of log K vs log 1/eps <= 2.2, K >= ceil(sqrt(s_bar/eps)), K = first k where "
        f"(11) holds. Tightest K / K_floor = {tight['K']}/{tight['floor']} at "
        f"eps = {tight['eps']}; non-trivial floors (K_floor >= 2): {share:.0%}",
        paper="003 constrfl", equation="Theorem 3.2, (48), Lemma A.3, (11)", instances=len(runs),
        worst_margin=float(margin), ground_truth=s["gt"],
        passed=bool(margin >= 0 and s["all_optimal"]),
        measured=float(close["K"]), bound=float(close["bound"]),
        looseness=float(close["bound"] / close["K"]), closest=dict(close),
        finding=f"(48) holds but is loose: 2 K_eps,eps + 1 is {close['bound'] / close['K']:.3g}x "
                "the outer iterations used at the closest eps; what is tight is the exact count "
                "(the first k where (11) holds) and the floor K >= ceil(sqrt(s_bar/eps))",
        details={"runs": rows, "fitted_slope": slope, "K_coefficient": coef,
                 "nontrivial_share": share,
                 "tightest_floor": {"eps": tight["eps"], "K": tight["K"],
                                    "K_floor": tight["floor"]}})
