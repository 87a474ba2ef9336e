"""Performance estimation (PEP) shared by the papers' rate checks: solving, rows, margins, table.

A deterministic convex rate claim is written as a PEP with ``pepit``: the method as oracle
calls on functions or operators of the class the theorem assumes, the claim's quantity as the
performance metric, its normalisation as the initial condition. The PEP's value is the *tight*
worst case over that class; a rate check reports three numbers of one quantity::

    sampled (the package's run)  <=  tight (the PEP)  <=  paper (the theorem's bound)

with two ratios: *analysis slack* (how loose the proof is against the exact worst case) and
*instance easiness* (how far the sampled instance is from that worst case). For a per-round
factor in (0, 1) both ratios are in rounds per decade (``log tight / log paper`` and
``log sampled / log tight``); for a constant or an iteration count they are plain quotients.

Solver: cvxpy with Clarabel (the project's solver), status ``optimal`` only (an inaccurate solve
fails the check), the duality gap (PEPit's reconstruction of the dual bound minus the primal
value) reported and held against :data:`GAP_BOUND`.
"""

from __future__ import annotations

import contextlib
import io
import math
import time
import warnings
from dataclasses import asdict, dataclass

__all__ = ["GAP_BOUND", "SOLVER_SETTINGS", "PEPSolution", "RateRow", "not_applicable_lines",
           "pep_evidence", "pep_rows", "pep_table_lines", "pep_text_table", "solve_pep",
           "status_counts"]

# Clarabel settings, tried in order until one reaches "optimal": the default iteration cap and
# regularisation stop some of these SDPs (condition number L/sigma ~ 2e3, or the block
# partitions' many equalities) at "optimal_inaccurate"
SOLVER_SETTINGS = ({"max_iter": 500, "static_regularization_constant": 1e-7},
                   {"max_iter": 1000, "equilibrate_max_iter": 50,
                    "static_regularization_constant": 1e-7},
                   {"max_iter": 500, "static_regularization_constant": 1e-6})
GAP_BOUND = 1e-6   # |dual bound - primal value| / max(1, |value|) accepted as solved


@dataclass(frozen=True)
class PEPSolution:
    """One solved PEP: ``value`` is the dual bound (an upper bound on the worst case, the
    number used), ``primal`` the primal value (a lower bound, attained by the Gram matrix),
    ``gap = (value - primal) / max(1, |value|)``, ``status`` cvxpy's, ``gram`` the Gram size,
    ``attempt`` the index of the :data:`SOLVER_SETTINGS` entry that gave it.
    """

    value: float
    primal: float
    gap: float
    status: str
    seconds: float
    gram: int
    attempt: int = 0

    @property
    def ok(self) -> bool:
        return self.status == "optimal" and abs(self.gap) <= GAP_BOUND


def _solve_once(problem, settings: dict) -> tuple[float | None, str]:
    import cvxpy as cp

    try:
        with contextlib.redirect_stdout(io.StringIO()):   # PEPit prints even at verbose=0
            dual = problem.solve(verbose=0, solver=cp.CLARABEL, **settings)
    except cp.error.SolverError:
        return None, "solver_error"
    prob = problem.wrapper.prob
    if dual is None or prob.value is None:   # unbounded or infeasible: no worst case
        return None, str(prob.status)
    return float(dual), str(prob.status)


def solve_pep(problem, order: tuple[int, ...] = (0, 1, 2)) -> PEPSolution:
    """Solve a ``PEPit.PEP`` with Clarabel, trying the :data:`SOLVER_SETTINGS` entries in
    ``order`` until the status is ``optimal``; never raises on a bad status (the caller fails
    the check on ``not solution.ok``).
    """
    from PEPit import Point

    start = time.perf_counter()
    for attempt in order:
        settings = SOLVER_SETTINGS[attempt]
        with warnings.catch_warnings():   # an inaccurate solve is reported by its status
            warnings.simplefilter("ignore", UserWarning)
            dual, status = _solve_once(problem, settings)
        if status == "optimal" and dual is not None:
            break
    seconds = time.perf_counter() - start
    if dual is None:
        return PEPSolution(math.nan, math.nan, math.inf, status, seconds, Point.counter,
                           attempt)
    primal = float(problem.wrapper.prob.value)
    return PEPSolution(dual, primal, (dual - primal) / max(1.0, abs(dual)), status, seconds,
                       int(problem.G_value.shape[0]), attempt)


