"""Fair VFL limit vs the exact KKT / fixed-point ground truth (specs/fairvfl.md §10.6).

For fixed ``lam`` with nonnegative weights ``w(lam)`` ([J](12)), ``f(., lam)`` is a strongly
convex weighted logistic regression. The ground truth: ``theta_unc = argmin L``; if
``|D(theta_unc)| <= eps`` then ``lam* = 0``; else the root of ``phi(lam) = D(theta*(lam)) -
eps - c lam`` (brentq). The inner problem at the root is re-solved with cvxpy/Clarabel (status
must be ``optimal``) and compared to L-BFGS. With ``c = 0`` the pair is a saddle point of
``f``, hence the global solution of (4) (§11 A31); with ``c = 1e-3`` it is the fixed point of
the regularized iteration, ``D = eps + c lam``. The algorithm (Q in {1, 4}, eta = 2 L_L,
step s = 0.1) must reach the same point for every Q.
"""

from __future__ import annotations

from collections import Counter

import cvxpy as cp
import numpy as np

from repro.core.groundtruth import clarabel_settings, solve_clarabel
from repro.fairvfl.analysis import (
    NoConvexRoot,
    fixed_point,
    grad_D,
    grad_L,
    smoothness_constants,
    weighted_logistic_solution,
)
from repro.fairvfl.fair_vfl import FairVFL, FairVFLConfig
from repro.fairvfl.instances import linear_blocks, synthetic_instance
from repro.fairvfl.problem import FairnessGroups, VFLProblem
from theory.registry import register
from theory.result import CheckResult

# The exponential-cone solve occasionally ends optimal_inaccurate at one tolerance and optimal
# at a neighbouring one; every setting tried is listed and the one used is recorded.
CLARABEL_TOLERANCES = (1e-10, 1e-9, 1e-8)
CLARABEL_TRIES = [clarabel_settings(t) for t in CLARABEL_TOLERANCES]
# Label noise 3.0 instead of §10.1's 0.3: with 0.3 the n = 200 instances are nearly separable
# and |D(theta_unc)| is so large that no multiplier with nonnegative weights reaches eps
# (§10.6 item 4), which would leave the check without an exact ground truth.
NOISE = 3.0


def _cvxpy_inner(X, groups, lam, mu):
    """The weighted logistic regression at ``lam`` in cvxpy; the first Clarabel setting of
    ``CLARABEL_TRIES`` that ends ``optimal`` is used (its index is recorded).
    """
    w = groups.weights(lam)
    th = cp.Variable(X.shape[1])
    obj = cp.sum(cp.multiply(w, cp.logistic(-cp.multiply(groups.y, X @ th))))
    prob = cp.Problem(cp.Minimize(obj + 0.5 * mu * cp.sum_squares(th)))
    k = solve_clarabel(prob, CLARABEL_TOLERANCES)
    return prob, th.value, k


@register("fairvfl.theorem2_fixed_point_kkt", paper="000/001 fairvfl",
          seed_name="fairvfl.fixed_point_kkt",
          claim="Fair VFL converges to the exact fixed point (KKT point for c = 0) for every Q")
def check(seed: int, size: str) -> CheckResult:
    rng = np.random.default_rng(seed)
    n_inst = 1 if size == "small" else 2
    T = 3000 if size == "small" else 6000
    statuses: Counter = Counter()
    worst, rows, skipped = np.inf, [], 0
    for i in range(n_inst):
        while True:
            X, y, s, blocks = synthetic_instance(rng, n=200, m=6, K=3, noise=NOISE)
            groups = FairnessGroups.from_labels(y, s)
            mu = 2 / len(y)
            d_unc = abs(groups.deo_signed(X @ weighted_logistic_solution(
                X, groups, np.zeros(2), mu)))
            # one active (eps = |D_unc|/2) and, at default size, one inactive eps
            eps_values = (0.5 * d_unc,) if size == "small" else (0.5 * d_unc, 2 * d_unc)
            try:
                gts = {(eps, c): fixed_point(X, groups, eps, mu, c)
                       for eps in eps_values for c in (0.0, 1e-3)}
                break
            except NoConvexRoot:
                skipped += 1  # the ground truth needs a root with nonnegative weights
        L_L = smoothness_constants(X, groups, mu).L_L
        for (eps, c), fp in gts.items():
            if True:
                prob, th_cvx, setting = _cvxpy_inner(X, groups, fp.lam, mu)
                statuses[prob.status] += 1
                cvx_gap = float(np.linalg.norm(th_cvx - fp.theta)) if th_cvx is not None else 1
                # KKT of the ground truth itself
                g = grad_L(X, groups, fp.theta, mu) + (fp.lam[0] - fp.lam[1]) * grad_D(
                    X, groups, fp.theta)
                comp = abs(fp.lam[0] * (fp.D - eps - c * fp.lam[0])) + abs(
                    fp.lam[1] * (-fp.D - eps - c * fp.lam[1]))
                errs = {"cvxpy_argmin": (cvx_gap, 1e-5 * (1 + np.linalg.norm(fp.theta))),
                        "gt_stationarity": (float(np.linalg.norm(g)), 1e-6),
                        "gt_complementarity": (comp, 1e-8),
                        "gt_feasibility": (max(abs(fp.D) - eps - c * fp.lam.max(), 0), 1e-8)}
                limits = []
                for Q in (1, 4):
                    alg = FairVFL(VFLProblem(linear_blocks(X, blocks), y, s),
                                  FairVFLConfig(eps=eps, eta=2 * L_L * Q, beta=0.1, c=c, Q=Q))
                    alg.run(T)
                    th = np.concatenate(alg.thetas())
                    lam = alg.server.lam
                    errs[f"Q{Q}_loss"] = (abs(alg.state.loss - fp.loss), 1e-5 * (1 + fp.loss))
                    errs[f"Q{Q}_theta"] = (float(np.linalg.norm(th - fp.theta)),
                                           1e-3 * (1 + np.linalg.norm(fp.theta)))
                    errs[f"Q{Q}_lam"] = (float(np.abs(lam - fp.lam).max()),
                                         1e-3 + 1e-2 * float(fp.lam.max()))
                    limits.append(th)
                errs["same_limit_all_Q"] = (float(np.linalg.norm(limits[0] - limits[1])),
                                            1e-3 * (1 + np.linalg.norm(fp.theta)))
                m = min(tol - e for e, tol in errs.values())
                worst = min(worst, m)
                rows.append({"instance": i, "eps": eps, "c": c, "clarabel_setting": setting,
                             "lam*": fp.lam.tolist(),
                             "L*": fp.loss, "D*": fp.D, "active": fp.active,
                             "margin": m, "worst": min(errs, key=lambda k: errs[k][1]
                                                       - errs[k][0])})
    ok = worst >= 0 and set(statuses) == {"optimal"}
    return CheckResult(
        name="fairvfl.theorem2_fixed_point_kkt", claim="algorithm limit = exact fixed point",
        paper="000/001 fairvfl",
        equation="[C](6)/(9)-(10), [J](7)/(10)-(11); specs/fairvfl.md §10.6",
        instances=len(rows), worst_margin=float(worst),
        ground_truth={"solver": "L-BFGS (gtol 1e-11) + brentq (xtol 1e-12), inner problem "
                                "re-solved by cvxpy", "cvxpy_solver": "CLARABEL",
                      "cvxpy_version": cp.__version__, "settings": CLARABEL_TRIES,
                      "statuses": dict(statuses)},
        passed=bool(ok), details={"runs": rows, "T": T, "instances_without_convex_root": skipped})
