"""Paper 003's iteration counts composed from its rate claims: (74), (48), (83)-(84), each with
the paper's constants and with the tight ones of the PEP checks.

No PEP computes a count directly (it would need one SDP over thousands of rounds); each count
is the paper's own composition, evaluated twice: *paper* as printed (with the sqrt(d)
correction of the infinity-norm tolerances, ``||e||_2 <= sqrt(d) q^t`` and
``dist <= sqrt(d) tau_k``, as the other constrfl checks), *tight* with the rate constant
replaced by its exact worst case: Lemma B.3's ``1/(1+r)`` by the PEP factor ``c(L)`` of
:func:`theory.constrfl.pep_admm.admm_pep` (so ``q_r -> max(q, c)``), Lemma A.3's ``sqrt(2)``
by the largest tight constant ``sqrt(V_K (K+1)) / (r_0 + 2 sum e_k)`` over K in {1, 2, 4}
(:func:`theory.constrfl.pep_ppa.ppa_min_step_pep`). *sampled* is the package's count. The
other constants (b, b_k) stay the paper's, so the tight count is the composition's value at the
tight rate, an upper bound on the worst case only as far as the composition is.

* (74) on the rate check's subproblem (q = 0.3, tau = 1e-8, rho in {0.3, 1, 3}): rounds of
  Algorithm 2 to its stop (23).
* (83) per outer call k and (84) in total, on Algorithm 1 runs (beta = 2, s_bar = 1e-2,
  rho = 1, q = 0.5) to eps; L_k on the ball around ``w_*^k`` holding the call's iterates.
* (48): ``2 K_eps + 1`` outer iterations (Lemma A.3 bounds a minimum over [K, 2K]).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from repro.constrfl.instances import qp_ball
from repro.constrfl.proxal import FedProxAL
from repro.constrfl.start import ProxALInit
from theory.constrfl.pep_admm import admm_pep
from theory.constrfl.pep_inner import RHOS, SEED_NAME, inner_subproblem
from theory.constrfl.pep_outer import BETA, RHO, S_BAR, Q, outer_config
from theory.constrfl.pep_ppa import ppa_min_step_pep
from theory.constrfl.pep_reference import kkt_pair, lipschitz_on_ball, minimise, parties_of
from theory.constrfl.pep_runs import run_admm
from theory.constrfl.schedule import tau
from theory.core.pep import RateRow, pep_evidence, status_counts
from theory.evidence import Term
from theory.registry import register
from theory.result import CheckResult

__all__ = ["b_constant", "rounds_74"]

EPS = {"small": (1e-2,), "default": (1e-2, 1e-3)}
Q74, TAU74 = 0.3, 1e-8


def b_constant(S0: float, n: int, rho: float, sigma: float, L: float, q: float, d: int) -> float:
    """``b`` of App. B.4 with ``||e||_2 <= sqrt(d) q^t`` (every eps^2 term times d)."""
    lead = 2 / math.sqrt(sigma) * n * (L + rho) + math.sqrt(2 * n * rho)
    inner = S0 + d / (1 - q) * ((n + 1) / (2 * sigma) + n * sigma / (rho ** 2 + 2 * L ** 2))
    return lead * (math.sqrt(inner) + math.sqrt(d * (n + 1) / (2 * sigma)))


def rounds_74(tau_: float, n: int, b: float, factor: float) -> float:
    """(74): ``ceil(2 log(tau/(n+1+b)) / log factor) + 1`` (``factor = q_r`` in the paper)."""
    return float(math.ceil(2 * math.log(tau_ / (n + 1 + b)) / math.log(factor)) + 1)


def _s0(parties, w_star, w0, rho) -> float:
    """(73): ``S_0 = sum_i rho/2 ||w~* - w~0||^2
    + 1/(2 rho) ||grad P_i(w~*) - grad P_i(w~0)||^2``.
    """
    return float(sum(rho / 2 * np.sum((w_star - w0) ** 2)
                     + np.sum((p.grad(w_star) - p.grad(w0)) ** 2) / (2 * rho)
                     for p in parties[1:]))


def _paper_qr(q, rho, sigma, L) -> float:
    return max(q, 1.0 / (1.0 + sigma * rho / (rho ** 2 + 2 * L ** 2)))


def _rows_74(seed: int, size: str, statuses: list) -> list[RateRow]:
    sub = inner_subproblem(seed)[0]
    rng = np.random.default_rng([seed, 74])
    n, d, sigma = sub.n, sub.problem.d, sub.sigma
    rows = []
    for rho in RHOS:
        admm = run_admm(sub, rho, sub.center, 2000, q=Q74, tau=TAU74)
        pts = [sub.center] + [h["w"] for h in admm.history] + [u for h in admm.history
                                                               for u in h["U"][0]]
        radius = float(max(np.linalg.norm(p - sub.w_star) for p in pts))
        L = lipschitz_on_ball(sub.parties, sub.w_star, radius, rng, 120)
        sol = admm_pep(n, sigma, L, rho)
        statuses.append(sol)
        b = b_constant(_s0(sub.parties, sub.w_star, sub.center, rho), n, rho, sigma, L, Q74, d)
        rows.append(RateRow("(74) rounds of Algorithm 2", f"rho={rho:g}, q={Q74}, "
                            f"tau={TAU74:g}", "rounds to (23)", "count",
                            float(admm.t if admm.certificate <= TAU74 else math.inf),
                            rounds_74(TAU74, n, b, max(Q74, sol.value)),
                            rounds_74(TAU74, n, b, _paper_qr(Q74, rho, sigma, L)),
                            tight_tol=0.0, sdp_seconds=sol.seconds,
                            sdp_gap=abs(sol.gap)))
    return rows


L_GRID = 1.02   # L is rounded up to a power of 1.02 before its PEP (valid: F_{s,L} in F_{s,L'})


@lru_cache(maxsize=64)
def _factor_on_grid(n: int, sigma: float, exponent: int, rho: float):
    return admm_pep(n, sigma, L_GRID ** exponent, rho)


def _factor(n, sigma, L, rho):
    """The tight factor at ``L`` rounded up to the grid (a class holding ``F_{sigma, L}``)."""
    return _factor_on_grid(n, sigma, math.ceil(math.log(L) / math.log(L_GRID)), rho)


def _stop_index(W: np.ndarray, M: np.ndarray, eps: float) -> int | None:
    """The outer count at which (11) first holds for ``eps`` (the iterates do not depend on
    eps): ``||w^{k+1} - w^k||_inf + beta tau_k <= beta eps`` and
    ``||mu^{k+1} - mu^k||_inf <= beta eps``.
    """
    for k in range(len(W) - 1):
        dw = float(np.max(np.abs(W[k + 1] - W[k])))
        dmu = float(np.max(np.abs(M[k + 1] - M[k])))
        if dw + BETA * tau(S_BAR, k) <= BETA * eps and dmu <= BETA * eps:
            return k + 1
    return None


def _a3_constant(r0: float, d: int, statuses: list) -> float:
    """Lemma A.3's constant at its tight value: max over K in {1, 2, 4} of
    ``sqrt(V_K (K+1)) / (r_0 + 2 sum_{k<=2K} e_k)`` (sqrt(2) in the paper).
    """
    errs = BETA * math.sqrt(d) * np.array([tau(S_BAR, k) for k in range(9)])
    consts = []
    for K in (1, 2, 4):
        sol = ppa_min_step_pep(K, 1.0, errs[:2 * K + 1] / r0, BETA)
        statuses.append(sol)
        consts.append(math.sqrt(sol.value * (K + 1)) * r0 / (r0 + 2 * errs[:2 * K + 1].sum()))
    return max(consts)


def _outer_calls(problem, w0, eps: float, rng, statuses: list) -> dict:
    """One run of the package's Algorithm 1 to ``eps``; per call k: its rounds, T_k of (83)
    at the tight and at the paper's factor, b_k, the factors; the iterates.
    """
    n, d = problem.n, problem.d
    sigma = 1.0 / ((n + 1) * BETA)
    alg = FedProxAL(problem, outer_config(eps, 300), init=ProxALInit(w0),
                    keep_admm_history=True)
    W, M = [alg.state.w.copy()], [np.concatenate([alg.state.mu0.ravel(),
                                                 alg.state.mus[0].ravel()])]
    calls = []
    while not alg.state.stopped and alg.state.k < 300:
        k, wk = alg.state.k, alg.state.w.copy()
        mu_list = [alg.state.mu0.ravel()] + list(alg.state.mus[0])
        alg.step()
        W.append(alg.state.w.copy())
        M.append(np.concatenate([alg.state.mu0.ravel(), alg.state.mus[0].ravel()]))
        parties = parties_of(problem, mu_list[0], mu_list[1:], wk, BETA, sigma)
        ws, _ = minimise(parties, alg.state.w)
        hist = alg.last_admm.history
        pts = np.vstack([wk[None]] + [h["w"][None] for h in hist] + [h["U"][0] for h in hist])
        L = lipschitz_on_ball(parties, ws, float(np.linalg.norm(pts - ws, axis=1).max()),
                              rng, 60)
        b = b_constant(_s0(parties, ws, wk, RHO), n, RHO, sigma, L, Q, d)
        c = _factor(n, sigma, L, RHO)
        statuses.append(c)
        tight, paper = max(Q, c.value), _paper_qr(Q, RHO, sigma, L)
        calls.append({"rounds": alg.state.admm_rounds[-1], "b": b, "tight_factor": tight,
                      "paper_factor": paper, "L": L, "sdp_gap": abs(c.gap),
                      "sdp_seconds": c.seconds,
                      "T_tight": rounds_74(tau(S_BAR, k), n, b, tight),
                      "T_paper": rounds_74(tau(S_BAR, k), n, b, paper)})
    return {"calls": calls, "W": np.array(W), "M": np.array(M), "K": alg.state.k,
            "stopped": alg.state.stopped}


def _outer_rows(seed: int, size: str, statuses: list,
                others: list) -> tuple[list[RateRow], dict]:
    rng = np.random.default_rng([seed, 48])
    problem = qp_ball(rng)
    n, d = problem.n, problem.d
    w_star, mu_star, status = kkt_pair(problem)
    others.append(status)
    g = rng.standard_normal(d)
    w0 = g / np.linalg.norm(g)
    r0 = float(np.linalg.norm(np.concatenate([w0 - w_star] + [m.ravel() for m in mu_star])))
    n_before = len(statuses)
    c_tight = _a3_constant(r0, d, statuses)
    a3_seconds = sum(sol.seconds for sol in statuses[n_before:])
    a3_gap = max(abs(sol.gap) for sol in statuses[n_before:])
    run = _outer_calls(problem, w0, min(EPS[size]), rng, statuses)
    calls = run["calls"]
    rows, extra = [], {"a3_tight_constant": c_tight, "r0": r0,
                       "package_stop_matches_11": None, "eps_without_stop": []}
    for eps in EPS[size]:
        K = _stop_index(run["W"], run["M"], eps)
        if eps == min(EPS[size]):   # the package stopped there itself: same count
            extra["package_stop_matches_11"] = bool(run["stopped"] and K == run["K"])
        if K is None:   # the run ended before (11) held for this eps: a failure
            extra["eps_without_stop"].append(eps)
            continue
        part = calls[:K]
        j = int(np.argmax([c["rounds"] / c["T_tight"] for c in part]))
        rows.append(RateRow("(83) rounds of call k", f"eps={eps:g}, k={j}", "rounds to (23)",
                            "count", float(part[j]["rounds"]), part[j]["T_tight"],
                            part[j]["T_paper"], tight_tol=0.0,
                            sdp_seconds=part[j]["sdp_seconds"], sdp_gap=part[j]["sdp_gap"]))
        bmax = max(c["b"] for c in part)

        def rhs84(factor, K=K, bmax=bmax):
            return float(K * (math.ceil(2 * math.log((n + 1 + bmax) * K ** 2 / S_BAR)
                                        / math.log(1 / factor)) + 1))

        rows.append(RateRow("(84) total rounds", f"eps={eps:g}, K={K}", "sum_k rounds",
                            "count", float(sum(c["rounds"] for c in part)),
                            rhs84(max(c["tight_factor"] for c in part)),
                            rhs84(max(c["paper_factor"] for c in part)), tight_tol=0.0,
                            sdp_gap=max(c["sdp_gap"] for c in part)))

        def count48(const, eps=eps):
            k_eps = (S_BAR + const * (r0 + 4 * math.sqrt(d) * S_BAR * BETA) / BETA) ** 2
            return 2 * k_eps / eps ** 2 + 1

        rows.append(RateRow("(48) outer iterations", f"eps={eps:g}", "K to (11)", "count",
                            float(K), count48(c_tight), count48(math.sqrt(2.0)),
                            tight_tol=0.0, sdp_seconds=a3_seconds, sdp_gap=a3_gap))
    extra["calls"] = calls
    return rows, extra


COUNT_TERMS = (
    Term("rounds of Algorithm 2 ((74), (83), (84))", "the package's count", 0.5),
    Term("outer iterations of Algorithm 1 (48)", "the package's count", 0.5),
)


@register("constrfl.pep_counts_74_48_83_84", paper="003 constrfl", seed_name=SEED_NAME,
          claim="Iteration counts (74), (48), (83)-(84): the package's count <= the paper's "
                "composition at the tight rate constants (PEP) <= the printed composition")
def check_counts(seed: int, size: str) -> CheckResult:
    statuses: list = []   # the PEP solutions
    others: list[str] = []  # the KKT solves' statuses
    outer, extra = _outer_rows(seed, size, statuses, others)
    rows = _rows_74(seed, size, statuses) + outer
    crit = {f"{r.claim} [{r.setting}]": min(r.margin_sampled, r.margin_paper) for r in rows}
    # the stop index computed here from (11) is the package's own at the smallest eps
    crit["package_stop_matches_11"] = 1.0 if extra["package_stop_matches_11"] else -1.0
    crit["every_eps_reaches_11"] = -1.0 if extra["eps_without_stop"] else 1.0
    activity = {COUNT_TERMS[0].name: [r.sampled for r in rows if not r.claim.startswith("(48)")],
                COUNT_TERMS[1].name: [r.sampled for r in rows if r.claim.startswith("(48)")]}
    fields = pep_evidence(crit, COUNT_TERMS, activity,
                          {"beta": BETA, "rho": RHO, "rho of (74)": list(RHOS),
                           "note": "the compositions hold for every setting of the class"})
    worst = min(fields["criteria"].values())
    close = min(rows, key=lambda r: r.instance_easiness)
    return CheckResult(
        name="constrfl.pep_counts_74_48_83_84",
        claim="rounds of Algorithm 2 (74), per call (83) and in total (84), and Algorithm 1's "
              "outer count (48): the package's count <= the composition at the PEP's tight "
              "constants <= the printed composition",
        paper="003 constrfl", equation="(74), (48), (83), (84)", instances=len(rows),
        worst_margin=float(worst),
        ground_truth={"solver": "CLARABEL via cvxpy (PEPit)",
                      "statuses": status_counts(statuses, others)},
        passed=bool(worst >= 0 and all(s.ok for s in statuses)
                    and all(st == "optimal" for st in others)),
        measured=close.sampled, bound=close.paper, exact=close.tight,
        looseness=close.analysis_slack, nontrivial=1.0,
        closest={"claim": close.claim, "setting": close.setting},
        details={"pep_rows": [r.as_dict() for r in rows], "criteria_margins": crit, **extra},
        **fields)
