"""Paper 003, Algorithm 2's rate claims between their tight worst case and the paper's bound.

Instance: the constrfl rate check's own (the same seed: QP-ball, d = 6, n = 3, beta = 2,
sigma = 1/((n+1) beta) = 0.125, ``mu^k = mu* + 0.5``), rho in {0.3, 1, 3}. Per rho the package's
Algorithm 2 runs with exact inner solves from ``w~0 = w^k``; ``L`` is Lemma B.2's constant on the
ball around ``w~*`` holding every iterate (:func:`theory.constrfl.pep_reference.lipschitz_on_ball`),
and the run's points are measured to lie in ``F_{sigma, L}`` (interpolation conditions).

* ``constrfl.pep_lemma_b3_factor`` — Lemma B.3 (64)-(65) / Theorem 4.2 with exact solves:
  ``S_{t+1} <= S_t / (1 + r)``. sampled = max_t S_{t+1}/S_t of the run (rounds with
  ``S_t >= 1e-12 S_0``), tight = the one-round PEP over reachable states
  (:func:`theory.constrfl.pep_admm.admm_pep`), paper = ``1/(1+r)``. Also: the worst 1-D
  quadratic of the class meets the PEP (a lower bound, to ``1e-6``); its worst state, replayed
  through the package's own rounds, gives the tight factor to ``REPLAY_TOL (1 - tight)`` (the
  criterion that fails on a wrong package round); random quadratics (d = 1, 2) of the class
  stay below the tight value; once (rho = 3) the two-round worst case is the square of the
  one-round factor (the one-round factor is the per-round rate).
* ``constrfl.pep_lemma42_radius`` — Lemma 4.2 / (58) with exact solves:
  ``||v^{t+1} - w~*||^2 <= (2/sigma) S_t`` for ``v = w, u_i``. sampled = max_t of the ratio on
  the run, tight = the PEP (max over the w and u metrics), paper = ``2/sigma``.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from theory.constrfl.pep_admm import (
    admm_pep,
    quadratic_ratio,
    quadratic_worst,
    quadratic_worst_state,
)
from theory.constrfl.pep_reference import lipschitz_on_ball
from theory.constrfl.pep_runs import (
    admm_subproblem,
    in_class_margin,
    potentials,
    quadratic_problem,
    replay,
    run_until,
)
from theory.core.pep import GAP_BOUND, RateRow, pep_evidence, status_counts
from theory.evidence import Term
from theory.registry import register
from theory.result import CheckResult

__all__ = ["REPLAY_TOL", "inner_runs", "inner_subproblem", "replay_margin"]

RHOS = (0.3, 1.0, 3.0)
# the rho of the rows: the statements hold for every rho > 0 and every member of the class
PAPER_SETTING = {"rho": list(RHOS), "note": "Lemma B.3 and Lemma 4.2 hold for every rho > 0 "
                 "with exact inner solves; the rows cover small, unit and large rho"}
B3_TERMS = (
    Term("rho in r = sigma rho / (rho^2 + 2 L^2)", "rho^2 / (rho^2 + 2 L^2)", 1e-9),
    Term("L in r (the class's curvature)", "2 L^2 / (rho^2 + 2 L^2)", 1e-9),
    Term("S_t decreases on the package's run", "1 - S_{t+1}/S_t at its worst round", 0.0),
)
R42_TERMS = (
    Term("v = w (the server's iterate)", "||w^{t+1} - w~*||^2 / S_t, worst round", 0.0),
    Term("v = u_i (the clients' iterates)", "max_i ||u_i^{t+1} - w~*||^2 / S_t, worst round",
         0.0),
)
SEED_NAME = "constrfl.admm_linear_rate"   # the rate check's instance
REPLAY_TOL = 1e-3       # |replay - tight| <= REPLAY_TOL (1 - tight): 0.1 % of the decay per round
MULTI_TOL = 1e-6        # |worst two-round value - factor^2| relative
S_FLOOR = 1e-12         # rounds with S_t >= S_FLOOR S_0 enter the sampled worst


@lru_cache(maxsize=4)
def inner_subproblem(seed: int) -> tuple:
    """The rate check's subproblem and its generator (for the L samples): ``(sub, status, rng)``."""
    rng = np.random.default_rng(seed)
    sub, status = admm_subproblem(rng)
    return sub, status, rng


