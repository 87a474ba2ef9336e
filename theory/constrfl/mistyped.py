"""Paper 003: statements that are mistyped as printed (specs/constrfl.md §8.7), each shown
failing in its printed form (a counterexample in ``details``) and holding when corrected.

1. Lemma A.1 proof: ``dist(0, .) <= sqrt(n) dist_inf(0, .)`` for a vector of R^d; the factor
   is sqrt(d). Counterexample: the residual ``e = tau 1_d``, which Algorithm 2's guarantee (10)
   ``||e||_inf <= tau`` allows, has ``||e|| = sqrt(d) tau > sqrt(n) tau`` when d > n. Also
   evaluated on the actual residual vectors ``grad ell_k(w^{k+1})`` of Algorithm-1 runs.
2. Algorithm 3's input "nondecreasing positive {tau_k}": the proofs use ``sum_j tau_j <= 2 s̄``;
   a constant (nondecreasing) sequence tau_k = s̄ breaks it after 3 terms; the non-increasing
   ``s̄/(k+1)^2`` keeps it (sum = π²/6 s̄).
3. Algorithm 2 requires tau ∈ (0, 1] but Algorithm 1 passes ``tau_0 = s̄`` (Remark 3.1 allows
   any s̄ = O(1)): s̄ = 2 gives tau_0 = 2.
"""

from __future__ import annotations

import numpy as np

from repro.constrfl.config import ProxALConfig
from repro.constrfl.instances import qp_ball
from repro.constrfl.proxal import FedProxAL
from theory.registry import register
from theory.result import CheckResult


def _residual_vectors(rng, runs: int):
    """``grad ell_k(w^{k+1})`` along Algorithm-1 runs on QP-ball (d = 6, n = 3)."""
    out = []
    for _ in range(runs):
        problem = qp_ball(rng)
        w0 = rng.standard_normal(problem.d)
        w0 /= np.linalg.norm(w0)
        cfg = ProxALConfig(beta=2.0, s_bar=1e-2, rho=1.0, q=0.5, eps1=1e-3, eps2=1e-3,
                           k_max=30, solver_tol_floor=1e-13)
        alg = FedProxAL(problem, cfg, w0)
        while not alg.state.stopped and alg.state.k < cfg.k_max:
            sm, cms = alg.merits(alg.state.w)
            alg.step()
            w = alg.state.w
            out.append(sm.grad(w[None])[0] + sum(
                m.grad(np.broadcast_to(w, (m.block.size, w.size))).sum(0) for m in cms))
    return out, problem.d, problem.n


@register("constrfl.mistyped_statements", paper="003 constrfl",
          claim="Printed forms of Lemma A.1's norm factor, Algorithm 3's tau_k monotonicity and "
                "Algorithm 2's tau range fail; the corrected forms hold")
def check(seed: int, size: str) -> CheckResult:
    rng = np.random.default_rng(seed)
    vecs, d, n = _residual_vectors(rng, 1 if size == "small" else 3)
    tau = 1e-3
    extreme = np.full(d, tau)
    printed_1 = np.sqrt(n) * np.max(np.abs(extreme)) - np.linalg.norm(extreme)
    ratios = [np.linalg.norm(v) / np.max(np.abs(v)) for v in vecs if np.any(v)]
    corrected_1 = min([np.sqrt(d) - r for r in ratios] + [np.sqrt(d) * tau - np.linalg.norm(
        extreme) + 1e-15])
    s_bar = 1e-2
    const = np.full(3, s_bar)
    printed_2 = 2 * s_bar - const.sum()
    decreasing = s_bar / (np.arange(10_000) + 1.0) ** 2
    corrected_2 = 2 * s_bar - decreasing.sum()
    printed_3 = 1.0 - ProxALConfig(s_bar=2.0).tau(0)
    corrected_3 = 1.0 - ProxALConfig(s_bar=1.0).tau(0)
    printed_fail = [printed_1 < 0, printed_2 < 0, printed_3 < 0]
    margin = min(corrected_1, corrected_2, corrected_3)
    return CheckResult(
        name="constrfl.mistyped_statements",
        claim="||e|| <= sqrt(d)||e||_inf (not sqrt(n)); sum tau_j <= 2 s̄ needs non-increasing "
              "tau_k; tau_0 = s̄ <= 1 needs s̄ <= 1", paper="003 constrfl",
        equation="Lemma A.1 proof, (15), (43), (47), Algorithm 3 input, Algorithm 2 input",
        instances=len(vecs) + 3, worst_margin=float(margin),
        ground_truth={"solver": "closed form"},
        passed=bool(margin >= 0 and all(printed_fail)),
        details={
            "printed_form_counterexamples": {
                "lemma_A1_sqrt_n": {"e": extreme.tolist(), "d": d, "n": n,
                                    "sqrt(n)*||e||_inf - ||e||": printed_1},
                "alg3_nondecreasing_tau": {"tau": const.tolist(),
                                           "2 s_bar - sum tau": printed_2},
                "alg2_tau_range": {"s_bar": 2.0, "1 - tau_0": printed_3}},
            "printed_forms_fail": printed_fail,
            "corrected_margins": {"sqrt(d) factor": corrected_1,
                                  "sum of s/(k+1)^2": corrected_2, "s_bar = 1": corrected_3},
            "max ||e||/||e||_inf on Algorithm-1 residuals": max(ratios) if ratios else None,
            "sqrt(n), sqrt(d)": (np.sqrt(n), np.sqrt(d))})
