"""Fair VFL limit vs the exact KKT / fixed-point ground truth
(docs/decisions.md#fairvfl-fixed-point).

The ground truth is written here (:mod:`theory.fairvfl.ground_truth`): ``theta_unc = argmin L``;
if ``|D(theta_unc)| <= eps`` then ``lam* = 0``; else the root of ``phi(lam) = sign
D(theta*(lam)) - eps - c lam`` on the violated side's multiplier (brentq), the inner problem at
the root re-solved by cvxpy/Clarabel (status must be ``optimal``). With ``c = 0`` the pair is a
saddle point of ``f``, hence the global solution of (4); with ``c = 1e-3`` it is the fixed point
of the regularized iteration, ``|D| = eps + c lam``. The package's algorithm (Q in {1, 4},
eta = 2 L_L Q, dual step s = 0.1; its first rounds audited against the round written in
:mod:`theory.fairvfl.round`) must reach the same point for every Q. Each instance is run twice,
the second time with its groups swapped, so that lam2 is the active multiplier there.

At the paper's own constants (eta = 100, s = 0.1, c = 1e-3, Q = 1) the distance to the fixed
point must decrease geometrically (a fitted rate below 1) along the run.
"""

from __future__ import annotations

from collections import Counter

import cvxpy as cp
import numpy as np

from repro.fairvfl.fair_vfl import FairVFL, FairVFLConfig
from repro.fairvfl.instances import linear_blocks, synthetic_instance
from repro.fairvfl.problem import VFLProblem
from theory.evidence import Evidence, Term
from theory.fairvfl.constants import assumption2, grad_D, grad_L
from theory.fairvfl.ground_truth import (
    CLARABEL_TOLERANCES,
    NoRoot,
    fixed_point,
    inner_cvxpy,
    weighted_logistic,
)
from theory.fairvfl.round import Setup, audit_round, d_value, masked_weights
from theory.registry import register
from theory.result import CheckResult

# Label noise 3.0 instead of §10.1's 0.3: with 0.3 the n = 200 instances are nearly separable
# and |D(theta_unc)| is so large that no multiplier with nonnegative weights reaches eps
# (§10.6 item 4), which would leave the check without an exact ground truth.
NOISE = 3.0
TERMS = (
    Term("lam1* > 0 (group a's constraint active)", "lam1*", 1e-8),
    Term("lam2* > 0 (group b's constraint active)", "lam2*", 1e-8),
    Term("regularization c lam* in |D| = eps + c lam*", "c max lam*", 0.0),
    Term("stale read (Q > 1)", "Q - 1", 0.5),
)


def _instance(rng, size):
    """An instance with a fixed point for every (eps, c) and both group labellings."""
    skipped = 0
    while True:
        X, y, s, blocks = synthetic_instance(rng, n=200, m=6, K=3, noise=NOISE)
        Xo = X[:, np.concatenate(blocks)]
        mu = 2 / len(y)
        d_unc = abs(d_value(y, s, Xo @ weighted_logistic(Xo, y, np.full(len(y), 1 / len(y)),
                                                         mu)))
        eps_values = (0.5 * d_unc,) if size == "small" else (0.5 * d_unc, 2 * d_unc)
        try:
            gts = {(sw, eps, c): fixed_point(Xo, y, s if sw == "" else ~s, eps, mu, c)
                   for sw in ("", "swapped") for eps in eps_values for c in (0.0, 1e-3)}
            return X, y, s, blocks, Xo, mu, gts, skipped
        except NoRoot:
            skipped += 1


def _errors(Xo, y, sg, mu, eps, c, fp) -> tuple[dict, str]:
    """The ground truth's own KKT residuals and the cvxpy cross-check."""
    th_cvx, status, setting = inner_cvxpy(Xo, y, masked_weights(y, sg, fp.lam), mu)
    cvx_gap = float(np.linalg.norm(th_cvx - fp.theta)) if th_cvx is not None else 1.0
    g = grad_L(Xo, y, fp.theta, mu) + (fp.lam[0] - fp.lam[1]) * grad_D(Xo, y, sg, fp.theta)
    comp = abs(fp.lam[0] * (fp.D - eps - c * fp.lam[0])) + abs(
        fp.lam[1] * (-fp.D - eps - c * fp.lam[1]))
    return {"cvxpy_argmin": (cvx_gap, 1e-5 * (1 + np.linalg.norm(fp.theta))),
            "gt_stationarity": (float(np.linalg.norm(g)), 1e-6),
            "gt_complementarity": (comp, 1e-8),
            "gt_feasibility": (max(abs(fp.D) - eps - c * fp.lam.max(), 0), 1e-8)}, status


def _run(X, y, sg, blocks, mu, eps, c, Q, eta, T, ev, key):
    """The package's Fair VFL for T rounds; the first 20 rounds audited."""
    alg = FairVFL(VFLProblem(linear_blocks(X, blocks), y, sg),
                  FairVFLConfig(eps=eps, eta=eta, beta=0.1, c=c, Q=Q))
    st = Setup.from_blocks(X, blocks, y, sg, alg.mu, eps, 0.1)
    for t in range(T):
        if t < 20:
            audit_round(alg, st, 1.0 / eta, c, ev, key, 1e-10)
        else:
            alg.step()
    return alg


@register("fairvfl.theorem2_fixed_point_kkt", paper="000/001 fairvfl",
          seed_name="fairvfl.fixed_point_kkt",
          claim="Fair VFL converges to the exact fixed point (KKT point for c = 0) for every Q")
