"""Paper 003, Lemma 4.2 (29), Theorem 4.2's round bound (74) and Theorem 3.2(b)'s total
inner-round bound (83)-(84) (docs/decisions.md#constrfl-admm-theorems and §8.5), on QP-ball (d = 6,
n = 3).

Lemma 4.2 / (74) — one subproblem (12), as in ``constrfl.theorem41_42_admm_linear_rate``:
``w^k ~ N(0, I)``, ``mu^k = mu* + 0.5``, beta = 2, ``w~* = argmin ell_k`` (Newton to 1e-14).
The package's Algorithm 2 (``repro.constrfl.admm``: ``ServerSide``, ``ClientSide``,
``InexactADMM``; no private copy) runs with the paper's stop test (23)
``eps_{t+1} + sum_i epst_i <= tau`` (server term q^t, tau = 1e-8) and inner solves stopped as
soon as ``||grad||_inf <= eps_{t+1}``; every round is re-evaluated here (``audit_admm``: the
(18)/(19) residuals against ``q^t``, (20), (22)-(23) and the stop round), and the round count
is held against the exact floor of (23) (``rounds_floor``). (The former "adversarial" variant,
residuals forced to 0.999 eps in every coordinate, needed a private ADMM and was dropped.)

* (29), sum form of its proof (end of App. B.3)::

      sigma/2 (||w^{t+1} - w~*||^2 + sum_i ||u_i^{t+1} - w~*||^2)
        <= D (n+1) / (2 sigma (1-q^2)) + sum_i (rho/2 ||w~* - w~0||^2
                                              + 1/(2 rho) ||grad P_i(w~*) - grad P_i(w~0)||^2)

  with ``D = d`` (the proof's Euclidean ``||e_i|| <= eps`` holds only up to sqrt(d),
  docs/decisions.md#constrfl-paper-errata; pass criterion) and ``D = 1`` (printed form, margin
  reported).
* (72)-(74): with ``sigma = 1/((n+1) beta)``, ``L_{∇P}`` the largest generalized-Hessian norm of
  the P_i (i = 0..n) sampled on a ball around ``w~*`` (x 1.1), ``r, q_r`` of (65) and ``b`` of
  App. B.4 (eps^2 terms times d): every round ``eps_{t+1} + sum_i epst_i <= (n+1+b) q_r^{t/2}``,
  and the number of rounds is at most (74) ``ceil(2 log(tau/(n+1+b)) / log q_r) + 1``. Two
  balls: Q of (29) itself (the paper's constant, astronomically loose) and the smallest ball
  around ``w~*`` holding every iterate (Lemma B.2 needs only a convex set containing the
  iterates and ``w~*``; a posteriori, far tighter). Margins are log-ratios / relative slacks.
* (83)-(84): Algorithm 1 (paper mode, beta = 2, s_bar = 1e-2, rho = 1, q = 0.5, eps sweep) —
  every outer iteration's ADMM round count is <= T_k of (83) (b_k, q~_r from that
  subproblem, L on the ball around ``w_*^k`` holding its iterates), and the total is <= the
  right-hand side of (84) evaluated at ``K`` = the actual outer count and ``b = max_k b_k``,
  ``q~_r = max_k q~_{r,k}`` (each <= the printed ``K_{eps,eps}``, ``b̄``, ``q~_r`` over Q_2, and
  (84)'s right-hand side increases in all three, so this is implied by and sharper than (84)).
"""

from __future__ import annotations

import numpy as np

from repro.constrfl.config import ProxALConfig
from repro.constrfl.instances import qp_ball
from repro.constrfl.merit import Merit
from repro.constrfl.proxal import FedProxAL
from repro.constrfl.start import ProxALInit
from theory.constrfl.admm_audit import (
    BETA,
    audit_admm,
    b_constant,
    lipschitz_on_ball,
    package_admm,
    q_r,
    rounds_bound,
    rounds_floor,
)
from theory.constrfl.reference import (
    Ground,
    merits,
    outer_merits,
    state_mu,
    subproblem,
)
from theory.constrfl.schedule import tau as tau_k
from theory.evidence import Evidence, Term
from theory.registry import register
from theory.result import CheckResult

