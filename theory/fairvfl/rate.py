"""Fair VFL Theorem 2 ingredients on a theory-compliant run (specs/fairvfl.md §10.7).

Run: synthetic instance (§10.1), dual step s = 0.1 (beta_th = 1/s = 10, §11 A19),
``c_t = beta_th t^{-1/4} / 2``, ``eta_t`` = the Theorem 2 lower bound
``[L^2 (KQ+2)(KQ-1) + 2(L+1)]/4 + L_12^2 KQ (1 + 32 tau sqrt(t)) / (2 beta_th)`` with tau = 9,
mode ``random``, Q = 2. Stationarity gap (12)/(13)::

    grad G^t = ( eta_t (theta^t - theta^{t+1}) ;
                 (1/s)(lam^t - [lam^t + s grad_lam f(theta^t, lam^t)]_+) )

and ``grad G~^t`` with ``f~_{t-1}`` in place of ``f``. Checked every round:

- [C](19) = [J](25): ``||grad G|| - ||grad G~|| <= c_{t-1} ||lam^t||``;
- [C](20) = [J](26): ``||grad G~||^2 <= (eta_t^2 + 3 L_12^2) kappa(t) sum||dtheta||^2
  + 3 beta_th^2 ||lam^{t+1} - lam^t||^2 + 3 (c_{t-1} - c_t)^2 ||lam^t||^2``;
- reported, not asserted: the slope of ``log min_{r<=t} ||grad G^r||`` against ``log t`` over
  the last two decades. specs/fairvfl.md §10.7 expects about -1/4 at T = 10^5; at T = 2000 the
  slope is ~0 (the Theorem 2 eta_t ~ 10^3 sqrt(t) barely moves theta), and the T = 10^5 run
  did not fit the session, so the O(delta^-4) rate itself is NOT verified here.
"""

from __future__ import annotations

import numpy as np

from repro.fairvfl.fair_vfl import FairVFL, FairVFLConfig
from repro.fairvfl.instances import linear_blocks, synthetic_instance
from repro.fairvfl.problem import VFLProblem
from theory.fairvfl.constants import assumption2, groups_masks, theorem2_eta
from theory.registry import register
from theory.result import CheckResult

S, TAU, K, Q = 0.1, 9, 3, 2
# eps = 1e-3, not the experiments' 0.01 (issue #30): with Theorem 2's eta_t ~ 1e3 sqrt(t) theta
# stays near 0, where D = 0 exactly, so |D| < 0.01 in every round and lam = 0 throughout (the
# checked inequalities then hold trivially). At eps = 1e-3 the constraint is active (lam > 0)
# in most rounds; the theorem holds for any eps >= 0.
EPS = 1e-3
STEP_TOL = 1e-12  # round-off of one projected dual step, relative to its largest term


def _proj_gap(lam, grad, s):
    return (lam - np.maximum(0.0, lam + s * grad)) / s


@register("fairvfl.theorem2_rate_gap_bounds", paper="000/001 fairvfl",
          seed_name="fairvfl.rate_gap_bounds",
          claim="Theorem 2 proof steps (19)/(20) [C] = (25)/(26) [J] hold along a "
                "theory-compliant run (rate slope reported only)")
