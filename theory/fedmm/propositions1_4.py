"""T3 (specs/fedmm.md §9.2): Propositions 1-4 of App. A.3 with exact local solves.

In the player form G_i = [grad_w f_i; -grad_psi f_i], d_i = [lambda_i; beta_i]:

* Props 1/2, (32)/(36): sum_i theta_i^{t+1} = sum_i theta_i^t - (1/mu) sum_i G_i(theta_i^{t+1});
* (42)/(47): G_i(theta_i^{t+1}) + d_i^{t+1} = 0;
* Props 3/4, (40)/(45): mu (theta_i^{t+1} - theta0^t) = -(G_i(theta_i^{t+1}) - G_i(theta_i^t)).

The propositions are consequences of exact local stationarity and of (13)-(16) as implemented
in :class:`repro.fedmm.fedmm.FedMM`; what T3 tests is that implementation (dual steps, the
eta3-shifted upload, the average) against the paper's statements. So that they are not linear
identities of the instance, they are checked on two families: Q (affine G_i, local solve = one
linear solve) and NL (:func:`repro.fedmm.instances.gen_NL`: nonlinear G_i with a nonlinear
omega-psi coupling, local solves by Newton's method to a residual of 1e-13, so the
propositions hold only as far as the iterative solve does). A planted error in (13)-(16) (a
flipped dual sign, a missing 1/mu) makes the check fail (tests/theory/test_fedmm_planted.py).

Expected (specs/fedmm.md §9.3 items 2 and 4): with eta3 = 1, (32), (36), (42), (47) hold for
every t >= 0 and (40)/(45) for t >= 1 but FAIL at t = 0 (lambda^0 = beta^0 = 0 is not
-G_i(theta_i^0)); with a constant eta3 = 0.5, Props 1/2 fail from t = 2 on (checked at t = 2, 3;
the residual decays as the iteration converges) ("eta3 = 1 w.l.o.g." is not w.l.o.g.).
theta_i^0 := theta0^0 (the paper's initialisation of the local iterates).
"""

from __future__ import annotations

import numpy as np
import torch

from repro.fedmm.fedmm import FedMM, FedMMConfig
from repro.fedmm.instances import NewtonLocalSolver, NLOracle, gen_NL, gen_Q
from theory.fedmm.theorem1_remark_fixed_point import blocks_for, make_fedmm
from theory.registry import register
from theory.result import CheckResult

HOLD = 1e-10
FAIL = 1e-6


def _quad(inst, mu: float, eta3: float):
    K, k = torch.from_numpy(inst.K()), torch.from_numpy(inst.k())
    return (make_fedmm(inst, mu, "exact", eta3=eta3, constant=True),
            lambda theta: torch.einsum("nij,nj->ni", K, theta) + k)


def _nonlinear(inst, mu: float, eta3: float):
    blocks = blocks_for(inst.d1, inst.d2, mu)
    theta0 = torch.zeros(inst.d1 + inst.d2, dtype=torch.float64)
    alg = FedMM(NLOracle(inst), FedMMConfig(blocks, eta3=eta3, eta3_constant=True),
                init=theta0, local_solver=NewtonLocalSolver(inst))
    return alg, lambda theta: torch.from_numpy(
        np.stack([inst.G(i, theta[i].numpy()) for i in range(inst.n)]))


def residuals(alg, G, mu: float, rounds: int) -> dict[str, list[float]]:
    """Per-round residuals of Props 1/2 ((32), (36)), (42)/(47) and Props 3/4 ((40), (45))."""
    out = {"prop12": [], "eq42_47": [], "prop34": []}
    for _ in range(rounds):
        prev = alg.state
        prev_local, prev0 = prev.local.clone(), prev.theta0.clone()
        alg.step()
        s = alg.state
        g_new = G(s.local)
        out["prop12"].append(float((s.local.sum(0) - prev_local.sum(0)
                                    + g_new.sum(0) / mu).abs().max()))
        out["eq42_47"].append(float((g_new + s.duals).abs().max()))
        out["prop34"].append(float((mu * (s.local - prev0) + g_new - G(prev_local))
                                   .abs().max()))
    return out


@register("fedmm.propositions1_4", seed_name="fedmm.t3_propositions",
          paper="004 fedmm",
          claim="Props 1-4 (App. A.3) hold with exact local solves and eta3 = 1 (Props 3/4 "
                "from t = 1 only); with eta3 = 0.5 Props 1/2 fail")
def check(seed: int, size: str) -> CheckResult:
    """Propositions 1-4 of App. A.3 with exact local solves (Q and NL instances)."""
    small = size == "small"
    seeds = range(3) if small else range(6)
    N, d1, d2 = (2, 3, 2) if small else (4, 6, 4)
    mu, rounds = 2.0, 20 if small else 60
    margins, worst_vals = {}, {}
    for s in seeds:
        for family, gen, build in (("Q", gen_Q, _quad), ("NL", gen_NL, _nonlinear)):
            inst = gen(s, N=N, d1=d1, d2=d2)
            try:
                r1 = residuals(*build(inst, mu, 1.0), mu, rounds)
                rh = residuals(*build(inst, mu, 0.5), mu, rounds)
            except RuntimeError as err:  # a Newton local solve did not converge
                margins[f"{family} local solve converges"] = -np.inf
                worst_vals[f"{family} seed {s}"] = {"error": str(err)}
                continue
            crit = {
                "prop12_all_t": HOLD - max(r1["prop12"]),
                "eq42_47_all_t": HOLD - max(r1["eq42_47"]),
                "prop34_t_ge_1": HOLD - max(r1["prop34"][1:]),
                "prop34_fails_t0": r1["prop34"][0] - FAIL,
                "eta3_half_prop12_fails_t_2_3": min(rh["prop12"][2:4]) - FAIL,
            }
            for c, v in crit.items():
                key = f"{family} {c}"
                margins[key] = min(margins.get(key, np.inf), v)
            worst_vals[f"{family} seed {s}"] = {
                "prop12": max(r1["prop12"]), "eq42_47": max(r1["eq42_47"]),
                "prop34_t0": r1["prop34"][0], "prop34_t_ge_1": max(r1["prop34"][1:]),
                "eta3_half_prop12_t_2_3": rh["prop12"][2:4],
                "eta3_half_prop12_last": rh["prop12"][-1]}
    worst = min(margins.values())
    closest = min(margins, key=margins.get)
    return CheckResult(
        name="fedmm.propositions1_4", claim="Props 1-4 with exact local solves",
        paper="004 fedmm", equation="App. A.3 (32), (36), (40), (42), (45), (47)",
        instances=len(seeds) * 4, worst_margin=float(worst),
        ground_truth={"solver": "closed form", "local": "Q: exact linear solve of each L_i's "
                      "stationarity system; NL: Newton's method to residual 1e-13"},
        passed=bool(worst >= 0), closest={"criterion": closest, "margin": margins[closest]},
        details={"margins": margins, "per_seed": worst_vals, "hold_tol": HOLD,
                 "fail_threshold": FAIL, "mu": mu, "rounds": rounds, "N": N, "d1": d1,
                 "d2": d2, "families": ["Q", "NL (gamma = 0.5)"]})