@lru_cache(maxsize=4)
def inner_runs(seed: int, size: str) -> dict:
    """Per rho: the package's exact run, its potentials and the L of its ball."""
    sub, status, _ = inner_subproblem(seed)
    rng = np.random.default_rng([seed, 2])
    rounds = 150 if size == "small" else 400
    out = {"sub": sub, "kkt_status": status, "runs": {}}
    for rho in RHOS:
        w0 = sub.center
        admm = run_until(sub, rho, w0, S_FLOOR / 10, rounds)
        S = potentials(sub, admm, rho, w0)
        ok = [int(t) for t in np.flatnonzero(S[:-1] >= S_FLOOR * S[0])]
        pts = [w0] + [h["w"] for h in admm.history] + [u for h in admm.history
                                                        for u in h["U"][0]]
        radius = float(max(np.linalg.norm(p - sub.w_star) for p in pts))
        L = lipschitz_on_ball(sub.parties, sub.w_star, radius, rng, 120)
        out["runs"][rho] = {"admm": admm, "S": S, "ok": ok, "L": L, "radius": radius,
                            "in_class": in_class_margin(sub, admm, w0, L, ok)}
    return out


def replay_margin(sub_h: np.ndarray, rho: float, tight: float, rng, rounds: int = 5,
                  metric: str = "potential"):
    """The replay criterion: the worst state of the worst quadratic ``h`` for ``metric`` run
    through the package's rounds; ``(margin, values)``. Potential: every round's
    ``S_{t+1}/S_t``, margin ``1 - max_t |ratio_t - tight| / (REPLAY_TOL (1 - tight))``;
    ``"w"`` / ``"u"``: the first round's ``||v^1 - w~*||^2 / S_0``, margin
    ``1 - |value - tight| / (REPLAY_TOL tight)``.
    """
    inst = quadratic_problem(sub_h, rng, beta=2.0)
    _, du = quadratic_worst_state(sub_h[0], list(sub_h[1:]), rho, metric)
    out = replay(inst, rho, du, rounds if metric == "potential" else 1)
    if metric == "potential":
        values = out["S"][1:] / out["S"][:-1]
        err = float(np.max(np.abs(values - tight)))
        return 1.0 - err / (REPLAY_TOL * (1.0 - tight)), values
    values = out[metric][:1] / out["S"][0]
    return 1.0 - float(abs(values[0] - tight)) / (REPLAY_TOL * tight), values


def _random_members(n, sigma, L, rho, rng, count: int) -> float:
    """Max one-round factor over random quadratics of F_{sigma, L} (d = 1 and 2)."""
    best = 0.0
    for k in range(count):
        d = 1 + k % 2
        hs = []
        for _ in range(n + 1):
            Q = np.linalg.qr(rng.standard_normal((d, d)))[0]
            ev = sigma + (L - sigma) * rng.uniform(size=d) ** rng.choice([0.2, 1.0, 5.0])
            hs.append((Q * ev) @ Q.T)
        best = max(best, quadratic_ratio(hs[0], hs[1:], rho))
    return best


def _verdict_text(row: RateRow, in_class: float) -> str | None:
    if row.margin_sampled < 0:
        who = ("the instance is outside the class (an interpolation condition of F_{sigma,L} "
               "fails on the run's points)" if in_class < 0 else
               "the package's round is wrong (the run's points are in the class)")
        return f"{row.claim} at {row.setting}: sampled {row.sampled:.6g} > tight " \
               f"{row.tight:.6g}: {who}"
    if row.margin_paper < 0:
        return f"{row.claim} at {row.setting}: tight {row.tight:.6g} > paper " \
               f"{row.paper:.6g}: the bound is violated by the SDP's worst case"
    return None


@register("constrfl.pep_lemma_b3_factor", paper="003 constrfl", seed_name=SEED_NAME,
          claim="Lemma B.3 / Theorem 4.2, exact solves: per-round factor of S_t: sampled <= "
                "tight (PEP over F_{sigma,L}) <= paper 1/(1+r)")
