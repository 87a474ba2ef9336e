"""Paper 003, App. A: the operator T (33)-(34), its resolvent J = (I + beta T)^{-1} (36)-(41),
firm non-expansiveness (Lemma A.2 uses it) and Lemma A.1 (docs/decisions.md#constrfl-resolvent).

For any ``(w̄, mū)``: ``w⁺ = argmin_w f(w) + (1/(2 beta)) sum_j [mū_j + beta c_j(w)]_+^2
+ (1/(2 beta))||w - w̄||^2``, ``mu⁺ = [mū + beta c(w⁺)]_+`` and ``J(w̄, mū) = (w⁺, mu⁺)``.
``w⁺`` is computed by damped Newton to ||grad||_inf <= 1e-13 and cross-checked with cvxpy, both
written here (:mod:`theory.constrfl.reference`), as is the KKT pair.
"""

from __future__ import annotations

import numpy as np

from repro.constrfl.instances import np_small, qp_ball
from repro.constrfl.merit import Merit
from theory.constrfl.reference import (
    Ground,
    grad_sum,
    outer_merits,
    parties,
    state_mu,
    subproblem,
)
from theory.constrfl.schedule import tau
from theory.evidence import Evidence, Term
from theory.registry import register
from theory.result import CheckResult

__all__ = ["resolvent", "split_mu", "stack_mu"]

ITERATE_TERMS = (
    Term("inexactness e^k of Lemma A.1", "||grad ell_k(w^{k+1})||_inf", 1e-12),
    Term("the server's multiplier mu_0 (global constraint) moves",
         "|mu_0^{k+1} - mu_0^k|", 1e-9),
    Term("(42): ||z^k - Jz^k||^2 beyond its 1e-5", "||z^k - Jz^k||^2", 1e-5),
)
# the package's merits (what Algorithm 1's subproblems minimise) are held against the merits
# written here at the resolvent's points
UNDER_TEST = {"repro.constrfl.merit": "Merit.value / Merit.grad of (13)-(14), held against "
                                      "theory.constrfl.reference.LocalMerit"}
RESOLVENT_TERMS = (
    Term("multiplier half of J active at both points", "min over the pair of max mu⁺", 1e-9),
    Term("constraint curvature (the ball c_0)", "||w⁺||_inf", 1e-9),
)


def split_mu(problem, mu_flat: np.ndarray) -> list[np.ndarray]:
    sizes = [problem.server.m] + [b.m for b in problem.clients for _ in range(b.size)]
    return np.split(np.asarray(mu_flat, dtype=float), np.cumsum(sizes)[:-1])


def stack_mu(mu_list) -> np.ndarray:
    return np.concatenate([np.ravel(m) for m in mu_list])


def constraint_vector(problem, w) -> np.ndarray:
    return np.concatenate(problem.constraints(w))


def resolvent(problem, beta: float, w_bar: np.ndarray, mu_bar: np.ndarray,
              w_start: np.ndarray | None = None):
    """``J(w̄, mū)`` (36), (40)-(41); returns ``(w⁺, mu⁺, ||grad||_inf)`` (an equality
    constraint's multiplier is not projected).
    """
    start = w_bar if w_start is None else w_start
    w, res = subproblem(problem, split_mu(problem, mu_bar), w_bar, beta,
                        1.0 / (beta * (problem.n + 1)), w0=start)
    s = mu_bar + beta * constraint_vector(problem, w)
    return w, np.where(equality_mask(problem), s, np.maximum(s, 0.0)), res


def equality_mask(problem) -> np.ndarray:
    """Per multiplier: whether its constraint is an equality (no projection in (41))."""
    return np.concatenate([np.full(b.c(np.zeros((1, problem.d))).shape[1], b.equality)
                           for b in parties(problem)])


def package_merit_error(problem, beta: float, z, w) -> float:
    """Relative difference of the package's merits (value and gradient, every party) and the
    merits written here, at ``w`` with centre and multipliers ``z = (w̄, mū)`` (mū clipped at
    0: the multipliers Algorithm 1 holds are nonnegative).
    """
    from theory.constrfl.reference import merits

    mu = split_mu(problem, np.maximum(z[1], 0.0))
    prox = 1.0 / ((problem.n + 1) * beta)
    ours = merits(problem, mu, z[0], beta, prox)
    blocks = [(problem.server, np.asarray(mu[0])[None])]
    i = 1
    for b in problem.clients:
        blocks.append((b, np.stack(mu[i:i + b.size])))
        i += b.size
    err, k = 0.0, 0
    for b, m in blocks:
        pm = Merit(b, m, z[0], beta, prox)
        W = np.broadcast_to(w, (b.size, w.size)).copy()
        val, grad = pm.value(W), pm.grad(W)
        for j in range(b.size):
            ref_v, ref_g = ours[k].value(w), ours[k].grad(w)
            err = max(err, abs(val[j] - ref_v) / (1 + abs(ref_v)),
                      float(np.abs(grad[j] - ref_g).max()) / (1 + float(np.abs(ref_g).max())))
            k += 1
    return err


