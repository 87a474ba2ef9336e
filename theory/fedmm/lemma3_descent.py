"""T6 (docs/decisions.md#fedmm-theory-checks): Lemma 3 (24) / Lemma 16 (131), the descent of
Phi(omega0^t).

(131):  Phi(omega0^T) - Phi(omega0^0) <= - c1/N sum_i sum_t ||omega_i^{t+1} - omega_i^t||^2
        - mu1/4 sum_t ||omega0^{t+1} - omega0^t||^2 + c3/N sum_i sum_t ||psi_i^{t+1} -
        psi*(omega_i^{t+1})||^2,
with c1 = (mu1^2 - 2 L_Phi mu1 - 4 L_Phi^2)/(2 mu1) and c3 = (3 mu1 + 16 L_Phi) L12^2/(mu1 L_Phi).
(24) prints the last term with the UNSQUARED eps_i^t = ||psi_i^t - psi*(omega_i^t)||;
docs/decisions.md#fedmm
§9.2 T6 resolves it to the squared distances of (131) (its proof, Lemma 14 (125), has them squared);
the unsquared (24) is reported. The sums are ambiguous (their terms are (t+1)-indexed but run to t =
T, off by one); both conventions are checked:

* literal: sum_{t=1}^{T} of the (t+1)-terms as printed (needs the iterates up to T + 1);
* aligned: increments over t = 0, ..., T-1 and eps_t over t = 1, ..., T (what a telescoping sum
  from omega0^0 to omega0^T gives).

FedMM-exact (eta3 = 1) on Q instances with a random start omega0^0 ~ 3 N(0, I), psi0^0 ~ 3 N(0,
I) (numpy Generator ``default_rng([seed, 6])``; omega_i^0 = omega0^0, lambda^0 = beta^0 = 0),
mu1 in {L_Phi, 4 L_Phi, 10 L_Phi}, mu2 = 1.5 mu1 (L_Phi of
docs/decisions.md#fedmm-theory-instances, also in the
constants), T = 1, ..., 150. Pass: max over T of lhs - rhs <= 1e-9 for both conventions on
every finite run (diverging runs are counted and excluded; all runs diverging is the verdict
``diverged``). The tightest aligned slack of this grid is kept in the details. Reported: the
same with the constant max(L_Phi, L_g) in c1, c3 (the proofs' per-client Danskin step needs
L_g, cf. T4/T5), and (24).

Where the lemma bites. On the grid above the right-hand side is >= 0 at every
(run, T) point (the eps-term from the random psi0^0 dominates): the inequality guarantees no
decrease and holds for any iterates. The check therefore adds runs where it bites: start
psi0^0 = psi*(omega0^0) (eps_0 = 0), mu1 in {4, 10, 30, 100} L_Phi (mu2 = 1.5 mu1) (large mu: the
-c1 increments term, c1 ~ mu/2, outweighs the eps-term, c3 ~ 3 L12^2/L_Phi). There (131)
telescoped from omega0^0 is violated at T = 1 on some runs (reported as the counterexample):
its proof rests on Props 3/4 ((40), (45)), false at t = 0 since lambda^0 = beta^0 = 0
(docs/decisions.md#fedmm-paper-errata, the reason Lemmas 6 and 8 are checked from t = 2 in T5). So
the
bite runs assert (131), both conventions, telescoped from omega0^{t0} with t0 = 2 (the
trajectory from round 2 on; its sums start there): lhs - rhs <= 1e-9 at every point. The
share of all asserted points with rhs < 0 (literal) is ``nontrivial`` (the check fails at 0);
``looseness`` = actual decrease / guaranteed decrease at the tightest bite point.

Every constant (c1, c3, L_Phi, L12), psi* and Phi is computed here (theory/fedmm/trajectory.py)
from the paper's formulas; the iterates are the package's FedMM-exact (Algorithm 3) with the
exact local solve written here, audited round by round (first 3, every 20th) against the round
of :mod:`theory.fedmm.reference`. The psi block's penalty is mu2 = 1.5 mu1 (distinct blocks);
(131)'s constants carry mu1. The paper's own mu = 1 (both blocks) is run apart on the spec grid's
instances: a violation there is a finding.
"""

from __future__ import annotations

import numpy as np
import torch