__all__ = ["audit_admm", "b_constant", "lipschitz_on_ball", "package_admm", "rounds_bound",
           "rounds_floor"]  # re-exported from theory.constrfl.admm_audit

TAU = 1e-8
T_MAX = 1000  # rounds cap of Lemma 4.2's runs (they stop in <= 250; (74) allows millions)
LEMMA42_TERMS = (
    Term("inexact inner solves (eps-terms of (29), (72))", "max_t residual / eps_{t+1}", 1e-2),
)
LEMMA42_NAMES = ("(18)/(19): inner residuals <= eps_{t+1} = q^t", "(20): dual update",
                 "(22)-(23): certificate recomputed", "stop at the first round (23) holds",
                 "rounds >= the floor of (23)", "Lemma 4.2 (29), factor d",
                 "(72): certificate <= (n+1+b) q_r^(t/2)", "Thm 4.2 (74), iterates' ball",
                 "Thm 4.2 (74), Q of (29)")
INNER_TERMS = (
    Term("inexact inner solves", "max_t residual / eps_{t+1}", 1e-2),
    Term("rounds beyond the floor of (23)", "rounds_k - floor_k", 0.5),
)
INNER_NAMES = ("(83): rounds_k <= T_k", "(84): total rounds", "(18)/(19): inner residuals "
               "<= eps_{t+1} = q^t", "(20): dual update", "stop at the first round (23) holds",
               "rounds >= the floor of (23)")


def _subproblem(seed: int):
    """One subproblem (12) of QP-ball: the package's merit objects Algorithm 2 is run on, the
    same merits written here, the reference ``w~*`` (Newton, written here).
    """
    rng = np.random.default_rng(seed)
    problem = qp_ball(rng)
    gt = Ground()
    _, mu_star = gt.kkt(problem)
    mu_k = [np.maximum(m, 0) + 0.5 for m in mu_star]
    center = rng.standard_normal(problem.d)
    prox = 1.0 / ((problem.n + 1) * BETA)
    w_ref, res = subproblem(problem, mu_k, center, BETA, prox, tol=1e-14)
    sm = Merit(problem.server, mu_k[0][None], center, BETA, prox)
    cm = Merit(problem.clients[0], np.stack(mu_k[1:]), center, BETA, prox)
    th = merits(problem, mu_k, center, BETA, prox)
    return problem, gt, (sm, cm), (th[0], th[1:]), center, w_ref, res, rng


@register("constrfl.lemma42_admm_bounds", paper="003 constrfl",
          claim="Algorithm 2's iterates stay in Q of (29) (Lemma 4.2) and it stops within the "
                "round bound (74) (Theorem 4.2), with the inf-to-Euclidean factor d")