def status_counts(solutions, others=()) -> dict[str, int]:
    """``{status: count}`` over PEP solutions (a solve whose duality gap exceeds
    :data:`GAP_BOUND` counts as ``"gap_exceeded"``) and other solver statuses.
    """
    out: dict[str, int] = {}
    for s in solutions:
        key = s.status if s.status != "optimal" or s.ok else "gap_exceeded"
        out[key] = out.get(key, 0) + 1
    for st in others:
        out[st] = out.get(st, 0) + 1
    return out


@dataclass(frozen=True)
class RateRow:
    """One quantity of one claim at one setting: ``sampled <= tight <= paper``.

    ``kind``: ``"factor"`` (a per-round contraction in (0, 1): ratios in rounds per decade),
    ``"constant"`` or ``"count"`` (plain quotients), ``"decrease"`` (negative values
    ``-iota``: a guaranteed decrease per unit, the ratios taken on ``iota``, none where the
    paper's ``iota <= 0`` guarantees nothing). ``tight_tol``: the relative accuracy the tight
    value carries (the SDP's), granted to ``sampled <= tight``.
    """

    claim: str
    setting: str
    quantity: str
    kind: str
    sampled: float
    tight: float
    paper: float
    tight_tol: float = 1e-6
    sdp_seconds: float = 0.0
    sdp_gap: float = 0.0      # the largest relative duality gap of the SDPs behind ``tight``

    def _ratio(self, big: float, small: float) -> float:
        if self.kind == "decrease":   # -iota values: the ratio of the guaranteed decreases
            return small / big if big < 0 and small < 0 else math.nan
        if self.kind == "factor":
            if not 0.0 < big < 1.0 or not 0.0 < small < 1.0:
                return math.nan
            return math.log(small) / math.log(big)
        return big / small if small > 0 else math.inf

    @property
    def analysis_slack(self) -> float:
        """Paper / tight (rounds per decade for a factor: ``log tight / log paper``)."""
        return self._ratio(self.paper, self.tight)

    @property
    def instance_easiness(self) -> float:
        """Tight / sampled (rounds per decade for a factor: ``log sampled / log tight``)."""
        return self._ratio(self.tight, self.sampled)

    @property
    def margin_sampled(self) -> float:
        """``>= 0`` iff ``sampled <= tight + tight_tol |tight|``, relative to ``|tight|``."""
        return (self.tight + self.tight_tol * abs(self.tight) - self.sampled) / abs(self.tight)

    @property
    def margin_paper(self) -> float:
        """``>= 0`` iff ``tight <= paper``, relative to ``paper``."""
        return (self.paper - self.tight) / abs(self.paper)

    def as_dict(self) -> dict:
        return {**asdict(self), "analysis_slack": self.analysis_slack,
                "instance_easiness": self.instance_easiness,
                "margin_sampled": self.margin_sampled, "margin_paper": self.margin_paper}


def _fmt(v, kind: str = "") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, str):
        return v
    if kind == "factor" and 0.999 < v < 1.0:   # 0.9999997 is not 1: show its distance to 1
        return f"1 - {1.0 - v:.3g}"
    if abs(v) >= 1e5 or abs(v) < 1e-3:
        return f"{v:.4g}"
    return f"{v:.6g}" if abs(v) < 10 else f"{v:.5g}"


PEP_HEADER = ["check", "claim", "setting", "quantity", "sampled", "tight", "paper",
              "analysis slack", "instance easiness", "SDP s", "SDP gap"]


def pep_rows(results) -> list[list[str]]:
    """The table rows of every result whose ``details["pep_rows"]`` holds :class:`RateRow`
    dictionaries (as written to theory.json).
    """
    out = []
    for r in results:
        for row in (r.details or {}).get("pep_rows", []):
            out.append([r.name, row["claim"], row["setting"], row["quantity"],
                        _fmt(float(row["sampled"]), row["kind"]),
                        _fmt(float(row["tight"]), row["kind"]),
                        _fmt(float(row["paper"]), row["kind"]), _fmt(float(row["analysis_slack"])),
                        _fmt(float(row["instance_easiness"])),
                        f"{float(row['sdp_seconds']):.2f}",
                        f"{float(row.get('sdp_gap', 0.0)):.1e}"])
    return out