from repro.fedmm.instances import gen_Q
from theory.evidence import Evidence, Term
from theory.fedmm.common import PAPER_MU, build, exact_spec, path_key, reference
from theory.fedmm.reference import audit, tolerance
from theory.fedmm.trajectory import Trajectory, constants, phi, psi_star, record
from theory.registry import register
from theory.result import CheckResult

TOL = 1e-9
MU_FACTORS = (1.0, 4.0, 10.0)
MU2_RATIO = 1.5
TERMS = (
    Term("-c1/N sum ||omega_i^{t+1} - omega_i^t||^2 (local increments)",
         "c1/N times the summed local increments at T", 1e-10),
    Term("-mu1/4 sum ||omega0^{t+1} - omega0^t||^2", "mu1/4 times the summed increments at T",
         1e-10),
    Term("c3/N sum eps (distance to psi*)", "c3/N times the summed eps at T", 1e-10),
    Term("rhs < 0 (the lemma guarantees a decrease)", "-rhs at T (literal)", 0.0),
)


def fedmm_run(inst, mu1: float, rng_start, ev: Evidence | None, T: int, psi_at_star=False,
              mu2: float | None = None):
    """The package's FedMM-exact from a random start (:func:`random_start`), ``T`` rounds,
    audited into ``ev``; the trajectory (None when it diverges).
    """
    spec = exact_spec(inst, mu=(mu1, MU2_RATIO * mu1 if mu2 is None else mu2))
    alg = build(spec)
    random_start(alg, inst, rng_start, psi_at_star=psi_at_star)
    ref, key = reference(spec), path_key(spec)

    def step(r):
        if ev is not None and (r < 3 or r % 20 == 0):
            audit(alg, ev, "Algorithm 3 round (11)-(16)", key, ref, tolerance(spec.dtype))
        else:
            alg.step()
    return record(alg, inst.d1, T, step)


def descent_gaps(inst, tr, mu: float, L_phi: float, L12: float) -> dict[str, np.ndarray]:
    """Lhs - rhs of (131) for T = 1, ..., tr.rounds - 1 (literal needs T + 1 iterates), both
    index conventions, and (24) with unsquared distances (literal).
    """
    n, T = inst.n, tr.rounds - 1
    c1 = (mu ** 2 - 2 * L_phi * mu - 4 * L_phi ** 2) / (2 * mu)
    c3 = (3 * mu + 16 * L_phi) * L12 ** 2 / (mu * L_phi)
    dist = np.linalg.norm(tr.psi - psi_star(inst, tr.omega), axis=2)  # (T+2, N)
    eps_sq, eps_norm = (dist ** 2).sum(1), dist.sum(1)  # index t
    w_inc = ((tr.omega[1:] - tr.omega[:-1]) ** 2).sum(axis=(1, 2))  # index t: t -> t+1
    w0_inc = ((tr.omega0[1:] - tr.omega0[:-1]) ** 2).sum(1)
    lhs = phi(inst, tr.omega0[1:T + 1]) - phi(inst, tr.omega0[0])  # T = 1..T

    def rhs(w, w0, e):  # cumulative sums over the first T terms, T = 1, ...
        return -c1 / n * np.cumsum(w) - mu / 4 * np.cumsum(w0) + c3 / n * np.cumsum(e)

    return {
        "lhs": lhs,
        "rhs_aligned": rhs(w_inc[:T], w0_inc[:T], eps_sq[1:T + 1]),
        # sum_{t=1}^T of ||x^{t+1} - x^t||^2 and eps_{t+1}
        "literal": lhs - rhs(w_inc[1:T + 1], w0_inc[1:T + 1], eps_sq[2:T + 2]),
        # increments t = 0..T-1, eps_t for t = 1..T
        "aligned": lhs - rhs(w_inc[:T], w0_inc[:T], eps_sq[1:T + 1]),
        "eq24_unsquared_literal": lhs - rhs(w_inc[1:T + 1], w0_inc[1:T + 1],
                                            eps_norm[2:T + 2]),
    }


