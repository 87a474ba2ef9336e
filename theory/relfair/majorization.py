"""Prop. 9 of paper 002 (majorization bounds of R_{A,B}; display after (5)), specs/relfair.md §8a.

    phi + (F_A - phi F_B)/C_b  <=  R_{A,B} = F_A/F_B  <=  phi + (F_A - phi F_B)/C'_b,
    C_b = max F_B, C'_b = min F_B > 0.

Proof: ``f/g = phi + (f - phi g)/g``, so both bounds need ``f >= phi g`` (``F_A >= phi F_B``),
which the paper does not state. It holds for capped simplices (``1/n`` lies in both, so
``F_A >= mean >= F_B``) and fails in general: ``A = {e_1}``, ``B = {e_2}``, two parameters with
``(f, g) = (1, 10), (1, 5)`` and ``phi = 0.5`` violate both bounds. Instances: n in {10, 100};
(A, B) in {(Delta_0.2, Delta_0.2), (Delta_0.1, Delta_0.4), (Delta_0.5, Delta_0.5)}; 500 loss
vectors ``Gamma(2, 1) x exp(N(0, 1))``; phi on a 34-point grid of [0, 0.99]. Also: the lower bound
is non-decreasing and the upper bound non-increasing in phi.
"""

from __future__ import annotations

import numpy as np

from repro.core.metrics import bottom_cvar, top_cvar
from theory.registry import register
from theory.result import CheckResult

TOL = 1e-12


def bounds(f: np.ndarray, g: np.ndarray, phi: float) -> tuple[np.ndarray, np.ndarray]:
    """Prop. 9's lower and upper bound for values f (= F_A) and g (= F_B) over parameters."""
    return phi + (f - phi * g) / g.max(), phi + (f - phi * g) / g.min()


def counterexample() -> dict:
    f, g, phi = np.array([1.0, 1.0]), np.array([10.0, 5.0]), 0.5
    lo, hi = bounds(f, g, phi)
    return {"R": np.round(f / g, 12).tolist(), "lower": np.round(lo, 12).tolist(),
            "upper": np.round(hi, 12).tolist(),
            "lower_violated": bool(np.any(lo > f / g + TOL)),
            "upper_violated": bool(np.any(hi < f / g - TOL))}


@register("relfair.proposition9_majorization_bounds", paper="002 relfair",
          seed_name="relfair.majorization_bounds",
          claim="Prop. 9 holds for capped simplices (F_A >= phi F_B) and fails without it")
def check(seed: int, size: str) -> CheckResult:
    rng = np.random.default_rng(seed)
    T = 100 if size == "small" else 500
    phis = np.linspace(0.0, 0.99, 34)
    worst, mono = np.inf, np.inf
    instances = 0
    closest: dict = {}
    strict, strict_rel = {}, np.inf  # closest among parameters where F_B is not extremal
    for n in (10, 100):
        for alpha, beta in ((0.2, 0.2), (0.1, 0.4), (0.5, 0.5)):
            L = rng.gamma(2.0, 1.0, (T, n)) * np.exp(rng.normal(size=(T, 1)))
            f, g = top_cvar(L, alpha), bottom_cvar(L, beta)
            R = f / g
            lows, highs = [], []
            for phi in phis:
                lo, hi = bounds(f, g, phi)
                for side, gap in (("lower", R - lo), ("upper", hi - R)):
                    i = int(np.argmin(gap))
                    if gap[i] + TOL < worst:
                        closest = {"bound": side, "n": n, "alpha": alpha, "beta": beta,
                                   "phi": float(phi), "F_A": float(f[i]), "F_B": float(g[i]),
                                   "F_A - phi F_B": float(f[i] - phi * g[i]),
                                   "R": float(R[i]), "lower": float(lo[i]),
                                   "upper": float(hi[i]), "slack": float(gap[i]),
                                   "attained (F_B extremal, equality by construction)": bool(
                                       g[i] == (g.min() if side == "upper" else g.max()))}
                    # relative slack where the bound is not an identity (F_B not extremal)
                    rel = np.where(g == (g.min() if side == "upper" else g.max()), np.inf,
                                   gap / np.abs(R))
                    j = int(np.argmin(rel))
                    if rel[j] < strict_rel:
                        strict_rel = float(rel[j])
                        strict = {"bound": side, "n": n, "alpha": alpha, "beta": beta,
                                  "phi": float(phi), "R": float(R[j]),
                                  "lower" if side == "lower" else "upper":
                                  float(lo[j] if side == "lower" else hi[j]),
                                  "relative slack": strict_rel}
                worst = min(worst, float((R - lo).min()) + TOL, float((hi - R).min()) + TOL)
                lows.append(lo)
                highs.append(hi)
            lows, highs = np.array(lows), np.array(highs)
            mono = min(mono, float(np.diff(lows, axis=0).min()) + TOL,
                       float(-np.diff(highs, axis=0).max()) + TOL)
            instances += T * len(phis)
    ce = counterexample()
    ok_ce = ce["lower_violated"] and ce["upper_violated"]
    margin = min(worst, mono)
    return CheckResult(
        name="relfair.proposition9_majorization_bounds",
        claim=("Prop. 9 bounds hold on all capped-simplex instances and are monotone in phi; "
               "they need F_A >= phi F_B: counterexample A={e1}, B={e2}, (f,g)=(1,10),(1,5), "
               f"phi=0.5 gives R={ce['R']}, lower={ce['lower']} (> R), upper={ce['upper']} (< R)"),
        paper="002 relfair", equation="display after (5); Prop. 9 (App. D)",
        instances=instances, worst_margin=float(margin if ok_ce else -1.0),
        ground_truth={"solver": "closed form (sorted CVaR formulas, specs/relfair.md §1.6)"},
        passed=bool(margin >= 0 and ok_ce),
        closest={**closest, **{f"non-extremal {k}": v for k, v in strict.items()}},
        details={"min bound margin": worst - TOL, "min monotonicity margin": mono - TOL,
                 "counterexample": ce})