def pep_text_table(results) -> str:
    """The PEP rows as a fixed-width table for the terminal ("" when there are none)."""
    rows = pep_rows(results)
    if not rows:
        return ""
    rows = [PEP_HEADER[1:], *[r[1:] for r in rows]]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "performance estimation (sampled <= tight <= paper):\n" + "\n".join(lines)


def pep_table_lines(results) -> list[str]:
    """The "Performance estimation" section of theory.md (empty when no check has rows)."""
    rows = pep_rows(results)
    if not rows:
        return []
    out = ["## Performance estimation: sampled <= tight <= paper", "",
           "Each row is one quantity of a rate claim: *sampled* is the worst the package's run "
           "did on the check's instance, *tight* the exact worst case over the class the "
           "theorem assumes (a semidefinite program, solved with Clarabel), *paper* the "
           "theorem's bound. analysis slack = paper / tight, instance easiness = tight / "
           "sampled; for a per-round factor both are in rounds per decade (log ratio), for a "
           "guaranteed decrease (negative values) they are the decreases' ratios. SDP gap: "
           f"relative duality gap (accepted up to {GAP_BOUND:g}); a count's tight value is the "
           "paper's composition at the tight constants. "
           "Classes, inexactness models and measures: docs/theory-pep.md.", "",
           "| " + " | ".join(PEP_HEADER) + " |", "|" + "|".join("---" for _ in PEP_HEADER) + "|"]
    # a cell's own "|" (the norms of a quantity) would split the markdown row
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return out + [""] + not_applicable_lines() + [""]


# Named claims of the other papers where no PEP is computed, and why (theory.md says so).
NOT_APPLICABLE = {
    "fairvfl Theorem 2 (convergence of the fair VFL minimax method)":
        "nonconvex-concave minimax: the stationarity measure it bounds is over a primal-dual "
        "method whose dual step depends on the fairness constraint's values, with no finite "
        "interpolation description of the pair (its primal round alone is Lemma 1, computed)",
    "fairvfl Theorem 1 (security)": "not a rate: an invariance of what the server observes",
    "fairvfl Lemmas 2-3 (dual progress, Lyapunov decrease)":
        "they couple the primal round with a projected dual step on a max over the fairness "
        "constraints and a regulariser schedule c_t: the statement mixes the iterates of "
        "several rounds with the schedule, not one method on one function class",
    "relfair convergence of the reweighted fair objective":
        "variable weights: the objective changes every round with weights computed from the "
        "iterate, so no fixed function class holds the method's oracle calls",
    "fedmm Theorem 1 and Lemmas 3-8 (federated minimax with local steps)":
        "stochastic local steps: the claims bound expectations over sampled gradients; a PEP "
        "is a worst case over deterministic oracles (and the objectives are nonconvex)",
    "constrfl Lemma 4.1 / B.2 (local Lipschitz constants)":
        "not a rate: an existence statement about the constants the rate claims then use",
}


def not_applicable_lines() -> list[str]:
    out = ["### Where no PEP is computed", ""]
    out += [f"- {claim}: {why}." for claim, why in NOT_APPLICABLE.items()]
    return out


def pep_evidence(criteria: dict, terms, activity: dict, paper_setting: dict) -> dict:
    """The :class:`~theory.result.CheckResult` fields of a rate check's evidence: its criteria
    (a nested ``{group: {name: margin}}`` is flattened to ``"group: name"``), the terms of its
    statement with the measured quantity of each instance (``activity``: term name -> list of
    values), and the paper's setting. The check's ``worst_margin`` is at most
    ``min(criteria)``: pass ``min(worst, fields["criteria"] values)``.
    """
    from theory.evidence import Evidence

    ev = Evidence(terms)
    for name, values in activity.items():
        for v in values:
            ev.activity(name, v)
    for key, value in criteria.items():
        if isinstance(value, dict):
            for sub, margin in value.items():
                ev.criterion(f"{key}: {sub}", float(margin))
        else:
            ev.criterion(key, float(value))
    return {**ev.fields(), "paper_setting": paper_setting}