def random_start(alg, inst, rng: np.random.Generator, psi_at_star: bool = False) -> None:
    """omega0^0, psi0^0 ~ 3 N(0, I); the local iterates start there (Alg. 3 lines 3-4).
    ``psi_at_star``: psi0^0 = psi*(omega0^0) instead (eps_0 = 0; the bite runs), drawing only
    omega0^0.
    """
    if psi_at_star:
        w0 = 3.0 * rng.standard_normal(inst.d1)
        theta = torch.from_numpy(np.concatenate([w0, psi_star(inst, w0)]))
    else:
        theta = torch.from_numpy(3.0 * rng.standard_normal(inst.d1 + inst.d2))
    alg.state.theta0 = theta.clone()
    alg.state.local = theta.expand(inst.n, -1).clone()


BITE_MU = (4.0, 10.0, 30.0, 100.0)
BITE_T0 = 2  # the first round from which Props 3/4 hold at the previous round (T5)


def _from(tr: Trajectory, t0: int) -> Trajectory:
    """The trajectory from round ``t0`` on (index 0 of the result is round t0)."""
    return Trajectory(tr.omega[t0:], tr.psi[t0:], tr.omega0[t0:], tr.psi0[t0:])


def _bite_runs(seeds, dims, T, ev):
    """Bite runs (psi0^0 = psi*(omega0^0), large mu): per run the max gaps of both
    conventions from omega0^{BITE_T0} (asserted) and from omega0^0 (reported), the number of
    points with rhs < 0 and the tightest ratio lhs / rhs there; ``None`` for a diverged run.
    """
    rows = {}
    for N, d1, d2 in dims:
        for s in seeds:
            inst = gen_Q(s, N=N, d1=d1, d2=d2)
            c = constants(inst)
            rng = np.random.default_rng([s, 6, 1])
            for f in BITE_MU:
                mu = f * c["L_Phi"]
                tr = fedmm_run(inst, mu, rng, ev, T + BITE_T0 + 1, psi_at_star=True)
                key = f"N={N} seed {s} mu={f}L_Phi"
                if tr is None:
                    rows[key] = None
                    continue
                g0 = descent_gaps(inst, tr, mu, c["L_Phi"], c["L12"])
                g = descent_gaps(inst, _from(tr, BITE_T0), mu, c["L_Phi"], c["L12"])
                rhs = {"literal": g["lhs"] - g["literal"], "aligned": g["rhs_aligned"]}
                _term_activity(ev, inst, _from(tr, BITE_T0), mu, c)
                ev.activity("rhs < 0 (the lemma guarantees a decrease)", -rhs["literal"])
                row = {"max_gap_literal": float(g["literal"].max()),
                       "max_gap_aligned": float(g["aligned"].max()),
                       "from_t0_max_gap_literal": float(g0["literal"].max()),
                       "from_t0_max_gap_aligned": float(g0["aligned"].max()),
                       "points": 2 * int(g["lhs"].size), "bite_points": 0,
                       "tightest_ratio": None}
                for conv, r in rhs.items():
                    bite = r < 0
                    row["bite_points"] += int(bite.sum())
                    if bite.any():
                        ratio = g["lhs"][bite] / r[bite]  # actual / guaranteed decrease
                        k = int(np.argmin(ratio))
                        if row["tightest_ratio"] is None or ratio[k] < row["tightest_ratio"]:
                            row.update(tightest_ratio=float(ratio[k]), convention=conv,
                                       tightest_T=int(np.flatnonzero(bite)[k]) + 1,
                                       lhs=float(g["lhs"][bite][k]), rhs=float(r[bite][k]))
                rows[key] = row
    return rows


def _term_activity(ev, inst, tr, mu, c) -> None:
    """The three terms of (131)'s right-hand side at T (cumulative), from the trajectory."""
    n, Lp, L12 = inst.n, c["L_Phi"], c["L12"]
    c1 = (mu ** 2 - 2 * Lp * mu - 4 * Lp ** 2) / (2 * mu)
    c3 = (3 * mu + 16 * Lp) * L12 ** 2 / (mu * Lp)
    w_inc = ((tr.omega[1:] - tr.omega[:-1]) ** 2).sum()
    w0_inc = ((tr.omega0[1:] - tr.omega0[:-1]) ** 2).sum()
    eps = ((tr.psi[1:] - psi_star(inst, tr.omega[1:])) ** 2).sum()
    ev.activity("-c1/N sum ||omega_i^{t+1} - omega_i^t||^2 (local increments)",
                abs(c1) / n * w_inc)
    ev.activity("-mu1/4 sum ||omega0^{t+1} - omega0^t||^2", mu / 4 * w0_inc)
    ev.activity("c3/N sum eps (distance to psi*)", c3 / n * eps)


