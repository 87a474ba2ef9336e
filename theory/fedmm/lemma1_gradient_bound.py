"""T4 (docs/decisions.md#fedmm-theory-checks): Lemma 1 (22) and its per-client Danskin step.

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

What reaches (c) from the package. Written with lambda_i^{t-1} and omega0^{t-1}
it only tests the local solver's stationarity with exactly the dual and centre it was handed.
So (c) is evaluated in two forms that each see the rest of Algorithm 3:

(c13) ||g_i(omega_i^t) + lambda_i^t|| <= L12 eps_i^t with the package's own lambda_i^t after
      the dual step (13) (equal to (c) when (13) is right: lambda_i^t = lambda_i^{t-1} +
      mu1 (omega_i^t - omega0^{t-1}));
(c16) (c) with omega0^{t-1} recomputed here from (15)-(16) out of the package's
      theta_i^{t-1} and duals of round t - 1 (eta3 constant), not read from its state.

Everything the bound holds the package against is computed here from the instance's data:
L12 = max_i (||B_i||_2 + gamma max_k |b_ik|) (sup of the cross Hessian,
docs/decisions.md#fedmm-theory-instances
NC), psi*(w) of (26) with the sin coupling, grad_w f_i and the per-client exact gradient; a
separate test shows the package's ``NLInstance`` gives the same numbers.

The blocks' penalties differ, (mu1, mu2) in {(1, 1.5), (5, 3.5), (50, 70)}: (c) carries mu1 and
the centre (15) divides each block's dual by its own mu. The package's rounds are audited against
the round written in :mod:`theory.fedmm.reference` (Newton's method on the instance's player
gradient, written here). The paper's own mu = 1 (both blocks) is run apart: a violation of
(c13)/(c16) there is a finding.

Pass: (c13) and (c16) hold on every finite NL run (max(lhs - rhs) <= 1e-10), (a) is violated
on at least one run (the statement as printed is false). Runs whose local solve does not
converge (mu too small for the nonlinear local problem) are counted and excluded; every run
excluded is the verdict ``diverged``. ``nontrivial``: the share of (run, t, i) points of the NL
runs where the bound L12 eps_i^t is below ||g_i(omega_i^t)|| (the dual has to cancel the
gradient for (c13) to hold). ``measured``/``bound``: lhs and rhs at the largest lhs / rhs.
"""

from __future__ import annotations

import numpy as np
import torch

from repro.fedmm.blocks import Block
from repro.fedmm.fedmm import FedMM, FedMMConfig
from repro.fedmm.instances import NewtonLocalSolver, NLOracle, gen_NL
from theory.evidence import Evidence, Term
from theory.fedmm.common import PAPER_MU, block_vector, nl_reference
from theory.fedmm.reference import audit, tolerance
from theory.registry import register
from theory.result import CheckResult

TOL = 1e-10
GAMMA = 0.5
ETA3 = 1.0
MUS = ((1.0, 1.5), (5.0, 3.5), (50.0, 70.0))
TERMS = (
    Term("the dual cancels the gradient (||g_i|| > L12 eps_i)", "||g_i|| - L12 eps_i", 0.0),
    Term("mu1 (omega_i^t - omega0^{t-1}) in (c16)", "mu1 ||omega_i^t - omega0^{t-1}||", 1e-8),
    Term("nonlinear coupling (gamma > 0)", "gamma max|b_i|", 0.0),
)


def l12(inst) -> float:
    """L12 = max_i (||B_i||_2 + gamma max_k |b_ik|): sup over w of the cross Hessian
    ||d^2 f_i / dw dpsi|| = ||B_i + gamma [diag(b_i cos w_{:d2}); 0]|| (spec §9.1 NC).
    """
    q = inst.q
    return max(np.linalg.norm(q.B[i], 2) + inst.gamma * np.abs(inst.b[i]).max()
               for i in range(inst.n))


def psi_star(inst, w: np.ndarray) -> np.ndarray:
    """(26) on NL: psi*(w) = Cbar^{-1}(Bbar' w - cbar + gamma bbar sin(w_{:d2}))."""
    q, d2 = inst.q, inst.d2
    rhs = q.B.mean(0).T @ w - q.c.mean(0) + inst.gamma * inst.b.mean(0) * np.sin(w[:d2])
    return np.linalg.solve(q.C.mean(0), rhs)


def grad_w(inst, i: int, w: np.ndarray, p: np.ndarray) -> np.ndarray:
    """grad_w f_i(w, p) of f_i = Q_i + gamma sum cos(w + phase_i) + gamma sum b_i sin(w) p."""
    q, g, d2 = inst.q, inst.gamma, inst.d2
    out = q.A[i] @ w + q.B[i] @ p + q.a[i] - g * np.sin(w + inst.phase[i])
    out[:d2] += g * inst.b[i] * np.cos(w[:d2]) * p
    return out