def check(seed: int, size: str) -> CheckResult:
    rng = np.random.default_rng(seed)
    T = 2000 if size == "small" else 20_000
    X, y, s, blocks = synthetic_instance(rng, n=200, m=6, K=K)
    Xo = X[:, np.concatenate(blocks)]  # the parties' columns, as np.concatenate(thetas)
    in_a, in_b = groups_masks(y, s)
    mu = 2 / len(y)
    const = assumption2(Xo, y, s, mu)
    beta_th = 1 / S

    def deo(theta):  # D(theta) of Definition 1, computed here
        z = Xo @ theta
        return float(np.logaddexp(0.0, -z[in_a]).mean() - np.logaddexp(0.0, -z[in_b]).mean())

    def c(t):
        return beta_th * max(t, 1) ** -0.25 / 2

    Lam, worst19, worst20, gaps = 1.0, np.inf, np.inf, []
    for _attempt in range(3):
        L = const["L_L"] + Lam * const["L_D"]

        def eta(t, L=L):
            return theorem2_eta(t, L, const["L_12"], K, Q, TAU, beta_th)

        # the round-t eta_t and c_t of Theorem 2 as the config's schedules; mode random's
        # Q_k^(t) come from numpy.random.default_rng(seed % 2**32)
        alg = FairVFL(VFLProblem(linear_blocks(X, blocks), y, s),
                      FairVFLConfig(eps=EPS, beta=S, Q=Q, mode="random", eta_schedule=eta,
                                    c_schedule=c),
                      rng=seed % 2**32)
        worst19, worst20, gaps, lam_max = np.inf, np.inf, [], 0.0
        step_err, active = 0.0, 0
        closest: dict = {}
        th0 = np.concatenate(alg.thetas())
        d = deo(th0)
        for t in range(1, T + 1):
            lam = alg.server.lam.copy()
            g = np.array([d - EPS, -d - EPS])
            e = eta(t)
            alg.step()  # round t: eta_t = eta(t) = e, c_t = c(t)
            st = alg.state
            th1 = np.concatenate(alg.thetas())
            d = deo(th1)  # D(theta^{t+1}): the server's dual step [C](9) uses it
            ref = np.maximum(0.0, lam + S * (np.array([d - EPS, -d - EPS]) - c(t) * lam))
            scale = max(np.abs(ref).max(), np.abs(lam).max(), S * np.abs(g).max(), 1e-300)
            step_err = max(step_err, float(np.abs(st.lam - ref).max() / scale))
            active += bool(lam.max() > 0)
            dth = e * (th0 - th1)
            th0 = th1
            G = np.linalg.norm(np.concatenate([dth, _proj_gap(lam, g, S)]))
            Gt = np.linalg.norm(np.concatenate([dth, _proj_gap(lam, g - c(t - 1) * lam, S)]))
            gaps.append(G)
            if t >= 2:
                worst19 = min(worst19, c(t - 1) * np.linalg.norm(lam) - (G - Gt) + 1e-12)
                dlam = st.lam - lam
                rhs = ((e ** 2 + 3 * const["L_12"] ** 2) * st.kappa * st.increments_sq
                       + 3 * beta_th ** 2 * dlam @ dlam + 3 * (c(t - 1) - c(t)) ** 2 * lam @ lam)
                if (rhs - Gt ** 2) / max(rhs, 1e-300) < worst20:
                    closest = {"t": t, "||grad G~||^2": float(Gt ** 2), "rhs (20)": float(rhs),
                               "eta_t": float(e), "kappa": int(st.kappa)}
                worst20 = min(worst20, (rhs - Gt ** 2) / max(rhs, 1e-300))
            lam_max = max(lam_max, abs(st.lam[0] - st.lam[1]))
        if lam_max <= Lam:
            break
        Lam = 1.5 * lam_max
    g_min = np.minimum.accumulate(gaps)
    t_axis = np.arange(1, T + 1)
    sel = t_axis >= T / 100
    slope = float(np.polyfit(np.log(t_axis[sel]), np.log(g_min[sel]), 1)[0])
    margins = {"(19)": float(worst19), "(20)": float(worst20),
               "dual_step_(9)": STEP_TOL - step_err}
    worst = min(margins.values())
    return CheckResult(
        name="fairvfl.theorem2_rate_gap_bounds", claim="Theorem 2 steps (19)-(20), rate slope",
        paper="000/001 fairvfl", equation="[C](12),(19),(20) = [J](13),(25),(26)",
        instances=T, worst_margin=worst,
        ground_truth={"solver": "closed form (inequalities evaluated on the iterates)"},
        passed=bool(worst >= 0), nontrivial=active / T,
        measured=closest.get("||grad G~||^2"), bound=closest.get("rhs (20)"),
        looseness=(closest["rhs (20)"] / closest["||grad G~||^2"]
                   if closest.get("||grad G~||^2") else None), closest=closest,
        details={"margins": margins, "slope_last_two_decades": slope, "Lambda_used": Lam,
                 "eps": EPS, "rounds_lam_positive": active, "lam_max": lam_max,
                 "final_gap": float(g_min[-1]), "T": T})