@register("fedmm.lemma3_descent", seed_name="fedmm.t6_descent",
          paper="004 fedmm",
          claim="Lemma 3 (131): descent of Phi(omega0^t) with squared distances; holds where it "
                "bites (rhs < 0) on instances where its proof's per-client Danskin step is exact")
def check(seed: int, size: str) -> CheckResult:
    """Lemma 3 (24) / Lemma 16 (131): descent of Phi(omega0^t), both index conventions."""
    small = size == "small"
    seeds = range(2) if small else range(6)
    T = 40 if small else 150
    N, d1, d2 = (2, 3, 2) if small else (4, 6, 4)
    bite_seeds = range(2) if small else range(4)
    bite_dims = ((2, 3, 2),) if small else ((2, 3, 2), (4, 6, 4))
    bite_T = 40 if small else 60
    worst = {"literal": -np.inf, "aligned": -np.inf}
    reported = {"literal_Lmax": -np.inf, "aligned_Lmax": -np.inf,
                "eq24_unsquared_literal": -np.inf}
    per, runs, diverged = {}, 0, 0
    tight = {"slack": np.inf}  # the (run, T) where the aligned bound is closest to the lhs
    vacuous, points = 0, 0
    ev = Evidence(TERMS)
    paper = {}
    for s in seeds:
        inst = gen_Q(s, N=N, d1=d1, d2=d2)
        c = constants(inst)
        rng = np.random.default_rng([s, 6])
        ptr = fedmm_run(inst, PAPER_MU, np.random.default_rng([s, 6, 2]), None, T + 1,
                        mu2=PAPER_MU)
        if ptr is not None:
            pg = descent_gaps(inst, ptr, PAPER_MU, c["L_Phi"], c["L12"])
            paper[f"seed {s}"] = {k: float(pg[k].max()) for k in ("literal", "aligned")}
        else:
            paper[f"seed {s}"] = {"diverged": True}
        for f in MU_FACTORS:
            mu = f * c["L_Phi"]
            tr = fedmm_run(inst, mu, rng, ev, T + 1)
            if tr is None:
                diverged += 1
                per[f"seed {s} mu={f}L_Phi"] = {"diverged": True}
                continue
            runs += 1
            g = descent_gaps(inst, tr, mu, c["L_Phi"], c["L12"])
            _term_activity(ev, inst, tr, mu, c)
            gm = descent_gaps(inst, tr, mu, max(c["L_Phi"], c["L_g"]), c["L12"])
            row = {"mu": mu}
            for k in worst:
                row[f"max_gap_{k}"] = float(g[k].max())
                row[f"argmax_T_{k}"] = int(np.argmax(g[k])) + 1
                worst[k] = max(worst[k], float(g[k].max()))
                reported[f"{k}_Lmax"] = max(reported[f"{k}_Lmax"], float(gm[k].max()))
            reported["eq24_unsquared_literal"] = max(reported["eq24_unsquared_literal"],
                                                    float(g["eq24_unsquared_literal"].max()))
            row["max_gap_eq24_unsquared_literal"] = float(g["eq24_unsquared_literal"].max())
            slack = g["rhs_aligned"] - g["lhs"]
            k = int(np.argmin(slack))
            vacuous += int((g["rhs_aligned"] >= 0).sum())
            points += slack.size
            row["min_slack_aligned"] = float(slack[k])
            if slack[k] < tight["slack"]:
                tight = {"slack": float(slack[k]), "T": k + 1, "seed": s, "mu / L_Phi": f,
                         "lhs": float(g["lhs"][k]), "rhs": float(g["rhs_aligned"][k])}
            per[f"seed {s} mu={f}L_Phi"] = row
    bite = _bite_runs(bite_seeds, bite_dims, bite_T, ev)
    ok = {k: r for k, r in bite.items() if r is not None}
    bite_diverged = len(bite) - len(ok)
    worst_bite = {conv: max((r[f"max_gap_{conv}"] for r in ok.values()), default=-np.inf)
                  for conv in ("literal", "aligned")}
    n_bite = sum(r["bite_points"] for r in ok.values())
    tightest = min(((r["tightest_ratio"], k) for k, r in ok.items()
                    if r["tightest_ratio"] is not None), default=(None, None))
    margins = {f"spec_grid_{k}": TOL - v for k, v in worst.items()}
    margins.update({f"bite_{k}": TOL - v for k, v in worst_bite.items()})
    for k, v in margins.items():
        ev.criterion(f"Lemma 16 (131), {k.replace('_', ' ')}", v / TOL)
    margin = ev.worst()
    bad = {k: v for k, v in paper.items() if not v.get("diverged")
           and max(v.values()) > TOL}
    paper_finding = (("at the paper's mu = 1 (both blocks) (131) fails: " + "; ".join(
        f"{k}: max lhs - rhs {max(v.values()):.3g}" for k, v in bad.items())) if bad else None)
    closest = {"run": tightest[1], **(ok[tightest[1]] if tightest[1] else {})}
    from_zero = {k: max(r["from_t0_max_gap_literal"], r["from_t0_max_gap_aligned"])
                 for k, r in ok.items()
                 if max(r["from_t0_max_gap_literal"], r["from_t0_max_gap_aligned"]) > TOL}
    all_points = 2 * points + sum(r["points"] for r in ok.values())
    finding = (f"on the spec's grid the right-hand side is >= 0 at {vacuous} of {points} "
               f"points (vacuous there); on the bite runs (from round {BITE_T0}) rhs < 0 at "
               f"{n_bite} of {all_points - 2 * points} points and (131) holds with actual / "
               f"guaranteed decrease >= {tightest[0]:.3g}; telescoped from round 0 it is "
               f"violated on {len(from_zero)} of {len(ok)} bite runs (Props 3/4 false at t = 0)"
               if tightest[0] is not None else None)
    return CheckResult(
        name="fedmm.lemma3_descent", claim="Lemma 3 / Lemma 16, descent of Phi(omega0^t)",
        paper="004 fedmm", equation="Lemma 3 (24), Lemma 16 (131)", instances=runs + len(ok),
        worst_margin=float(margin),
        ground_truth={"solver": "closed form", "phi": "(27) with psi* of (26)",
                      "constants": "L_Phi (Hessian of Phi_i), L12 "
                                   "(docs/decisions.md#fedmm-theory-instances)"},
        passed=bool(margin >= 0 and runs > 0 and ok),
        paper_setting={"mu1 = mu2": PAPER_MU, **{k: v for k, v in paper.items()}},
        paper_finding=paper_finding, **ev.fields(),
        measured=closest.get("lhs"), bound=closest.get("rhs"), looseness=tightest[0],
        closest=closest, finding=finding,
        nontrivial=(n_bite / all_points) if all_points else None,
        diverged=bool(runs == 0 and not ok),
        details={"tolerance": TOL, "margins": margins, "max_gap_over_T": worst,
                 "max_gap_bite_runs": worst_bite,
                 "vacuous_points": vacuous, "points": points, "bite_points": n_bite,
                 "spec_grid_tightest_aligned": tight,
                 "bite_runs": bite, "bite_runs_diverged": bite_diverged,
                 "bite_runs_violated_from_round_0": from_zero,
                 "reported_max_gap_over_T": reported, "per_run": per, "runs": runs,
                 "diverged": diverged,
                 "grid": {"seeds": list(seeds), "mu1 (x L_Phi), mu2 = 1.5 mu1": list(MU_FACTORS),
                          "T": f"1..{T}", "N": N, "d1": d1, "d2": d2,
                          "init": "omega0^0, psi0^0 ~ 3 N(0, I), default_rng([seed, 6])"},
                 "bite_grid": {"seeds": list(bite_seeds), "(N, d1, d2)": list(bite_dims),
                               "mu1 (x L_Phi), mu2 = 1.5 mu1": list(BITE_MU),
                               "T": f"1..{bite_T} from round {BITE_T0}",
                               "init": "omega0^0 ~ 3 N(0, I) (default_rng([seed, 6, 1])), "
                                       "psi0^0 = psi*(omega0^0)"}})
