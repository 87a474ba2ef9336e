"""T8 (docs/decisions.md#fedmm-theory-checks): the sufficient range of mu1, mu2 of App. A.8,
(157)-(159).

On the Q instances: l = max(L22/B, L12/B) (157, smallest admissible l); (158)
max(64 L22 l, 64 L12 l) <= mu2 <= 64 l^2 B, which at that l is the single point
mu2 = 64 l max(L12, L22); (159) mu1 >= max(L21 L12 l sqrt(24576/(B mu2)),
L12 sqrt(512 N/1600), 4 L_Phi, 7 * 164092^2 l^4 kappa^4 L12^2 / L_Phi). Constants as in
docs/decisions.md#fedmm-theory-instances: L12 = L21 = max ||B_i||, L22 = max ||C_i||, B = min
lambda_min(C_i), kappa =
||K||, K = Cbar^{-1} Bbar', L_Phi = max_i ||A_i + B_i K + K'B_i' - K'C_i K||. Report-only finding:
the sufficient mu1 is astronomically larger than the mu = 1 of the experiments (and than the
empirical stability range of T1). The verdict is a *finding* (``applies=False``): the theorem's
conditions do not cover the experiments' mu; ``passed`` says whether that finding holds (mu1_min > 1
on every instance); ``measured`` is the mu used (1), ``bound`` the smallest sufficient mu1.
"""

from __future__ import annotations

import numpy as np

from repro.fedmm.instances import gen_Q
from theory.evidence import Evidence, Term
from theory.registry import register
from theory.result import CheckResult

TERMS = (
    Term("(159) 164092^2 l^4 kappa^4 term decides mu1", "log10 of it over the largest other term "
         "of (159)", 0.0),
    Term("(158) pins mu2 to one point", "1e-9 - |64 l^2 B - mu2_low| / mu2_low", 0.0),
    Term("mu1_min exceeds the experiments' mu = 1", "log10 mu1_min", 0.0),
)


def constants(inst) -> dict[str, float]:
    """Lipschitz/concavity constants of a Q instance as docs/decisions.md#fedmm-theory-instances
    defines them.
    """
    K = np.linalg.solve(inst.C.mean(0), inst.B.mean(0).T)
    hess = [inst.A[i] + inst.B[i] @ K + K.T @ inst.B[i].T - K.T @ inst.C[i] @ K
            for i in range(inst.n)]
    return {"L12": max(np.linalg.norm(b, 2) for b in inst.B),
            "L22": max(np.linalg.norm(c, 2) for c in inst.C),
            "B": min(np.linalg.eigvalsh(c).min() for c in inst.C),
            "kappa": float(np.linalg.norm(K, 2)),
            "L_Phi": max(np.linalg.norm(h, 2) for h in hess), "N": inst.n}


def mu_range(c: dict[str, float]) -> dict[str, float]:
    """The sufficient (mu1, mu2) of App. A.8, (157)-(159), at the smallest admissible l."""
    L12, L22, B, kappa, L_phi, N = (c[k] for k in ("L12", "L22", "B", "kappa", "L_Phi", "N"))
    l = max(L22 / B, L12 / B)  # (157)
    mu2_lo, mu2_hi = max(64 * L22 * l, 64 * L12 * l), 64 * l ** 2 * B  # (158)
    mu2 = mu2_lo
    terms = (L12 * L12 * l * np.sqrt(24576 / (B * mu2)), L12 * np.sqrt(512 * N / 1600),
             4 * L_phi, 7 * 164092 ** 2 * l ** 4 * kappa ** 4 * L12 ** 2 / L_phi)  # (159)
    return {"l": l, "mu2_low": mu2_lo, "mu2_high": mu2_hi, "mu1_min": float(max(terms)),
            "mu1_terms": [float(t) for t in terms]}


@register("fedmm.appendix_a8_mu_range", seed_name="fedmm.t8_mu_range",
          paper="004 fedmm",
          claim="A.8's sufficient (mu1, mu2) range excludes the experiments' mu = 1")
def check(seed: int, size: str) -> CheckResult:
    """App. A.8: the sufficient mu range vs the experiments' mu = 1 (a finding)."""
    seeds = range(3)
    ev = Evidence(TERMS)
    rows = {}
    for s in seeds:
        c = constants(gen_Q(s))
        rows[f"seed {s}"] = r = {**c, **mu_range(c)}
        t = r["mu1_terms"]
        ev.activity("(159) 164092^2 l^4 kappa^4 term decides mu1",
                    np.log10(t[3] / max(t[:3])))
        ev.activity("(158) pins mu2 to one point",
                    1e-9 - abs(r["mu2_high"] - r["mu2_low"]) / r["mu2_low"])
        ev.activity("mu1_min exceeds the experiments' mu = 1", np.log10(r["mu1_min"]))
    worst = min(np.log10(r["mu1_min"]) for r in rows.values())  # > 0 <=> mu1_min > 1
    ev.criterion("A.8 (159): mu1_min > 1 (the experiments' mu outside the range)", worst)
    lo = min(rows.values(), key=lambda r: r["mu1_min"])
    finding = (f"the theorem's conditions do not cover the experiments' mu = 1: A.8 needs "
               f"mu1 >= {lo['mu1_min']:.2g} (smallest over {len(rows)} instances) and mu2 = "
               f"{lo['mu2_low']:.4g} exactly" if worst > 0 else
               f"A.8's sufficient range reaches down to mu1 = {lo['mu1_min']:.2g} <= 1 on "
               "some instance: it would cover the experiments' mu = 1")
    return CheckResult(
        name="fedmm.appendix_a8_mu_range", claim="sufficient mu range of A.8 vs mu = 1",
        paper="004 fedmm", equation="App. A.8 (157)-(159)", instances=len(rows),
        worst_margin=float(worst),
        ground_truth={"solver": "closed form", "constants": "spectral norms / eigenvalues of "
                      "the Q instance (gen_Q, N = 4, d1 = 6, d2 = 4)"},
        passed=bool(worst > 0), applies=False, finding=finding,
        measured=1.0, bound=float(lo["mu1_min"]), looseness=None,
        closest={"instance": min(rows, key=lambda k: rows[k]["mu1_min"]),
                 "mu1_min": float(lo["mu1_min"]), "mu_used": 1.0},
        paper_setting={"mu": 1.0, "eta": 0.01, "smallest sufficient mu1": float(lo["mu1_min"])},
        **ev.fields(),
        details={"per_instance": rows, "margin": "log10(mu1_min / 1)",
                 "note": "(158) at the smallest l is a single point since l B = "
                         "max(L12, L22)"})