def grad_p(inst, i: int, w: np.ndarray, p: np.ndarray) -> np.ndarray:
    """grad_psi f_i(w, p) = B_i' w - C_i p - c_i + gamma b_i sin(w_{:d2})."""
    q, d2 = inst.q, inst.d2
    return q.B[i].T @ w - q.C[i] @ p - q.c[i] + inst.gamma * inst.b[i] * np.sin(w[:d2])


def dpsi_star(inst, w: np.ndarray) -> np.ndarray:
    """(d2, d1) Jacobian of psi*(w)."""
    q, d2 = inst.q, inst.d2
    M = q.B.mean(0).T.copy()
    M[:, :d2] += inst.gamma * np.diag(inst.b.mean(0) * np.cos(w[:d2]))
    return np.linalg.solve(q.C.mean(0), M)


def centre(local: np.ndarray, duals: np.ndarray, mu, eta3: float = ETA3) -> np.ndarray:
    """(15)-(16): theta0^{t+1} = mean_i (theta_i^{t+1} + (eta3 / mu_b) d_i^{t+1}) (``mu`` the
    per-coordinate penalties).
    """
    return (local + (eta3 / mu) * duals).mean(0)


def lemma1_gaps(inst, mu_pair, rounds: int, ev: Evidence | None = None) -> dict | None:
    """Max over (t >= 1, i) of lhs - rhs for the readings; the nontrivial count and the
    largest lhs / rhs; None if the run diverges or a local solve fails. The package's rounds
    are audited into ``ev`` (first 3, every 10th).
    """
    d1 = inst.d1
    mu1 = mu_pair[0]
    mu_v = block_vector(inst, mu_pair)
    L12 = l12(inst)
    blocks = (Block("omega", d1, 0.05, mu_pair[0]), Block("psi", inst.d2, 0.05, mu_pair[1]))
    alg = FedMM(NLOracle(inst), FedMMConfig(blocks, eta3=ETA3, eta3_constant=True),
                init=torch.zeros(d1 + inst.d2, dtype=torch.float64),
                local_solver=NewtonLocalSolver(inst))
    ref = nl_reference(inst, mu_pair, ETA3)
    key = "fedmm:FedMM/exact-newton/float64"
    gaps = {"a_literal_exact": -np.inf, "b_literal_surrogate": -np.inf,
            "c13_index_corrected_dual": -np.inf, "c16_index_corrected_centre": -np.inf}
    out = {"points": 0, "nontrivial": 0, "ratio": 0.0, "lhs": None, "rhs": None}
    prev_local = alg.state.local.numpy().copy()
    prev_duals = alg.state.duals.numpy().copy()
    prev0_ref = alg.state.theta0.numpy()[:d1].copy()  # theta0^0, handed in
    for r in range(rounds):
        prevlam = prev_duals[:, :d1]
        try:
            if ev is not None and (r < 3 or r % 30 == 0):
                audit(alg, ev, "Algorithm 3 round (11)-(16)", key, ref, tolerance(torch.float64))
            else:
                alg.step()
        except RuntimeError:  # Newton did not converge: the local problem is not monotone
            return None
        th = alg.state.local.numpy()
        w0 = alg.state.theta0.numpy()[:d1]
        duals = alg.state.duals.numpy()
        lam = duals[:, :d1]
        if not np.all(np.isfinite(th)) or np.abs(th).max() > 1e8 \
                or not np.all(np.isfinite(duals)):
            return None
        for i in range(inst.n):
            w, p = th[i, :d1], th[i, d1:]
            ps = psi_star(inst, w)
            eps = np.linalg.norm(p - ps)
            g_w = grad_w(inst, i, w, ps)
            exact = g_w + dpsi_star(inst, w).T @ grad_p(inst, i, w, ps)
            rhs = L12 * eps
            gaps["a_literal_exact"] = max(gaps["a_literal_exact"], np.linalg.norm(
                exact + lam[i] + mu1 * (w - w0)) - rhs)
            gaps["b_literal_surrogate"] = max(gaps["b_literal_surrogate"], np.linalg.norm(
                g_w + lam[i] + mu1 * (w - w0)) - rhs)
            lhs13 = np.linalg.norm(g_w + lam[i])
            lhs16 = np.linalg.norm(g_w + prevlam[i] + mu1 * (w - prev0_ref))
            if ev is not None and inst.gamma > 0:
                ev.activity("the dual cancels the gradient (||g_i|| > L12 eps_i)",
                            np.linalg.norm(g_w) - rhs)
                ev.activity("mu1 (omega_i^t - omega0^{t-1}) in (c16)",
                            mu1 * np.linalg.norm(w - prev0_ref))
            gaps["c13_index_corrected_dual"] = max(gaps["c13_index_corrected_dual"],
                                                   lhs13 - rhs)
            gaps["c16_index_corrected_centre"] = max(gaps["c16_index_corrected_centre"],
                                                     lhs16 - rhs)
            out["points"] += 1
            out["nontrivial"] += int(rhs < np.linalg.norm(g_w))
            r = max(lhs13, lhs16) / rhs if rhs > 0 else 0.0
            if r > out["ratio"]:
                out.update(ratio=float(r), lhs=float(max(lhs13, lhs16)), rhs=float(rhs))
        prev_local, prev_duals = th.copy(), duals.copy()
        prev0_ref = centre(prev_local, prev_duals, mu_v)[:d1]
    return {**gaps, **out}
