"""T4 (specs/fedmm.md §9.2, §9.3 item 1): Lemma 1 (22) and its per-client Danskin step.

Lemma 1 claims ||grad_{omega_i} L^Phi_i(omega_i^t, omega0^t, lambda_i^t)|| <= L12 eps_i^t with
eps_i^t = ||psi_i^t - psi*(omega_i^t)|| and L^Phi_i of (18). Its proof uses Danskin per client
(grad Phi_i(w) = grad_w f_i(w, psi*(w))), which is false: psi* maximises the GLOBAL f. And the
local stationarity it relies on holds with (omega0^{t-1}, lambda_i^{t-1}), not (omega0^t,
lambda_i^t). Three readings, on FedMM-exact iterates (finite runs only):

(a) literal, exact per-client gradient grad Phi_i = grad_w f_i + (dpsi*/dw)' grad_psi f_i at
    psi*;
(b) literal, Danskin surrogate g_i(w) = grad_w f_i(w, psi*(w));
(c) index-corrected: ||g_i(omega_i^t) + lambda_i^{t-1} + mu1 (omega_i^t - omega0^{t-1})||.

On a quadratic instance Q, (c) is ||B_i (psi*(w) - psi_i^t)|| once the local solve is exact, so
it holds with L12 = max ||B_i|| by Cauchy-Schwarz: a built-in identity. The check therefore
runs (c) on the NL family (:func:`repro.fedmm.instances.gen_NL`, gamma = 0.5), whose omega-psi
coupling is nonlinear: there (c) is a mean-value inequality that needs the sup bound
L12 = max_i (||B_i|| + gamma max|b_i|) and local solves by Newton's method (residual 1e-13).
Q (gamma = 0) is kept for (a) and (b), the printed statement's counterexamples.

Pass: (c) holds on every finite NL run (max(lhs - rhs) <= 1e-10) and (a) is violated on at
least one run (the statement as printed is false). Runs whose local solve does not converge
(mu too small for the nonlinear local problem) are counted and excluded.
"""

from __future__ import annotations

import numpy as np
import torch

from repro.fedmm.fedmm import FedMM, FedMMConfig
from repro.fedmm.instances import NewtonLocalSolver, gen_NL
from theory.fedmm.theorem1_remark_fixed_point import blocks_for
from theory.registry import register
from theory.result import CheckResult

TOL = 1e-10
GAMMA = 0.5


def lemma1_gaps(inst, mu: float, rounds: int) -> dict[str, float] | None:
    """Max over (t >= 1, i) of lhs - rhs for the three readings; None if the run diverges or
    a local solve fails.
    """
    d1 = inst.d1
    L12 = inst.L12()
    alg = FedMM(FedMMConfig(blocks_for(d1, inst.d2, mu)),
                torch.zeros(d1 + inst.d2, dtype=torch.float64), inst.n, NewtonLocalSolver(inst))
    gaps = {"a_literal_exact": -np.inf, "b_literal_surrogate": -np.inf,
            "c_index_corrected": -np.inf}
    for _ in range(rounds):
        prev0 = alg.state.theta0.numpy()[:d1].copy()
        prevlam = alg.state.duals.numpy()[:, :d1].copy()
        try:
            alg.step()
        except RuntimeError:  # Newton did not converge: the local problem is not monotone
            return None
        th = alg.state.local.numpy()
        w0 = alg.state.theta0.numpy()[:d1]
        lam = alg.state.duals.numpy()[:, :d1]
        if not np.all(np.isfinite(th)) or np.abs(th).max() > 1e8:
            return None
        for i in range(inst.n):
            w, p = th[i, :d1], th[i, d1:]
            ps = inst.psi_star(w)
            eps = np.linalg.norm(p - ps)
            g_w = inst.grad_w(i, w, ps)
            exact = g_w + inst.dpsi_star(w).T @ inst.grad_p(i, w, ps)
            rhs = L12 * eps
            gaps["a_literal_exact"] = max(gaps["a_literal_exact"], np.linalg.norm(
                exact + lam[i] + mu * (w - w0)) - rhs)
            gaps["b_literal_surrogate"] = max(gaps["b_literal_surrogate"], np.linalg.norm(
                g_w + lam[i] + mu * (w - w0)) - rhs)
            gaps["c_index_corrected"] = max(gaps["c_index_corrected"], np.linalg.norm(
                g_w + prevlam[i] + mu * (w - prev0)) - rhs)
    return gaps


@register("fedmm.lemma1_gradient_bound", seed_name="fedmm.t4_lemma1",
          paper="004 fedmm",
          claim="Lemma 1 (22) holds only index-corrected with the Danskin surrogate (checked "
                "on a nonlinear coupling); as stated it is violated")
def check(seed: int, size: str) -> CheckResult:
    """Lemma 1 (22): literal (a), (b) as counterexamples; index-corrected (c) must hold."""
    small = size == "small"
    seeds = range(3) if small else range(20)
    mus = (1.0, 5.0, 50.0)
    rounds = 20 if small else 60
    N, d1, d2 = (2, 3, 2) if small else (4, 6, 4)
    worst_c, viol_a, viol_b, n, n_nl, diverged = -np.inf, 0, 0, 0, 0, 0
    per, closest = {}, {}
    for s in seeds:
        for gamma in (0.0, GAMMA):
            inst = gen_NL(s, N=N, d1=d1, d2=d2, gamma=gamma)
            for mu in mus:
                g = lemma1_gaps(inst, mu, rounds)
                if g is None:
                    diverged += 1
                    continue
                n += 1
                per[f"seed {s} gamma={gamma} mu={mu}"] = g
                viol_a += g["a_literal_exact"] > TOL
                viol_b += g["b_literal_surrogate"] > TOL
                if gamma > 0:
                    n_nl += 1
                    if g["c_index_corrected"] > worst_c:
                        worst_c = g["c_index_corrected"]
                        closest = {"seed": s, "mu": mu, "gap_c": worst_c}
    margin = TOL - worst_c
    return CheckResult(
        name="fedmm.lemma1_gradient_bound", claim="Lemma 1, index-corrected surrogate version",
        paper="004 fedmm", equation="Lemma 1 (22), proof (52)-(53)", instances=n,
        worst_margin=float(margin),
        ground_truth={"solver": "closed form", "psi_star": "(26) linear solve (NL: with the "
                      "sin coupling)", "L12": "max_i ||B_i||_2 + gamma max|b_i|"},
        passed=bool(margin >= 0 and n_nl > 0 and viol_a > 0), closest=closest,
        details={"tolerance": TOL, "violations_literal_exact": viol_a,
                 "violations_literal_surrogate": viol_b, "runs": n, "nonlinear_runs": n_nl,
                 "diverged_or_unsolved": diverged, "max_gap_per_run": per, "rounds": rounds,
                 "pass_requires": "(c) holds on every finite NL run and (a) is violated on at "
                                  "least one (the statement as printed is false)"})