def check_lemma42(seed: int, size: str) -> CheckResult:
    """The package's Algorithm 2 (``package_admm``) on one subproblem (12), per (q, rho):

    * its rounds re-evaluated (``audit_admm``): (18)/(19) residuals ``<= eps_{t+1} = q^t``
      (relative margin ``1 - max residual / eps``), (20) to 1e-10, the certificate (23) equal
      to the package's to 1e-10, and the package's round count equal to the first round where
      the recomputed certificate is ``<= tau`` (margin ``0.5 - |difference|``);
    * the exact floor of the count, ``rounds >= rounds_floor(q, tau)`` (no stop before
      ``q^t <= tau``; relative margin), reported next to (74) with the tightest ratio;
    * (29) with factor d (relative margin), (72) (log slack), (74) on the iterates' ball and
      on Q of (29) (relative slack).

    Non-trivial rounds: those whose inner solves used at least 1e-2 of their tolerance (the
    eps-terms of (29) and (72) are exercised), as a share of all rounds; fails if 0.
    """
    problem, gt, (sm, cm), (tsm, tcms), w0, w_ref, ref_res, rng = _subproblem(seed)
    ev = Evidence(LEMMA42_TERMS)
    n, d = problem.n, problem.d
    sigma = 1.0 / ((n + 1) * BETA)
    settings = ([(0.6, 1.0), (0.9, 3.0)] if size == "small"
                else [(q, r) for q in (0.3, 0.6, 0.9) for r in (0.3, 1.0, 3.0)])
    samples = 60 if size == "small" else 120
    gdiff = float(sum(np.sum((m.grad(w_ref) - m.grad(w0)) ** 2) for m in tcms))
    rows, m29, m29_printed, m72, m74, m74_Q = [], np.inf, np.inf, np.inf, np.inf, np.inf
    m_res, m_dual, m_cert, m_stop, m_floor = np.inf, np.inf, np.inf, np.inf, np.inf
    max_res, live, total_rounds = 0.0, 0, 0
    for q, rho in settings:
        S0 = rho / 2 * n * float(np.sum((w_ref - w0) ** 2)) + gdiff / (2 * rho)     # (73)
        admm, res = package_admm(sm, cm, w0, rho, q, TAU, T_MAX)
        hist = admm.history
        audit = audit_admm(hist, tsm, tcms, w0, rho, q, TAU)
        ev.activity("inexact inner solves (eps-terms of (29), (72))",
                    float(audit["residual_over_eps"].max()))
        rounds = res.rounds
        ratio = audit["residual_over_eps"]
        max_res = max(max_res, float(ratio.max()))
        live += int(np.sum(ratio >= 1e-2))
        total_rounds += rounds
        m_res = min(m_res, 1 - float(ratio.max()))
        m_dual = min(m_dual, 1 - audit["dual_identity_error"] / 1e-10)
        m_cert = min(m_cert, 1 - audit["certificate_rel_error"] / 1e-10)
        stop = audit["stop_round"]
        m_stop = min(m_stop, 0.5 - abs(rounds - stop) if stop is not None else -1.0)
        floor = rounds_floor(q, TAU)
        m_floor = min(m_floor, (rounds - floor) / floor)
        Ws = np.array([h["w"] for h in hist])
        Us = np.array([h["U"][0] for h in hist])
        lhs = sigma / 2 * (np.sum((Ws - w_ref) ** 2, axis=1)
                           + np.sum((Us - w_ref) ** 2, axis=(1, 2)))
        rhs = {D: D * (n + 1) / (2 * sigma * (1 - q * q)) + S0 for D in (d, 1)}
        m29 = min(m29, 1 - float(lhs.max()) / rhs[d])
        m29_printed = min(m29_printed, 1 - float(lhs.max()) / rhs[1])
        # Lemma B.2 on Q of (29) (radius from the corrected bound) and on the iterates' ball.
        radius_Q = float(np.sqrt(2 * rhs[d] / sigma))
        radius_it = float(max(np.linalg.norm(Ws - w_ref, axis=1).max(),
                              np.linalg.norm(Us - w_ref, axis=2).max(),
                              np.linalg.norm(w0 - w_ref)))
        row = {"q": q, "rho": rho, "rounds": rounds, "stopped": res.certified,
               "rounds_floor": floor, "stop_round_recomputed": stop,
               "max_residual_over_eps": float(ratio.max()),
               "lemma42_lhs_max": float(lhs.max()),
               "lemma42_bound_d": rhs[d], "lemma42_bound_printed": rhs[1]}
        for name, radius in (("iterates", radius_it), ("Q29", radius_Q)):
            L = lipschitz_on_ball([tsm, *tcms], w_ref, radius, rng, samples)
            qr = q_r(q, rho, sigma, L)
            b = b_constant(S0, n, rho, sigma, L, q, d)
            T = rounds_bound(TAU, n, b, qr)
            t = np.arange(rounds)
            slack = np.log((n + 1 + b) * qr ** (t / 2)) - np.log(audit["certificate"])  # (72)
            row.update({f"L_{name}": L, f"q_r_{name}": qr, f"b_{name}": b,
                        f"bound74_{name}": T,
                        f"bound74_printed_{name}": rounds_bound(
                            TAU, n, b_constant(S0, n, rho, sigma, L, q, 1.0), qr)})
            if name == "iterates":
                m72 = min(m72, float(slack.min()))
                m74 = min(m74, (T - rounds) / T)
            else:
                m74_Q = min(m74_Q, (T - rounds) / T)
        rows.append(row)
        if not res.certified:  # no stop by (23) within T_MAX rounds: fails
            m74 = -1.0
            break
    share = live / max(total_rounds, 1)
    crit = {"residuals_18_19_relative": m_res, "dual_update_20": m_dual,
            "certificate_23": m_cert, "stop_round_identity": m_stop,
            "rounds_floor_relative": m_floor, "lemma42_29_relative": m29,
            "eq72_log_slack": m72, "eq74_iterates_ball": m74, "eq74_Q29_ball": m74_Q}
    for name, v in zip(LEMMA42_NAMES, crit.values(), strict=True):
        ev.criterion(name, v)
    ev.path("constrfl:Algorithm 2/bound/newton")
    margin = ev.worst([np.inf if share > 0 else -1.0])
    close = min(rows, key=lambda r: (r["bound74_iterates"] - r["rounds"]) / r["bound74_iterates"])
    loose = close["bound74_iterates"] / close["rounds"]
    loose_Q = min(r["bound74_Q29"] / r["rounds"] for r in rows)
    return CheckResult(
        name="constrfl.lemma42_admm_bounds",
        claim="The package's Algorithm 2: (18)/(19) residuals <= q^t, (20), (23) and its stop "
              "round re-evaluated; rounds >= the floor of (23); (29) with factor d on the "
              "eps^2 term; (72); rounds <= (74). Rounds / floor / (74) on the iterates' ball: "
              + "; ".join(f"q={r['q']}, rho={r['rho']}: {r['rounds']} / {r['rounds_floor']} / "
                          f"{r['bound74_iterates']:.3g}" for r in rows)
              + f"; non-trivial rounds (inexactness >= 1e-2 eps): {live}/{total_rounds}",
        paper="003 constrfl", equation="Algorithm 2 (18)-(23), Lemma 4.2 (29), (63)-(74), "
        "Theorem 4.2", instances=total_rounds, worst_margin=float(margin),
        ground_truth={**gt.as_dict(), "reference": "Newton on ell_k to ||grad||_inf <= 1e-14",
                      "reference_residual": ref_res},
        passed=bool(margin >= 0 and gt.all_optimal),
        measured=float(close["rounds"]), bound=close["bound74_iterates"],
        exact=float(close["rounds_floor"]), looseness=float(loose),
        closest={"q": close["q"], "rho": close["rho"], "rounds": close["rounds"],
                 "rounds_floor_23": close["rounds_floor"],
                 "bound74_iterates_ball": close["bound74_iterates"],
                 "bound74_Q29_ball": close["bound74_Q29"], "L_iterates": close["L_iterates"],
                 "q_r_iterates": close["q_r_iterates"], "b_iterates": close["b_iterates"],
                 "max_residual_over_eps": close["max_residual_over_eps"]},
        finding=f"(74) holds but is loose: at best {loose:.3g}x the rounds used with L on the "
                f"iterates' ball, {loose_Q:.3g}x with L on Q of (29); what is tight is the "
                f"floor of (23) (rounds / floor >= {1 + m_floor:.3g}) and the per-round "
                f"inexactness (max residual / eps = {max_res:.3g})",
        paper_setting={"q": 0.9, "note": "the q of the experiments' scripts (0.9) is in the "
                       "grid; tau = 1e-8"}, **ev.fields(),
        details={"runs": rows, "criteria_margins": crit, "nontrivial_share": share,
                 "lemma42_margin_relative": m29,
                 "lemma42_printed_form_margin_relative": m29_printed,
                 "eq72_log_slack_min": m72, "eq74_relative_slack_iterates_ball": m74,
                 "eq74_relative_slack_Q29_ball": m74_Q,
                 "max_inner_residual_over_eps": max_res})