def check_b3(seed: int, size: str) -> CheckResult:
    data = inner_runs(seed, size)
    sub = data["sub"]
    n, sigma = sub.n, sub.sigma
    rng = np.random.default_rng([seed, 1])
    rows, info, m, solves = [], {}, {}, []
    activity: dict[str, list[float]] = {t.name: [] for t in B3_TERMS}
    for rho in RHOS:
        run = data["runs"][rho]
        S, ok, L = run["S"], run["ok"], run["L"]
        sampled = float(np.max(S[1:][ok] / S[:-1][ok]))
        activity[B3_TERMS[0].name].append(rho ** 2 / (rho ** 2 + 2 * L ** 2))
        activity[B3_TERMS[1].name].append(2 * L ** 2 / (rho ** 2 + 2 * L ** 2))
        activity[B3_TERMS[2].name].append(1.0 - sampled)
        sol = admm_pep(n, sigma, L, rho)
        generic = admm_pep(n, sigma, L, rho, start="any")
        r = sigma * rho / (rho ** 2 + 2 * L ** 2)
        row = RateRow("Lemma B.3 (64)-(65)", f"rho={rho:g}, L={L:.4g}", "S_{t+1}/S_t", "factor",
                      sampled, sol.value, 1.0 / (1.0 + r), tight_tol=GAP_BOUND,
                      sdp_seconds=sol.seconds, sdp_gap=abs(sol.gap))
        rows.append(row)
        solves += [sol, generic]
        q_val, h = quadratic_worst(n, sigma, L, rho)
        rep, ratios = replay_margin(h, rho, sol.value, rng)
        members = _random_members(n, sigma, L, rho, rng, 200 if size == "default" else 60)
        m[rho] = {"sampled<=tight": row.margin_sampled, "tight<=paper": row.margin_paper,
                  "in_class": run["in_class"], "replay": rep,
                  "quadratic_meets_tight": 1.0 - abs(sol.value - q_val) / (1e-6 * sol.value),
                  "random_members<=tight": (sol.value * (1 + GAP_BOUND) - members) / sol.value}
        info[rho] = {"L": L, "ball_radius": run["radius"], "rounds_used": len(ok),
                     "worst_round": int(ok[int(np.argmax(S[1:][ok] / S[:-1][ok]))]),
                     "pep": sol.__dict__, "any_state_factor": generic.value,
                     "worst_quadratic_h": h.tolist(),
                     "worst_quadratic_value": q_val, "replay_ratios": ratios.tolist(),
                     "random_members_max": members}
    # once: two rounds from a reachable state = factor^2 (the one-round factor is the rate)
    rho, L = 3.0, data["runs"][3.0]["L"]
    one = admm_pep(n, sigma, L, rho)
    two = admm_pep(n, sigma, L, rho, steps=2)
    line1 = admm_pep(n, sigma, L, rho, steps=2, start="consensus")
    solves += [one, two, line1]
    multi = 1.0 - abs(two.value - one.value ** 2) / (MULTI_TOL * one.value ** 2)
    margins = {f"rho={k}": v for k, v in m.items()}
    fields = pep_evidence({**margins, "two rounds = factor^2": multi}, B3_TERMS, activity,
                          PAPER_SETTING)
    worst = min(fields["criteria"].values())
    findings = [t for row, rho in zip(rows, RHOS, strict=True)
                if (t := _verdict_text(row, m[rho]["in_class"]))]
    close = min(rows, key=lambda r: r.instance_easiness)
    return CheckResult(
        name="constrfl.pep_lemma_b3_factor",
        claim="S_{t+1} <= S_t/(1+r) with exact solves (Lemma B.3's recursion): the package's "
              "worst round <= the exact worst case over F_{sigma,L} (PEP) <= 1/(1+r); the worst "
              "quadratic's state replayed through the package's round gives the PEP's factor; "
              "two rounds' worst case = factor^2",
        paper="003 constrfl", equation="Lemma B.3 (63)-(65), Theorem 4.2",
        instances=len(RHOS), worst_margin=float(worst),
        ground_truth={"solver": "CLARABEL via cvxpy (PEPit)",
                      "statuses": status_counts(solves, [data["kkt_status"]])},
        passed=bool(worst >= 0 and all(sol.ok for sol in solves)
                    and data["kkt_status"] == "optimal"),
        measured=close.sampled, bound=close.paper, exact=close.tight,
        looseness=close.analysis_slack, nontrivial=1.0,
        closest={"setting": close.setting, "sampled": close.sampled, "tight": close.tight,
                 "paper": close.paper, "analysis_slack_rounds": close.analysis_slack,
                 "instance_easiness_rounds": close.instance_easiness},
        finding="; ".join(findings) or None,
        details={"pep_rows": [r.as_dict() for r in rows], "criteria_margins": margins,
                 "per_rho": info,
                 "two_rounds": {"value": two.value, "factor_squared": one.value ** 2,
                                "margin": multi, "seconds": two.seconds,
                                "from_line1_consensus": line1.value},
                 "tolerances": {"replay": REPLAY_TOL, "multi_round": MULTI_TOL,
                                "gap": GAP_BOUND, "S_floor": S_FLOOR}}, **fields)