@register("fedmm.lemma1_gradient_bound", seed_name="fedmm.t4_lemma1",
          paper="004 fedmm",
          claim="Lemma 1 (22) holds only index-corrected with the Danskin surrogate (checked "
                "on a nonlinear coupling, through the package's dual step (13) and centre "
                "(15)-(16)); as stated it is violated")
def check(seed: int, size: str) -> CheckResult:
    """Lemma 1 (22): literal (a), (b) as counterexamples; index-corrected (c13), (c16) hold."""
    small = size == "small"
    seeds = range(3) if small else range(20)
    mus = MUS
    rounds = 20 if small else 60
    N, d1, d2 = (2, 3, 2) if small else (4, 6, 4)
    ev = Evidence(TERMS)
    paper = {}
    worst = {"c13_index_corrected_dual": -np.inf, "c16_index_corrected_centre": -np.inf}
    viol_a, viol_b, n, n_nl, diverged, points, nontrivial = 0, 0, 0, 0, 0, 0, 0
    per, closest = {}, {}
    for s in seeds:
        for gamma in (0.0, GAMMA):
            inst = gen_NL(s, N=N, d1=d1, d2=d2, gamma=gamma)
            if gamma > 0:
                ev.activity("nonlinear coupling (gamma > 0)", gamma * np.abs(inst.b).max())
                pg = lemma1_gaps(inst, (PAPER_MU, PAPER_MU), rounds)
                paper[f"seed {s}"] = (None if pg is None else max(
                    pg["c13_index_corrected_dual"], pg["c16_index_corrected_centre"]))
            for mu in mus:
                g = lemma1_gaps(inst, mu, rounds, ev)
                if g is None:
                    diverged += 1
                    continue
                n += 1
                per[f"seed {s} gamma={gamma} mu={mu}"] = g
                viol_a += g["a_literal_exact"] > TOL
                viol_b += g["b_literal_surrogate"] > TOL
                if gamma > 0:
                    n_nl += 1
                    points += g["points"]
                    nontrivial += g["nontrivial"]
                    for k in worst:
                        worst[k] = max(worst[k], g[k])
                    if g["ratio"] > closest.get("lhs / rhs", 0.0):
                        closest = {"seed": s, "mu": mu, "lhs / rhs": g["ratio"],
                                   "lhs": g["lhs"], "rhs": g["rhs"]}
    margins = {k: TOL - v for k, v in worst.items()}
    ev.criterion("Lemma 1 (22) index-corrected (c13): through the dual step (13)",
                 margins["c13_index_corrected_dual"] / TOL)
    ev.criterion("Lemma 1 (22) index-corrected (c16): through the centre (15)-(16)",
                 margins["c16_index_corrected_centre"] / TOL)
    ev.criterion("Lemma 1 as printed (a) is violated (counterexample found)",
                 1.0 if viol_a > 0 else -1.0)
    margin = ev.worst()
    bad = {k: v for k, v in paper.items() if v is not None and v > TOL}
    paper_finding = (("at the paper's mu = 1 (both blocks) the index-corrected Lemma 1 fails: "
                      + ", ".join(f"{k}: lhs - rhs {v:.3g}" for k, v in bad.items()))
                     if bad else None)
    return CheckResult(
        name="fedmm.lemma1_gradient_bound", claim="Lemma 1, index-corrected surrogate version",
        paper="004 fedmm", equation="Lemma 1 (22), proof (52)-(53); (13), (15)-(16)",
        instances=n, worst_margin=float(margin),
        ground_truth={"solver": "closed form", "psi_star": "(26) linear solve (NL: with the "
                      "sin coupling), computed in theory/", "L12": "max_i ||B_i||_2 + gamma "
                      "max|b_i| (theory/)"},
        passed=bool(margin >= 0 and n_nl > 0 and viol_a > 0),
        measured=closest.get("lhs"), bound=closest.get("rhs"),
        looseness=(1 / closest["lhs / rhs"]) if closest.get("lhs / rhs") else None,
        closest=closest, nontrivial=(nontrivial / points) if points else None,
        diverged=bool(n == 0 and diverged > 0),
        paper_setting={"mu1 = mu2": PAPER_MU, **{f"{k} max lhs - rhs": v
                                                 for k, v in paper.items()}},
        paper_finding=paper_finding, **ev.fields(),
        details={"tolerance": TOL, "margins": margins, "violations_literal_exact": viol_a,
                 "violations_literal_surrogate": viol_b, "runs": n, "nonlinear_runs": n_nl,
                 "diverged_or_unsolved": diverged, "nonlinear_points": points,
                 "nontrivial_points": nontrivial, "max_gap_per_run": per, "rounds": rounds,
                 "looseness": "rhs / lhs at the point of largest lhs / rhs",
                 "pass_requires": "(c13) and (c16) hold on every finite NL run and (a) is "
                                  "violated on at least one (the statement as printed is "
                                  "false)"})