def _outer_runs(seed: int, size: str):
    rng = np.random.default_rng(seed)
    problem = qp_ball(rng)
    g = rng.standard_normal(problem.d)
    w0 = g / np.linalg.norm(g)
    return problem, w0, rng, ((1e-1, 1e-2) if size == "small" else (1e-1, 1e-2, 1e-3))


@register("constrfl.theorem32_inner_total", paper="003 constrfl",
          claim="Algorithm 1's ADMM rounds per outer iteration are <= T_k (83) and their total "
                "is <= the right-hand side of (84)")
def check_inner_total(seed: int, size: str) -> CheckResult:
    problem, w0, rng, eps_list = _outer_runs(seed, size)
    n, d = problem.n, problem.d
    rho, q, s_bar = 1.0, 0.5, 1e-2
    sigma = 1.0 / ((n + 1) * BETA)
    samples = 40 if size == "small" else 80
    rows, m83, m84 = [], np.inf, np.inf
    m_res, m_dual, m_stop, m_floor, live, all_rounds = np.inf, np.inf, np.inf, np.inf, 0, 0
    ev = Evidence(INNER_TERMS)
    ev.path("constrfl:Algorithm 1/paper/newton")
    for eps in eps_list:
        floors = []
        cfg = ProxALConfig(beta=BETA, s_bar=s_bar, rho=rho, q=q, eps1=eps, eps2=eps,
                           k_max=500, t_max=5000, solver_tol_floor=1e-13)
        alg = FedProxAL(problem, cfg, init=ProxALInit(w0), keep_admm_history=True)
        bs, qrs, per_k = [], [], []
        while not alg.state.stopped and alg.state.k < cfg.k_max:
            k, wk = alg.state.k, alg.state.w.copy()
            mu = state_mu(alg.state)
            ms = outer_merits(problem, wk, mu, BETA)
            alg.step()
            if not alg.state.admm_certified[-1]:
                # Theorem 4.2: each call stops by (23); one that ran out of rounds fails
                m83 = -1.0
                break
            hist = alg.last_admm.history
            rounds_k = alg.state.admm_rounds[-1]
            audit = audit_admm(hist, ms[0], ms[1:], wk, rho, q, tau_k(s_bar, k))
            ratio = audit["residual_over_eps"]
            ev.activity("inexact inner solves", float(ratio.max()))
            live += int(np.sum(ratio >= 1e-2))
            all_rounds += rounds_k
            m_res = min(m_res, 1 - float(ratio.max()))
            m_dual = min(m_dual, 1 - audit["dual_identity_error"] / 1e-10)
            stop = audit["stop_round"]
            m_stop = min(m_stop, 0.5 - abs(rounds_k - stop) if stop is not None else -1.0)
            floor = rounds_floor(q, tau_k(s_bar, k))
            m_floor = min(m_floor, (rounds_k - floor) / floor)
            ev.activity("rounds beyond the floor of (23)", rounds_k - floor)
            floors.append(floor)
            w_star, _ = subproblem(problem, mu, wk, BETA, 1.0 / ((n + 1) * BETA),
                                   w0=alg.state.w, tol=1e-13)
            pts = np.vstack([wk[None]] + [h["w"][None] for h in hist]
                            + [h["U"][0] for h in hist])
            radius = float(np.linalg.norm(pts - w_star, axis=1).max())
            L = lipschitz_on_ball(ms, w_star, radius, rng, samples)
            S0 = (rho / 2 * n * float(np.sum((w_star - wk) ** 2))
                  + float(sum(np.sum((m.grad(w_star) - m.grad(wk)) ** 2)
                              for m in ms[1:])) / (2 * rho))
            b = b_constant(S0, n, rho, sigma, L, q, d)
            qr = q_r(q, rho, sigma, L)
            T = rounds_bound(tau_k(s_bar, k), n, b, qr)                       # (83)
            m83 = min(m83, (T - alg.state.admm_rounds[-1]) / T)
            bs.append(b)
            qrs.append(qr)
            per_k.append((alg.state.admm_rounds[-1], T))
        if not bs:
            break
        K = alg.state.k
        total = sum(alg.state.admm_rounds)
        b_max, qr_max = max(bs), max(qrs)
        rhs84 = K * (np.ceil(2 * np.log((n + 1 + b_max) * K ** 2 / s_bar)
                             / np.log(1 / qr_max)) + 1)
        m84 = min(m84, (rhs84 - total) / rhs84 if alg.state.stopped else -1.0)
        rows.append({"eps": eps, "K": K, "total_rounds": total, "rhs84": float(rhs84),
                     "sum_T_k_83": float(sum(T for _, T in per_k)),
                     "total_rounds_floor": int(sum(floors)),
                     "rounds_and_T_k": per_k, "b_max": b_max, "q_r_max": qr_max})
    share = live / max(all_rounds, 1)
    crit = {"eq83_relative": m83, "eq84_relative": m84, "residuals_18_19_relative": m_res,
            "dual_update_20": m_dual, "stop_round_identity": m_stop,
            "rounds_floor_relative": m_floor}
    for name, v in zip(INNER_NAMES, crit.values(), strict=True):
        ev.criterion(name, v)
    margin = ev.worst([np.inf if share > 0 else -1.0])
    if not rows:
        rows.append({"eps": eps_list[0], "K": 1, "total_rounds": cfg.t_max, "rhs84": np.inf,
                     "sum_T_k_83": np.inf, "rounds_and_T_k": [], "b_max": np.nan,
                     "q_r_max": np.nan, "total_rounds_floor": 0})
    close = min(rows, key=lambda r: (r["rhs84"] - r["total_rounds"]) / r["rhs84"])
    loose = close["rhs84"] / close["total_rounds"]
    return CheckResult(
        name="constrfl.theorem32_inner_total",
        claim="rounds_k <= T_k (83) for every k; total <= (84); every ADMM round of the "
              "package re-evaluated ((18)/(19) residuals <= q^t, (20), stop round of (23)) and "
              "rounds_k >= the floor of (23) at tau_k. Total / sum of floors / (84): "
              + "; ".join(f"eps={r['eps']}: K={r['K']}, {r['total_rounds']} / "
                          f"{r['total_rounds_floor']} / {r['rhs84']:.3g}" for r in rows)
              + f"; non-trivial rounds (inexactness >= 1e-2 eps): {live}/{all_rounds}",
        paper="003 constrfl", equation="(83), (84), Theorem 3.2(b), Algorithm 2 (18)-(23)",
        instances=len(rows),
        worst_margin=float(margin),
        ground_truth={"reference": "w_*^k by Newton on ell_k to ||grad||_inf <= 1e-13"},
        passed=bool(margin >= 0),
        measured=float(close["total_rounds"]), bound=close["rhs84"],
        exact=float(close["total_rounds_floor"]), looseness=float(loose),
        closest={"eps": close["eps"], "K": close["K"], "total_rounds": close["total_rounds"],
                 "rhs84": close["rhs84"], "b_max": close["b_max"], "q_r_max": close["q_r_max"]},
        finding=f"(84) holds but is loose: {loose:.3g}x the total inner rounds used at the "
                "closest eps; what is tight is the floor of (23) (total / sum of floors = "
                f"{close['total_rounds'] / max(close['total_rounds_floor'], 1):.3g}) and the "
                "per-round inexactness",
        paper_setting={"note": "the q of the experiments' scripts (0.9) is exercised by "
                       "constrfl.lemma42_admm_bounds; here q = 0.5"}, **ev.fields(),
        details={"runs": rows, "eq83_relative_slack": m83, "eq84_relative_slack": m84,
                 "criteria_margins": crit, "nontrivial_share": share})