@register("constrfl.pep_lemma42_radius", paper="003 constrfl", seed_name=SEED_NAME,
          claim="Lemma 4.2 / (58), exact solves: ||v^{t+1} - w~*||^2 / S_t: sampled <= tight "
                "(PEP) <= paper 2/sigma")
def check_42(seed: int, size: str) -> CheckResult:
    data = inner_runs(seed, size)
    sub = data["sub"]
    n, sigma = sub.n, sub.sigma
    rng = np.random.default_rng([seed, 42])
    rows, margins, solves, info = [], {}, [], {}
    activity: dict[str, list[float]] = {t.name: [] for t in R42_TERMS}
    for rho in RHOS:
        run = data["runs"][rho]
        S, ok, L = run["S"], run["ok"], run["L"]
        hist = run["admm"].history
        on_w = max(float(np.sum((hist[t]["w"] - sub.w_star) ** 2)) / S[t] for t in ok)
        on_u = max(float(np.max(np.sum((hist[t]["U"][0] - sub.w_star) ** 2, axis=1))) / S[t]
                   for t in ok)
        sampled = max(on_w, on_u)
        activity[R42_TERMS[0].name].append(on_w)
        activity[R42_TERMS[1].name].append(on_u)
        sols = {v: admm_pep(n, sigma, L, rho, v) for v in ("w", "u")}
        solves += list(sols.values())
        row = RateRow("Lemma 4.2 / (58)", f"rho={rho:g}, L={L:.4g}", "||v - w~*||^2 / S_t",
                      "constant", sampled, max(sol.value for sol in sols.values()),
                      2.0 / sigma, tight_tol=GAP_BOUND,
                      sdp_seconds=sum(sol.seconds for sol in sols.values()),
                      sdp_gap=max(abs(sol.gap) for sol in sols.values()))
        rows.append(row)
        margins[f"rho={rho}"] = {"sampled<=tight": row.margin_sampled,
                                 "tight<=paper": row.margin_paper, "in_class": run["in_class"]}
        # the server's metric: 1-D quadratics attain it; their worst state, replayed through
        # the package's round, gives it. The client's: its worst case is not a quadratic
        # (quadratics of d <= 3 reach about 57 % of it), so it is reported, not replayed.
        q_w, h_w = quadratic_worst(n, sigma, L, rho, "w")
        rep, _ = replay_margin(h_w, rho, sols["w"].value, rng, metric="w")
        margins[f"rho={rho}"]["replay_w"] = rep
        margins[f"rho={rho}"]["quadratic_meets_tight_w"] = \
            1.0 - abs(sols["w"].value - q_w) / (1e-6 * sols["w"].value)
        info[f"rho={rho}"] = {"tight_w": sols["w"].value, "tight_u": sols["u"].value,
                              "best_1d_quadratic_u": quadratic_worst(n, sigma, L, rho, "u")[0]}
    fields = pep_evidence(margins, R42_TERMS, activity, PAPER_SETTING)
    worst = min(fields["criteria"].values())
    close = min(rows, key=lambda r: r.instance_easiness)
    findings = [t for row, rho in zip(rows, RHOS, strict=True)
                if (t := _verdict_text(row, margins[f"rho={rho}"]["in_class"]))]
    return CheckResult(
        name="constrfl.pep_lemma42_radius",
        claim="sigma/2 ||v^{t+1} - w~*||^2 <= S_t for v = w, u_i (58), exact solves: the "
              "package's worst round <= the PEP's worst case <= 2/sigma",
        paper="003 constrfl", equation="Lemma 4.2 (29), (58)", instances=len(RHOS),
        worst_margin=float(worst),
        ground_truth={"solver": "CLARABEL via cvxpy (PEPit)",
                      "statuses": status_counts(solves)},
        passed=bool(worst >= 0 and all(sol.ok for sol in solves)), measured=close.sampled,
        bound=close.paper,
        exact=close.tight, looseness=close.analysis_slack, nontrivial=1.0,
        closest={"setting": close.setting, "sampled": close.sampled, "tight": close.tight,
                 "paper": close.paper},
        finding="; ".join(findings) or None,
        details={"pep_rows": [r.as_dict() for r in rows], "criteria_margins": margins,
                 "per_rho": info, "tolerances": {"replay": REPLAY_TOL, "gap": GAP_BOUND}},
        **fields)
