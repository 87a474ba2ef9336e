"""Paper 003, Lemma 4.2 (29), Theorem 4.2's round bound (74) and Theorem 3.2(b)'s total
inner-round bound (83)-(84) (specs/constrfl.md §8.2 and §8.5), on QP-ball (d = 6, n = 3).

Lemma 4.2 / (74) — one subproblem (12), as in ``constrfl.theorem41_42_admm_linear_rate``:
``w^k ~ N(0, I)``, ``mu^k = mu* + 0.5``, beta = 2, ``w~* = argmin ell_k`` (Newton to 1e-14).
Algorithm 2 runs with the paper's stop test (23) ``eps_{t+1} + sum_i epst_i <= tau`` (server term
q^t, tau = 1e-8) in two variants: inner solves stopped as soon as ``||grad||_inf <= eps_{t+1}``
("criterion"), and "adversarial" inner solves that solve ``grad phi = e`` exactly for a random sign
vector ``e`` with ``||e||_inf = 0.999 eps_{t+1}`` (``||e||_2 = sqrt(d) ||e||_inf``: the tolerance
binds in every coordinate).

* (29), sum form of its proof (end of App. B.3)::

      sigma/2 (||w^{t+1} - w~*||^2 + sum_i ||u_i^{t+1} - w~*||^2)
        <= D (n+1) / (2 sigma (1-q^2)) + sum_i (rho/2 ||w~* - w~0||^2
                                              + 1/(2 rho) ||grad P_i(w~*) - grad P_i(w~0)||^2)

  with ``D = d`` (the proof's Euclidean ``||e_i|| <= eps`` holds only up to sqrt(d),
  specs/constrfl.md §8.7 item 3; pass criterion) and ``D = 1`` (printed form, margin reported).
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
from repro.constrfl.groundtruth import GroundTruth, merits_for, solve_problem
from repro.constrfl.instances import qp_ball
from repro.constrfl.merit import Merit
from repro.constrfl.proxal import FedProxAL
from repro.constrfl.subsolvers import newton_solve
from theory.registry import register
from theory.result import CheckResult

__all__ = ["admm_run", "b_constant", "lipschitz_on_ball", "rounds_bound"]

BETA, TAU = 2.0, 1e-8
T_MAX = 1000  # rounds cap of Lemma 4.2's runs (they stop in <= 250; (74) allows millions)
ROUND_OFF = 1e-13


def _sign_vectors(rng, shape, eps: float) -> np.ndarray:
    return 0.999 * eps * rng.choice((-1.0, 1.0), size=shape)


def admm_run(sm: Merit, cm: Merit, w0: np.ndarray, rho: float, q: float, tau: float,
             t_max: int, adversarial: np.random.Generator | None = None) -> dict:
    """Algorithm 2 (lines 1-10) with the paper's (23) (server term q^t), recording iterates.

    ``adversarial`` (a Generator) replaces each inexact solve by the exact solution of
    ``grad phi = e`` with ``||e||_inf = 0.999 eps_{t+1}`` (a sign vector).
    """
    n, d = cm.block.size, w0.size
    w = w0.copy()
    U = np.broadcast_to(w0, (n, d)).copy()
    Lam = -cm.grad(U)                                                   # line 1
    ws, Us, certs, resid = [], [], [], 0.0
    for t in range(t_max):
        eps = q ** t                                                    # line 3
        ut = U + Lam / rho
        if adversarial is None or eps < 1e3 * ROUND_OFF:
            # Below round-off no solver certifies eps: floor the tolerance (deviations.md,
            # "constrfl resolved ambiguities"). The adversarial residual is forced only while
            # the exact solve's own error (1e-13) stays below 1e-3 eps.
            e0, E = np.zeros((1, d)), np.zeros((n, d))
            tol0 = tol = max(eps, ROUND_OFF)
        else:
            e0, E = _sign_vectors(adversarial, (1, d), eps), _sign_vectors(adversarial,
                                                                           (n, d), eps)
            tol0 = tol = ROUND_OFF
        # (18): grad P_0(w) + sum_i rho (w - u~_i) = e0,
        # i.e. min P_0(w) - <e0, w> + (n rho / 2) ||w - mean_i u~_i||^2
        W, _ = newton_solve(sm, w[None], -e0, n * rho, ut.mean(0), tol0, max_iter=200)
        w = W[0]
        # (19): grad P_i(u) + lambda_i + rho (u - w) = e_i
        U_new, _ = newton_solve(cm, U, Lam - E, rho, w, tol, max_iter=200)
        Wb = np.broadcast_to(w, (n, d))
        epst = np.max(np.abs(cm.grad(Wb) + Lam - rho * (Wb - U)), axis=1)       # (22)
        e_srv = sm.grad(w[None])[0] + n * rho * w - rho * ut.sum(0)
        e_cli = cm.grad(U_new) + Lam + rho * (U_new - Wb)
        resid = max(resid, float(np.max(np.abs(e_srv))) / max(eps, ROUND_OFF),
                    float(np.max(np.abs(e_cli))) / max(eps, ROUND_OFF))
        Lam = Lam + rho * (U_new - Wb)                                  # (20)
        U = U_new
        ws.append(w.copy())
        Us.append(U.copy())
        certs.append(eps + float(epst.sum()))                           # (23)
        if certs[-1] <= tau:
            break
    return {"w": np.array(ws), "U": np.array(Us), "cert": np.array(certs),
            "rounds": len(certs), "stopped": certs[-1] <= tau, "max_residual_over_eps": resid}


def lipschitz_on_ball(merits: list[Merit], center: np.ndarray, radius: float,
                      rng: np.random.Generator, samples: int) -> float:
    """1.1 x the largest spectral norm of the generalized Hessians of the merits sampled in
    ``B(center, radius)`` (half uniform in the ball, half on its sphere, where the quadratic
    penalties' curvature is largest) — Lemma B.2's ``L_{∇P}``.
    """
    d = center.size
    g = rng.standard_normal((samples, d))
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    rad = radius * np.where(np.arange(samples) % 2 == 0, 1.0,
                            rng.uniform(size=samples) ** (1.0 / d))
    pts = np.vstack([center[None], center + rad[:, None] * g])
    best = 0.0
    for m in merits:
        for v in pts:
            H = m.hess(np.broadcast_to(v, (m.block.size, d)).copy())
            best = max(best, float(np.max(np.abs(np.linalg.eigvalsh(H)))))
    return 1.1 * best


def b_constant(S0: float, n: int, rho: float, sigma: float, L: float, q: float,
               dfac: float) -> float:
    """``b`` of App. B.4 with every eps^2 term multiplied by ``dfac`` (d: corrected; 1: printed)."""
    lead = 2 / np.sqrt(sigma) * n * (L + rho) + np.sqrt(2 * n * rho)
    inner = S0 + dfac / (1 - q) * ((n + 1) / (2 * sigma) + n * sigma / (rho ** 2 + 2 * L ** 2))
    return float(lead * (np.sqrt(inner) + np.sqrt(dfac * (n + 1) / (2 * sigma))))


def q_r(q: float, rho: float, sigma: float, L: float) -> float:
    """(65): ``q_r = max(q, 1/(1+r))``, ``r = sigma rho / (rho^2 + 2 L^2)``."""
    return max(q, 1.0 / (1.0 + sigma * rho / (rho ** 2 + 2 * L ** 2)))


def rounds_bound(tau: float, n: int, b: float, qr: float) -> float:
    """(74): ``ceil(2 log(tau/(n+1+b)) / log q_r) + 1``."""
    return float(np.ceil(2 * np.log(tau / (n + 1 + b)) / np.log(qr)) + 1)


def _subproblem(seed: int):
    rng = np.random.default_rng(seed)
    problem = qp_ball(rng)
    gt = GroundTruth()
    _, mu_star = solve_problem(problem, gt)
    mu_k = [np.maximum(m, 0) + 0.5 for m in mu_star]
    center = rng.standard_normal(problem.d)
    ell = merits_for(problem, mu_k, center, BETA, 1 / BETA)
    W, info = newton_solve(ell, center[None], np.zeros((1, problem.d)), 0.0, center, 1e-14,
                           max_iter=200)
    prox = 1.0 / ((problem.n + 1) * BETA)
    sm = Merit(problem.server, mu_k[0][None], center, BETA, prox)
    cm = Merit(problem.clients[0], np.stack(mu_k[1:]), center, BETA, prox)
    return problem, gt, sm, cm, center, W[0], float(info.residual[0]), rng


@register("constrfl.lemma42_admm_bounds", paper="003 constrfl",
          claim="Algorithm 2's iterates stay in Q of (29) (Lemma 4.2) and it stops within the "
                "round bound (74) (Theorem 4.2), with the inf-to-Euclidean factor d")
def check_lemma42(seed: int, size: str) -> CheckResult:
    problem, gt, sm, cm, w0, w_ref, ref_res, rng = _subproblem(seed)
    n, d = problem.n, problem.d
    sigma = 1.0 / ((n + 1) * BETA)
    settings = ([(0.6, 1.0), (0.9, 3.0)] if size == "small"
                else [(q, r) for q in (0.3, 0.6, 0.9) for r in (0.3, 1.0, 3.0)])
    samples = 60 if size == "small" else 120
    W_ref = np.broadcast_to(w_ref, (n, d))
    W_0 = np.broadcast_to(w0, (n, d))
    gdiff = float(np.sum((cm.grad(W_ref) - cm.grad(W_0)) ** 2))
    rows, m29, m29_printed, m72, m74, m74_Q = [], np.inf, np.inf, np.inf, np.inf, np.inf
    max_res = 0.0
    for q, rho in settings:
        S0 = rho / 2 * n * float(np.sum((w_ref - w0) ** 2)) + gdiff / (2 * rho)     # (73)
        for variant in ("criterion", "adversarial"):
            adv = np.random.default_rng([seed, int(100 * q), int(10 * rho)]) \
                if variant == "adversarial" else None
            run = admm_run(sm, cm, w0, rho, q, TAU, T_MAX, adv)
            max_res = max(max_res, run["max_residual_over_eps"])
            lhs = sigma / 2 * (np.sum((run["w"] - w_ref) ** 2, axis=1)
                               + np.sum((run["U"] - w_ref) ** 2, axis=(1, 2)))
            rhs = {D: D * (n + 1) / (2 * sigma * (1 - q * q)) + S0 for D in (d, 1)}
            m29 = min(m29, 1 - float(lhs.max()) / rhs[d])
            m29_printed = min(m29_printed, 1 - float(lhs.max()) / rhs[1])
            # Lemma B.2 on Q of (29) (radius from the corrected bound) and on the iterates' ball.
            radius_Q = float(np.sqrt(2 * rhs[d] / sigma))
            radius_it = float(max(np.linalg.norm(run["w"] - w_ref, axis=1).max(),
                                  np.linalg.norm(run["U"] - w_ref, axis=2).max(),
                                  np.linalg.norm(w0 - w_ref)))
            row = {"q": q, "rho": rho, "variant": variant, "rounds": run["rounds"],
                   "stopped": run["stopped"], "lemma42_lhs_max": float(lhs.max()),
                   "lemma42_bound_d": rhs[d], "lemma42_bound_printed": rhs[1]}
            for name, radius in (("iterates", radius_it), ("Q29", radius_Q)):
                L = lipschitz_on_ball([sm, cm], w_ref, radius, rng, samples)
                qr = q_r(q, rho, sigma, L)
                b = b_constant(S0, n, rho, sigma, L, q, d)
                T = rounds_bound(TAU, n, b, qr)
                t = np.arange(run["rounds"])
                slack = np.log((n + 1 + b) * qr ** (t / 2)) - np.log(run["cert"])   # (72)
                row.update({f"L_{name}": L, f"q_r_{name}": qr, f"b_{name}": b,
                            f"bound74_{name}": T,
                            f"bound74_printed_{name}": rounds_bound(
                                TAU, n, b_constant(S0, n, rho, sigma, L, q, 1.0), qr)})
                if name == "iterates":
                    m72 = min(m72, float(slack.min()))
                    m74 = min(m74, (T - run["rounds"]) / T)
                else:
                    m74_Q = min(m74_Q, (T - run["rounds"]) / T)
            rows.append(row)
            if not run["stopped"]:  # no stop by (23) within T_MAX rounds: fails, stop here
                m74 = -1.0
                break
        if m74 == -1.0:
            break
    margin = min(m29, m72, m74, m74_Q)
    close = min(rows, key=lambda r: (r["bound74_iterates"] - r["rounds"]) / r["bound74_iterates"])
    loose = close["bound74_iterates"] / close["rounds"]
    loose_Q = min(r["bound74_Q29"] / r["rounds"] for r in rows)
    return CheckResult(
        name="constrfl.lemma42_admm_bounds",
        claim="(29) with factor d on the eps^2 term; eps_{t+1} + sum epst <= (n+1+b) q_r^{t/2} "
              "every round (72); rounds <= (74). Rounds / (74) on the iterates' ball: "
              + "; ".join(f"q={r['q']}, rho={r['rho']}, {r['variant']}: {r['rounds']} / "
                          f"{r['bound74_iterates']:.3g}" for r in rows),
        paper="003 constrfl", equation="Lemma 4.2 (29), (63)-(74), Theorem 4.2",
        instances=len(rows), worst_margin=float(margin),
        ground_truth={**gt.as_dict(), "reference": "Newton on ell_k to ||grad||_inf <= 1e-14",
                      "reference_residual": ref_res},
        passed=bool(margin >= 0 and gt.all_optimal),
        measured=float(close["rounds"]), bound=close["bound74_iterates"],
        looseness=float(loose),
        closest={"q": close["q"], "rho": close["rho"], "variant": close["variant"],
                 "rounds": close["rounds"], "bound74_iterates_ball": close["bound74_iterates"],
                 "bound74_Q29_ball": close["bound74_Q29"], "L_iterates": close["L_iterates"],
                 "q_r_iterates": close["q_r_iterates"], "b_iterates": close["b_iterates"]},
        finding=f"(74) holds but is loose: at best {loose:.3g}x the rounds used with L on the "
                f"iterates' ball, {loose_Q:.3g}x with L on Q of (29); a test of validity, not "
                "of tightness",
        details={"runs": rows, "lemma42_margin_relative": m29,
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
    for eps in eps_list:
        cfg = ProxALConfig(beta=BETA, s_bar=s_bar, rho=rho, q=q, eps1=eps, eps2=eps,
                           k_max=500, t_max=5000, solver_tol_floor=1e-13)
        alg = FedProxAL(problem, cfg, w0, keep_admm_history=True)
        bs, qrs, per_k = [], [], []
        while not alg.state.stopped and alg.state.k < cfg.k_max:
            k, wk = alg.state.k, alg.state.w.copy()
            sm, (cm,) = alg.merits(wk)
            alg.step()
            if not alg.state.admm_certified[-1]:
                # Theorem 4.2: each call stops by (23); one that ran out of rounds fails
                m83 = -1.0
                break
            hist = alg.last_admm.history
            mu = [sm.mu[0]] + list(cm.mu)
            ell = merits_for(problem, mu, wk, BETA, 1 / BETA)
            W, _ = newton_solve(ell, alg.state.w[None], np.zeros((1, d)), 0.0, wk, 1e-13,
                                max_iter=100)
            w_star = W[0]
            pts = np.vstack([wk[None]] + [h["w"][None] for h in hist]
                            + [h["U"][0] for h in hist])
            radius = float(np.linalg.norm(pts - w_star, axis=1).max())
            L = lipschitz_on_ball([sm, cm], w_star, radius, rng, samples)
            Ws, Wk = np.broadcast_to(w_star, (n, d)), np.broadcast_to(wk, (n, d))
            S0 = (rho / 2 * n * float(np.sum((w_star - wk) ** 2))
                  + float(np.sum((cm.grad(Ws) - cm.grad(Wk)) ** 2)) / (2 * rho))
            b = b_constant(S0, n, rho, sigma, L, q, d)
            qr = q_r(q, rho, sigma, L)
            T = rounds_bound(cfg.tau(k), n, b, qr)                       # (83)
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
                     "rounds_and_T_k": per_k, "b_max": b_max, "q_r_max": qr_max})
    margin = min(m83, m84)
    if not rows:
        rows.append({"eps": eps_list[0], "K": 1, "total_rounds": cfg.t_max, "rhs84": np.inf,
                     "sum_T_k_83": np.inf, "rounds_and_T_k": [], "b_max": np.nan,
                     "q_r_max": np.nan})
    close = min(rows, key=lambda r: (r["rhs84"] - r["total_rounds"]) / r["rhs84"])
    loose = close["rhs84"] / close["total_rounds"]
    return CheckResult(
        name="constrfl.theorem32_inner_total",
        claim="rounds_k <= T_k (83) for every k; total <= (84). "
              + "; ".join(f"eps={r['eps']}: K={r['K']}, total {r['total_rounds']} <= "
                          f"{r['rhs84']:.3g}" for r in rows),
        paper="003 constrfl", equation="(83), (84), Theorem 3.2(b)", instances=len(rows),
        worst_margin=float(margin),
        ground_truth={"reference": "w_*^k by Newton on ell_k to ||grad||_inf <= 1e-13"},
        passed=bool(margin >= 0),
        measured=float(close["total_rounds"]), bound=close["rhs84"], looseness=float(loose),
        closest={"eps": close["eps"], "K": close["K"], "total_rounds": close["total_rounds"],
                 "rhs84": close["rhs84"], "b_max": close["b_max"], "q_r_max": close["q_r_max"]},
        finding=f"(84) holds but is loose: {loose:.3g}x the total inner rounds used at the "
                "closest eps; a test of validity, not of tightness",
        details={"runs": rows, "eq83_relative_slack": m83, "eq84_relative_slack": m84})
