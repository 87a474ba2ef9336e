"""The verdict rule of the comparison, written once (issue #28): how one reproduced number
(:class:`~repro.engine.experiment.Reproduced`) is judged against one printed number.

:data:`RULE` is the text ``comparison.md`` opens with; :func:`judge` is the rule. Let ``d`` be
|ours - paper| (the paper's corrected value for a documented misprint), ``s`` the sample std of
our runs and ``n`` their number (the converged ones), ``s_p`` the paper's printed std and
``n_p`` the number of runs behind the printed number.

``match``        ``d`` <= the paper's printed std, at least ``printed_units`` units of its last
                 printed digit (half a unit by default); where the paper prints no std, the
                 tolerance the experiment states from its spec (else that printed precision);
``within_noise`` not a match, ``n`` >= 2, our spread not more than 3 x ``s_p``, and
                 ``d`` <= 2 sigma_diff, sigma_diff = sqrt(s^2/n + s_p'^2/n_p) the noise of a
                 difference of two means, with ``s_p'`` = ``s_p`` where the printed std is a std
                 over the paper's runs, else ``s``; ``s`` is always over independent runs
                 (:func:`repro.engine.seedstats.check_over` refuses values pooled over clients
                 or rounds), and with ``n_p`` unknown there is no band;
``deviates``     neither.

Runs that did not converge are left out of ``n``, the mean and ``s``; the row says ``k of N``
(also where runs were lost, ``n_planned``), so no row is judged on a std inflated by them.
Runs that ended by the paper's own protocol but without the certificate its algorithm asks for
(:class:`Certified`: e.g. Algorithm 1's stop (11) after an ADMM call capped at T, issue #31)
stay in the mean, as the paper's runs did, but are never the evidence of a noise band: such a
row is ``match`` or ``deviates``, and says ``k of N runs certified``.
A spread ``s`` more than 3 x ``s_p`` is itself reported in the row (our runs are not the
paper's runs), and such a row is never ``within_noise``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from repro.engine.experiment import Reproduced

__all__ = ["Certified", "DEVIATIONS", "NEEDS_RERUN", "RULE", "RULE_ID", "SPREAD_RATIO", "VERDICTS",
           "half_last_digit", "is_primary", "judge", "match_tolerance", "printed_exponent",
           "shown_verdicts", "sigma_diff"]

DEVIATIONS = "docs/deviations.md"
VERDICTS = ("match", "within_noise", "deviates", "substitute_data", "not_run")
NEEDS_RERUN = "needs_rerun"   # a kept row its committed columns cannot decide (engine.rejudge)


def shown_verdicts(*row_lists: list[dict]) -> tuple[str, ...]:
    """The verdict columns of a counts table: :data:`VERDICTS`, and :data:`NEEDS_RERUN` where
    any of the rows has it (kept rows re-judged from committed columns), never hidden.
    """
    rerun = any(r.get("verdict") == NEEDS_RERUN for rows in row_lists for r in rows)
    return (*VERDICTS, NEEDS_RERUN) if rerun else VERDICTS
@dataclass(frozen=True)
class Certified(Reproduced):
    """A :class:`~repro.engine.experiment.Reproduced` whose runs may end uncertified by the
    paper's protocol itself (issue #31): ``certified`` holds one boolean per value. Every run
    enters the mean (the printed number comes from the same protocol), but a row with an
    uncertified run is never ``within_noise`` (its spread is no evidence of noise around a
    converged value) and says how many runs were certified.

    Defined here, in the comparison, not in :mod:`repro.engine.experiment`: that module is in
    every cell's code identity, and how a row is judged is no part of what a cell computes.
    """

    certified: tuple[bool, ...] | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.certified is not None and len(self.certified) != len(self.values):
            raise ValueError(f"{self.table} {dict(self.key)} {self.metric}: "
                             f"{len(self.certified)} certified flags for {len(self.values)} "
                             "values; give one per run")


RULE_ID = "issue-28"   # written in every judged row's ``rule`` column
SPREAD_RATIO = 3.0   # our std above this multiple of the printed std is reported, never noise

RULE = (
    "**Verdict rule** (`repro/engine/verdict.py`, one rule for every row). "
    "`match`: |ours − paper| within the paper's printed std or its printed precision (half a "
    "unit of the last printed digit; one unit where the paper rounded twice), or, where the "
    "paper prints no std, the tolerance its spec states. "
    "`within_noise`: not a match, but |ours − paper| ≤ 2·σ_diff with σ_diff = "
    "√(s²/n_ours + s_p²/n_paper), the noise of a difference of two means: s is the std of the "
    "reported statistic over our independent runs (seeds or trials; never pooled over clients "
    "or rounds), s_p the paper's printed std where it is a std over the paper's runs (else s); "
    "both n are in the row, and with n_paper unknown there is no band. "
    "A run that did not converge or was lost is left out and the row says `k of N`; a run that "
    "ended by the paper's protocol without its certificate (issue #31) counts in the mean but "
    "is never the evidence of a noise band (the row says `k of N runs certified`); our std "
    "more than 3× the paper's printed std is reported in the row, and such a row is not "
    "`within_noise`. `deviates`: neither. `substitute_data`: our number on substitute data "
    "(counted apart). `not_run`: nothing reproduced; the reason says why.")


def is_primary(row: dict) -> bool:
    """A row of the primary reading (rows made without readings count as primary, also when
    read back from a CSV whose ``primary`` cell is empty).
    """
    return row.get("primary", True) in (True, "True", "true", 1, "1", "")


def printed_exponent(text: str) -> int | None:
    """The decimal exponent of the last printed digit: ``"0.27"`` -> -2, ``"1.52e-04"`` -> -6."""
    try:
        exp = Decimal(text.strip()).as_tuple().exponent
    except (InvalidOperation, AttributeError):
        return None
    return exp if isinstance(exp, int) else None


def half_last_digit(text: str) -> float:
    """Half a unit in the last printed digit: ``"0.27"`` -> 0.005, ``"455"`` -> 0.5."""
    exp = printed_exponent(text)
    return math.nan if exp is None else 0.5 * 10.0 ** exp


def sigma_diff(s: float, n: int, s_p: float, n_p: int) -> float:
    """The std of a difference of two independent means: sqrt(s^2/n + s_p^2/n_p)."""
    if n < 1 or n_p < 1:
        raise ValueError(f"sigma_diff needs n >= 1 on both sides, got n={n}, n_paper={n_p}")
    return math.sqrt(s * s / n + s_p * s_p / n_p)


def match_tolerance(text: str, printed_std: float | None, stated: float | None = None,
                    printed_units: float = 0.5) -> float:
    """How far from the printed ``text`` a ``match`` may be: the printed std, at least
    ``printed_units`` units of the last printed digit; without a printed std (or a printed
    0), the ``stated`` tolerance where there is one, else that printed precision.
    """
    printed = 2.0 * printed_units * half_last_digit(text)
    if printed_std:
        return max(printed_std, printed)
    return printed if stated is None else stated


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def judge(text: str, printed_std: float | None, rep) -> dict:
    """Judge ``rep`` (a :class:`~repro.engine.experiment.Reproduced` with values) against the
    printed ``text`` (± ``printed_std``). Returns the row's ``reproduced``, ``reproduced_std``,
    ``n_seeds`` (runs counted), ``n_paper``, ``sigma_diff``, ``tolerance``, ``verdict`` and
    ``notes`` (derived sentences for the reason: k of N, a spread beyond 3x, the margins of
    a deviation).
    """
    n, n_runs = rep.n, rep.n_runs
    planned = rep.n_planned if rep.n_planned is not None else n_runs
    mean, s = rep.mean, rep.std
    target = text if rep.corrected is None else rep.corrected
    try:
        value = float(target)
    except ValueError:
        value = math.nan
    stated = rep.tolerance
    if stated is None and rep.rel_tolerance is not None:
        stated = rep.rel_tolerance * abs(value)
    tol = match_tolerance(target, printed_std, stated, rep.printed_units)
    notes = []
    if n < planned:
        lost = planned - n_runs
        unconv = n_runs - n
        why = ", ".join(filter(None, (f"{unconv} not converged" if unconv else "",
                                      f"{lost} lost" if lost else "")))
        notes.append(f"{n} of {planned} {rep.over} counted ({why})")
    cert = getattr(rep, "certified", None)
    uncertified = 0 if cert is None else sum(not c for c in cert)
    if uncertified:
        notes.append(f"{len(cert) - uncertified} of {len(cert)} runs certified: no noise band "
                     "(an uncertified run is no evidence of noise)")
    own_std = printed_std is not None and not rep.paper_std_over
    spread = (own_std and printed_std > 0 and n >= 2 and not math.isnan(s)
              and s > SPREAD_RATIO * printed_std)
    if spread:
        notes.append(f"our spread {_fmt(s)} over {n} {rep.over} is {s / printed_std:.1f}x the "
                     f"paper's printed std {_fmt(printed_std)} (more than {SPREAD_RATIO:g}x: "
                     f"not noise)")
    sd = math.nan
    if n >= 2 and rep.n_paper and not math.isnan(s):
        sd = sigma_diff(s, n, printed_std if own_std else s, rep.n_paper)
    out = {"reproduced": mean, "reproduced_std": s, "n_seeds": n,
           "n_paper": "" if rep.n_paper is None else rep.n_paper,
           "sigma_diff": sd, "tolerance": tol}
    if math.isnan(value) or math.isnan(mean):
        both = math.isnan(value) and math.isnan(mean)
        if n == 0 and n_runs:
            notes.append("no run converged")
        return {**out, "verdict": "match" if both else "deviates", "notes": notes}
    d = abs(mean - value)
    if d <= tol:
        verdict = "match"
    elif not spread and not uncertified and not math.isnan(sd) and d <= 2.0 * sd:
        verdict = "within_noise"
    else:
        verdict = "deviates"
        if uncertified:
            band = "no noise band (uncertified runs)"
        elif not math.isnan(sd):
            band = f"2σ_diff {_fmt(2 * sd)} (n {n} vs {rep.n_paper})"
        elif n < 2:
            band = f"no noise band ({n} run counted)"
        else:
            band = "no noise band (the paper's run count is unknown)"
        notes.append(f"off by {_fmt(d)}: beyond the tolerance {_fmt(tol)} and {band}")
    return {**out, "verdict": verdict, "notes": notes}