def _grad_lagrangian(problem, w, mu_flat):
    mu = split_mu(problem, mu_flat)
    g = np.zeros_like(w)
    i = 0
    for blk in [problem.server, *problem.clients]:
        W = np.broadcast_to(w, (blk.size, w.size))
        J = blk.jac_c(W)
        g += blk.grad_f(W).sum(0)
        for j in range(blk.size):
            g += J[j].T @ mu[i]
            i += 1
    return g


@register("constrfl.lemma_a2_resolvent_firm_nonexpansive", paper="003 constrfl",
          seed_name="constrfl.resolvent_firm_nonexpansive",
          claim="J = (I + beta T)^{-1} is single-valued, its zeros are KKT pairs, and it is "
                "firmly non-expansive (used by Lemma A.2)")
def check(seed: int, size: str) -> CheckResult:
    rng = np.random.default_rng(seed)
    pairs = 12 if size == "small" else 50
    gt = Ground()
    ev = Evidence(RESOLVENT_TERMS)
    margins, worst_norm, inclusion, fixed, cvx_gap = [], np.inf, 0.0, 0.0, 0.0
    pkg_err = 0.0
    worst_pair = None
    instances = live = 0
    closest = {}
    # beta = 2 (the checks' instances) and 10 (Sec. 5.2's stated beta)
    for make, beta in ((qp_ball, 2.0), (np_small, 2.0), (qp_ball, 10.0)):
        problem = make(rng)
        w_star, mu_star = gt.kkt(problem)
        mu_star_flat = np.maximum(stack_mu(mu_star), 0.0)
        m = mu_star_flat.size
        # (ii) zeros of T are fixed points of J.
        wJ, muJ, _ = resolvent(problem, beta, w_star, mu_star_flat)
        fixed = max(fixed, float(np.linalg.norm(np.concatenate([wJ - w_star,
                                                                muJ - mu_star_flat]))))
        for p in range(pairs):
            z = [rng.standard_normal(problem.d), rng.standard_normal(m)]
            zp = [rng.standard_normal(problem.d), rng.standard_normal(m)]
            if p % 2 == 0:        # also mu >= 0 pairs (J is defined on all of R^{d+m})
                z[1], zp[1] = np.abs(z[1]), np.abs(zp[1])
            w1, mu1, r1 = resolvent(problem, beta, *z)
            w2, mu2, r2 = resolvent(problem, beta, *zp)
            pkg_err = max(pkg_err, package_merit_error(problem, beta, z, w1))
            live += int(np.any(mu1 > 0) and np.any(mu2 > 0))  # multiplier half of J active
            ev.activity("multiplier half of J active at both points",
                        min(mu1.max(initial=0.0), mu2.max(initial=0.0)))
            ev.activity("constraint curvature (the ball c_0)", np.abs(w1).max())
            # (i) inclusion (w̄ - w⁺)/beta ∈ grad f(w⁺) + grad c(w⁺) mu⁺.
            for (wb, _), wp, mp in ((z, w1, mu1), (zp, w2, mu2)):
                inclusion = max(inclusion, float(np.max(np.abs(
                    (wb - wp) / beta - _grad_lagrangian(problem, wp, mp)))))
            Z, Zp = np.concatenate(z), np.concatenate(zp)
            JZ, JZp = np.concatenate([w1, mu1]), np.concatenate([w2, mu2])
            d2 = float(np.sum((Z - Zp) ** 2))
            dJ = float(np.sum((JZ - JZp) ** 2))
            dres = float(np.sum(((Z - JZ) - (Zp - JZp)) ** 2))
            margin = d2 - dJ - dres
            norm = float(margin / (1 + d2))
            margins.append(norm)
            if norm < worst_norm:
                worst_norm, worst_pair = norm, {"z": Z.tolist(), "z_prime": Zp.tolist()}
                closest = {"problem": make.__name__, "pair": p,
                           "mu_nonnegative": p % 2 == 0, "||z-z'||^2": d2,
                           "||Jz-Jz'||^2": dJ, "||(z-Jz)-(z'-Jz')||^2": dres,
                           "slack ||z-z'||^2 - sum": float(margin),
                           "slack / (1+||z-z'||^2)": norm}
            instances += 1
        # cvxpy cross-check of w⁺ on one pair per instance.
        mu_list = split_mu(problem, np.abs(rng.standard_normal(m)))
        wb = rng.standard_normal(problem.d)
        w_cvx = gt.subproblem(problem, mu_list, wb, beta, 1 / beta)
        w_res, _, _ = resolvent(problem, beta, wb, stack_mu(mu_list))
        cvx_gap = max(cvx_gap, float(np.max(np.abs(w_cvx - w_res))))
    crit = {"firm_nonexpansive_normalized_margin": (worst_norm, -1e-7),
            "inclusion_residual": (inclusion, 1e-7),
            "fixed_point_distance": (fixed, 1e-5),
            "cvxpy_argmin_gap": (cvx_gap, 1e-5)}
    share = live / max(instances, 1)
    ev.criterion("Lemma A.2: J firmly non-expansive", (worst_norm + 1e-7) / 1e-7)
    ev.criterion("(40)-(41): (w̄ - w⁺)/beta in grad f + grad c mu⁺", 1 - inclusion / 1e-7)
    ev.criterion("zeros of T are fixed points of J", 1 - fixed / 1e-5)
    ev.criterion("w⁺ = the cvxpy argmin", 1 - cvx_gap / 1e-5)
    ev.criterion("the package's merits (13)-(14) = the merits written here",
                 1 - pkg_err / 1e-10)
    margin = ev.worst()
    passed = margin >= 0 and gt.all_optimal
    return CheckResult(
        name="constrfl.lemma_a2_resolvent_firm_nonexpansive",
        claim="||z-z'||^2 >= ||Jz-Jz'||^2 + ||(z-Jz)-(z'-Jz')||^2; J(w*,mu*) = (w*,mu*); "
              "(w̄-w⁺)/beta ∈ grad f(w⁺) + grad c(w⁺) mu⁺. Worst firm non-expansiveness "
              f"margin / (1 + ||z-z'||^2) = {worst_norm:.4f} over {instances} pairs; "
              f"non-trivial (multipliers of J positive at both points): {live}/{instances}",
        paper="003 constrfl", equation="(33)-(41), Lemma A.2", instances=instances,
        worst_margin=float(margin), ground_truth=gt.as_dict(), passed=bool(passed),
        measured=closest.get("||Jz-Jz'||^2", np.nan) + closest.get(
            "||(z-Jz)-(z'-Jz')||^2", np.nan), bound=closest.get("||z-z'||^2"),
        looseness=(closest["||z-z'||^2"] / (closest["||Jz-Jz'||^2"]
                                            + closest["||(z-Jz)-(z'-Jz')||^2"])
                   if closest and closest["||Jz-Jz'||^2"] > 0 else None),
        closest=closest, paper_setting={"beta": 10.0, "note": "Sec. 5.2's beta, QP-ball"},
        **ev.fields(),
        details={"criteria (value, tolerance)": crit,
                 "worst_normalized_firm_margin": worst_norm, "worst_pair": worst_pair,
                 "nontrivial_share": share,
                 "instances": "QP-ball (d=6, n=3) and NP-small (d=5, n=3), beta = 2; "
                              "QP-ball, beta = 10"})