def check(seed: int, size: str) -> CheckResult:
    rng = np.random.default_rng(seed)
    n_inst = 1
    T = 3000 if size == "small" else 6000
    ev = Evidence(TERMS)
    statuses: Counter = Counter()
    rows, skipped_total = [], 0
    for i in range(n_inst):
        X, y, s, blocks, Xo, mu, gts, skipped = _instance(rng, size)
        skipped_total += skipped
        for (sw, eps, c), fp in gts.items():
            sg = s if sw == "" else ~s
            L_L = assumption2(Xo, y, sg, mu)["L_L"]
            errs, status = _errors(Xo, y, sg, mu, eps, c, fp)
            statuses[status] += 1
            ev.activity("lam1* > 0 (group a's constraint active)", fp.lam[0])
            ev.activity("lam2* > 0 (group b's constraint active)", fp.lam[1])
            ev.activity("regularization c lam* in |D| = eps + c lam*", c * fp.lam.max())
            limits = []
            for Q in (1, 4):
                key = f"fairvfl:FairVFL/conf/LM-dense/{'Q>1' if Q > 1 else 'Q=1'}"
                ev.path(key)
                ev.activity("stale read (Q > 1)", Q - 1)
                alg = _run(X, y, sg, blocks, mu, eps, c, Q, 2 * L_L * Q, T, ev, key)
                th = np.concatenate(alg.thetas())
                lam = np.asarray(alg.server.lam)
                loss = float(np.mean(np.logaddexp(0.0, -y * (Xo @ th))) + 0.5 * mu * th @ th)
                errs[f"Q{Q}_loss"] = (abs(loss - fp.loss), 1e-5 * (1 + fp.loss))
                errs[f"Q{Q}_theta"] = (float(np.linalg.norm(th - fp.theta)),
                                       1e-3 * (1 + np.linalg.norm(fp.theta)))
                errs[f"Q{Q}_lam"] = (float(np.abs(lam - fp.lam).max()),
                                     1e-3 + 1e-2 * float(fp.lam.max()))
                limits.append(th)
            errs["same_limit_all_Q"] = (float(np.linalg.norm(limits[0] - limits[1])),
                                        1e-3 * (1 + np.linalg.norm(fp.theta)))
            for k, (e, tol) in errs.items():
                name = ("ground truth: " + k if k.startswith(("gt_", "cvxpy"))
                        else "Fair VFL limit = the fixed point: " + k)
                ev.criterion(name, 1 - e / tol)
            m = min(tol - e for e, tol in errs.values())
            rows.append({"instance": i, "groups": sw or "as drawn", "eps": eps, "c": c,
                         "lam*": fp.lam.tolist(), "L*": fp.loss, "D*": fp.D,
                         "active": fp.active, "margin": m})
    setting, finding = _paper_constants(X, y, s, blocks, Xo, mu, gts, 400 if size == "small"
                                        else 1500, ev)
    worst = ev.worst()
    ok = worst >= 0 and set(statuses) == {"optimal"}
    return CheckResult(
        name="fairvfl.theorem2_fixed_point_kkt", claim="algorithm limit = exact fixed point",
        paper="000/001 fairvfl",
        equation="[C](6)/(9)-(10), [J](7)/(10)-(11); docs/decisions.md#fairvfl-fixed-point",
        instances=len(rows), worst_margin=float(worst),
        ground_truth={"solver": "Newton (gradient 1e-12) + brentq (xtol 1e-12), theory/; inner "
                                "problem re-solved by cvxpy", "cvxpy_solver": "CLARABEL",
                      "cvxpy_version": cp.__version__, "settings": list(CLARABEL_TOLERANCES),
                      "statuses": dict(statuses)},
        passed=bool(ok), paper_setting=setting, paper_finding=finding,
        details={"runs": rows, "T": T, "instances_without_root": skipped_total},
        **ev.fields())


def _paper_constants(X, y, s, blocks, Xo, mu, gts, T, ev) -> tuple[dict, str | None]:
    """Eta = 100, s = 0.1, c = 1e-3, Q = 1 (the papers' linear-model constants) towards the
    fixed point with c = 1e-3 of the first eps: the fitted rate of the distance.
    """
    (sw, eps, c), fp = next((k, v) for k, v in gts.items() if k[2] == 1e-3)
    alg = FairVFL(VFLProblem(linear_blocks(X, blocks), y, s if sw == "" else ~s),
                  FairVFLConfig(eps=eps, eta=100.0, beta=0.1, c=c, Q=1))
    dist = []
    for _ in range(T):
        alg.step()
        dist.append(float(np.linalg.norm(np.concatenate(alg.thetas()) - fp.theta)))
    dist = np.array(dist)
    t = np.arange(T)
    tail = t >= T // 2
    rate = float(np.exp(np.polyfit(t[tail], np.log(np.maximum(dist[tail], 1e-300)), 1)[0]))
    setting = {"eta": 100.0, "dual step": 0.1, "c": c, "Q": 1, "rounds": T,
               "distance first / last": (dist[0], dist[-1]), "fitted rate": rate}
    finding = None
    if not (rate < 1 and dist[-1] < dist[0]):
        finding = (f"at the paper's eta = 100 the distance to the fixed point does not shrink "
                   f"({dist[0]:.3g} -> {dist[-1]:.3g} in {T} rounds, fitted rate {rate:.6f})")
    return setting, finding