@register("constrfl.lemma_a1_a2_iterates", paper="003 constrfl",
          claim="Along Algorithm 1: z^{k+1} = J(w^k + beta e^k, mu^k) (Lemma A.1), hence "
                "||z^{k+1} - J z^k|| <= beta sqrt(d) tau_k, and (42) of Lemma A.2")
def check_iterates(seed: int, size: str) -> CheckResult:
    from repro.constrfl.config import ProxALConfig
    from repro.constrfl.proxal import FedProxAL
    from repro.constrfl.start import ProxALInit

    rng = np.random.default_rng(seed)
    gt = Ground()
    ev = Evidence(ITERATE_TERMS)
    runs = 1 if size == "small" else 3
    ident, step_margin, a2_margin, rows, live = 0.0, np.inf, np.inf, 0, 0
    closest: dict = {}
    closest_rel = np.inf
    # (beta, s_bar): the checks' (2, 0.1) and Sec. 5.2's stated (10, 1e-3)
    for r in range(runs + 1):
        beta, s_bar = (2.0, 1e-1) if r < runs else (10.0, 1e-3)
        problem = qp_ball(rng)
        w_star, mu_star = gt.kkt(problem)
        z_star = np.concatenate([w_star, stack_mu(mu_star)])
        g = rng.standard_normal(problem.d)
        # mu_0^0 = 1 for the server's global ball (Algorithm 1 takes any mu^0 >= 0): its
        # multiplier moves in the first outer iterations (at the solution it is 0)
        cfg = ProxALConfig(beta=beta, s_bar=s_bar, rho=1.0, q=0.5, eps1=1e-4, eps2=1e-4,
                           k_max=40, solver_tol_floor=1e-13)
        alg = FedProxAL(problem, cfg, init=ProxALInit(g / np.linalg.norm(g),
                                                      np.ones((1, problem.server.m))))
        while not alg.state.stopped and alg.state.k < cfg.k_max:
            k = alg.state.k
            wk = alg.state.w.copy()
            muk = stack_mu(state_mu(alg.state))
            ms = outer_merits(problem, wk, state_mu(alg.state), beta)
            alg.step()
            w1 = alg.state.w
            mu1 = stack_mu(state_mu(alg.state))
            e = grad_sum(ms, w1)
            ev.activity("inexactness e^k of Lemma A.1", np.abs(e).max())
            ev.activity("the server's multiplier mu_0 (global constraint) moves",
                        float(np.abs(mu1[:problem.server.m] - muk[:problem.server.m]).max()))
            wJ, muJ, _ = resolvent(problem, beta, wk + beta * e, muk)
            ident = max(ident, float(np.linalg.norm(np.concatenate([wJ - w1, muJ - mu1]))))
            wJ0, muJ0, _ = resolvent(problem, beta, wk, muk, w_start=w1)
            Jz = np.concatenate([wJ0, muJ0])
            z1, zk = np.concatenate([w1, mu1]), np.concatenate([wk, muk])
            step_dist = float(np.linalg.norm(z1 - Jz))
            # tau_k of Algorithm 1 line 2 from the paper (theory.constrfl.schedule)
            step_bound = beta * np.sqrt(problem.d) * tau(s_bar, k)
            if 1 - step_dist / step_bound < closest_rel:   # closest relative to its bound
                closest_rel = 1 - step_dist / step_bound
                closest = {"k": k, "||z^{k+1} - Jz^k||": step_dist,
                           "beta sqrt(d) tau_k": step_bound}
            step_margin = min(step_margin, 1 - step_dist / step_bound)
            lhs = np.sum((zk - Jz) ** 2) + np.sum((Jz - z_star) ** 2)
            live += int(np.sum((zk - Jz) ** 2) > 1e-5)  # (42) non-trivial beyond its 1e-5
            ev.activity("(42): ||z^k - Jz^k||^2 beyond its 1e-5", np.sum((zk - Jz) ** 2))
            a2_margin = min(a2_margin, float(np.sum((zk - z_star) ** 2) - lhs + 1e-5))
            rows += 1
    share = live / max(rows, 1)
    ev.criterion("Lemma A.1: z^{k+1} = J(w^k + beta e^k, mu^k)", 1 - ident / 1e-8)
    ev.criterion("||z^{k+1} - Jz^k|| <= beta sqrt(d) tau_k", step_margin)
    ev.criterion("Lemma A.2 (42)", a2_margin / 1e-5)
    margin = ev.worst()
    return CheckResult(
        name="constrfl.lemma_a1_a2_iterates",
        claim="z^{k+1} = J(w^k + beta e, mu^k) to 1e-8; ||z^{k+1} - Jz^k|| <= beta sqrt(d) tau_k "
              "(tau_k = s_bar/(k+1)^2 from the paper); ||z^k - Jz^k||^2 + ||Jz^k - z*||^2 <= "
              "||z^k - z*||^2 (+1e-5, cvxpy z*). Margins relative to 1e-8, the bound, 1e-5; "
              f"non-trivial iterations (||z^k - Jz^k||^2 > 1e-5): {live}/{rows}",
        paper="003 constrfl", equation="Lemma A.1, Lemma A.2 (42)", instances=rows,
        worst_margin=float(margin), ground_truth=gt.as_dict(),
        passed=bool(margin >= 0 and gt.all_optimal),
        measured=closest.get("||z^{k+1} - Jz^k||"), bound=closest.get("beta sqrt(d) tau_k"),
        looseness=(closest["beta sqrt(d) tau_k"] / closest["||z^{k+1} - Jz^k||"]
                   if closest.get("||z^{k+1} - Jz^k||") else None), closest=closest,
        paper_setting={"beta": 10.0, "s_bar": 1e-3, "note": "Sec. 5.2's stated beta, s_bar"},
        **ev.fields(),
        details={"identity_error": ident, "step_bound_relative_margin": step_margin,
                 "lemma_A2_margin": a2_margin, "nontrivial_share": share})
