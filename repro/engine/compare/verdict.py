"""The verdict rule of the comparison, written once: how one reproduced number
(:class:`~repro.engine.experiment.Reproduced`) is judged against one printed number.

:data:`RULE` is the text ``comparison.md`` opens with; :func:`judge` is the rule. Let ``d`` be
|ours - paper|, ``s`` the sample std of
our runs and ``n`` their number (the converged ones), ``s_p`` the paper's printed std and
``n_p`` the number of runs behind the printed number, from the table's noise model
(:mod:`repro.engine.compare.noise`: the count the text states, 1 where it states none).

``match``        ``d`` <= the printed number's own width: its printed std where that std is a
                 spread of the runs the row compares (never one pooled over clients), at least
                 half a unit of its last printed digit (one unit where the table is shown to be
                 rounded twice, ``printed_units``). No tolerance of ours or of a spec ever makes
                 a match: a :class:`Reproduced` that carries one is refused.
``within_noise`` not a match, ``n`` >= 2 and ``d`` <= 2 sigma_diff, sigma_diff =
                 sqrt(s^2/n + s_p'^2/n_p) the noise of a difference of two means under the
                 table's noise model; ``s_p'`` = ``s_p`` where the printed std is over the
                 paper's runs and consistent with the stated protocol (:func:`std_consistency`),
                 else ``s`` (our runs measure the noise of one run of the protocol);
``deviates``     neither.

Runs that did not converge are left out of ``n``, the mean and ``s``; the row says ``k of N``
(also where runs were lost, ``n_planned``), so no row is judged on a std inflated by them.
Runs that ended by the paper's own protocol but without the certificate its algorithm asks for
(:class:`Certified`: e.g. Algorithm 1's stop (11) after an ADMM call capped at T) stay in the
mean, as the paper's runs did, but are never the evidence of a noise band: such a row is
``match`` or ``deviates``, and says ``k of N runs certified``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from repro.engine.experiment import Reproduced

__all__ = ["ALPHA", "Certified", "DEVIATIONS", "NEEDS_RERUN", "RULE", "RULE_ID", "StdCheck",
           "VERDICTS", "half_last_digit", "is_primary", "judge", "match_tolerance",
           "printed_exponent", "shown_verdicts", "sigma_diff", "std_consistency"]

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
    paper's protocol itself: ``certified`` holds one boolean per value. Every run
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


RULE_ID = "printed-width"   # written in every judged row's ``rule`` column
ALPHA = 0.01   # two-sided level of the test of a printed std against the stated protocol

RULE = (
    "**Verdict rule** (`repro/engine/compare/verdict.py`, one rule for every row). "
    "`match`: |ours − paper| within the printed number's own width: its printed std where "
    "that std is a spread of the runs the row compares, at least half a unit of its last "
    "printed digit (one unit where the table is shown to be rounded twice); no tolerance of "
    "ours or of a spec makes a match. "
    "`within_noise`: not a match, but |ours − paper| ≤ 2·σ_diff with σ_diff = "
    "√(s²/n_ours + s_p²/n_paper), the noise of a difference of two means under the table's "
    "noise model (stated below each table: what varies across the paper's runs and how many "
    "it averaged, n_paper = 1 where the text states none): s is the std of the reported "
    "statistic over our independent runs under that model (never pooled over clients or "
    "rounds), s_p the paper's printed std where it is over the paper's runs and consistent "
    "with the stated protocol (a two-sided F-test of the two variances at 1 %, the printed "
    "std taken at the edge of its printed precision), else s; a printed std the protocol "
    "cannot produce is said in the row (`paper std`) as a paper inconsistency. "
    "A run that did not converge or was lost is left out and the row says `k of N`; a run "
    "that ended by the paper's protocol without its certificate counts in the mean but is "
    "never the evidence of a noise band (the row says `k of N runs certified`). "
    "`deviates`: neither; every deviating row carries a cause (`bug fixed`, `paper "
    "inconsistency`, `setting identified`, `setting guessed`, `authors' code differs`, "
    "`unexplained`) and the runs that show it for that row. `substitute_data`: our number on "
    "substitute data (counted apart). `not_run`: nothing reproduced; the reason says why.")


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


def match_tolerance(text: str, printed_std: float | None, printed_units: float = 0.5) -> float:
    """How far from the printed ``text`` a ``match`` may be: the printed std (pass None where
    it is no spread of the runs the row compares), at least ``printed_units`` units of the last
    printed digit.
    """
    printed = 2.0 * printed_units * half_last_digit(text)
    return max(printed_std, printed) if printed_std else printed


@dataclass(frozen=True)
class StdCheck:
    """The test of a printed std against our runs under the stated protocol: ``p`` the
    two-sided p-value, ``consistent`` whether ``p`` >= :data:`ALPHA`, ``note`` one sentence.
    """

    consistent: bool
    p: float
    note: str


def std_consistency(printed: float, text: str | None, s: float, n: int, n_p: int
                    ) -> StdCheck:
    """Whether a printed std over ``n_p`` runs can be the spread of the protocol our ``n`` runs
    measure with sample std ``s``: under equal variances s_p^2 / s^2 ~ F(n_p - 1, n - 1). The
    printed std is taken at the edge of its printed precision most favourable to it (a printed
    ``0.0`` may be up to 0.05), so a std shown inconsistent is inconsistent at any value it may
    have been before rounding.
    """
    from scipy.stats import f as f_dist

    half = half_last_digit(text) if text else 0.0
    half = 0.0 if math.isnan(half) else half
    hi, lo = printed + half, max(printed - half, 0.0)
    if s == 0.0:
        p = 1.0 if lo == 0.0 else 0.0
    else:
        p_low = float(f_dist.cdf(hi * hi / (s * s), n_p - 1, n - 1))
        p_high = float(f_dist.sf(lo * lo / (s * s), n_p - 1, n - 1))
        p = min(1.0, 2.0 * min(p_low, p_high))
    ok = p >= ALPHA
    shown = text or _fmt(printed)
    note = (f"printed std {shown} over {n_p} runs {'is' if ok else 'is not'} a spread of the "
            f"stated protocol: ours {_fmt(s)} over {n} runs, F-test P = {p:.2g}"
            + ("" if ok else " (paper inconsistency: our std on both sides of the band)"))
    return StdCheck(ok, p, note)


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def _refuse_tolerance(rep) -> None:
    if getattr(rep, "corrected", None) is not None:
        raise ValueError(
            f"{rep.table} {dict(rep.key)} {rep.metric}: a row is judged against the number the "
            f"paper prints, never a corrected one (corrected={rep.corrected!r}); name the "
            "misprint in the row's note (repro/engine/compare/verdict.py): drop it")
    if getattr(rep, "tolerance", None) is not None or getattr(rep, "rel_tolerance", None) \
            is not None:
        raise ValueError(
            f"{rep.table} {dict(rep.key)} {rep.metric}: a tolerance of ours "
            f"(tolerance={rep.tolerance}, rel_tolerance={rep.rel_tolerance}) never makes a "
            "match; a match is the printed std or the printed precision "
            "(repro/engine/compare/verdict.py): drop it")


def _counted(rep, n: int, planned: int) -> list[str]:
    """The notes on runs left out (not converged, lost) and on uncertified runs."""
    notes = []
    if n < planned:
        lost, unconv = planned - rep.n_runs, rep.n_runs - n
        why = ", ".join(filter(None, (f"{unconv} not converged" if unconv else "",
                                      f"{lost} lost" if lost else "")))
        notes.append(f"{n} of {planned} {rep.over} counted ({why})")
    cert = getattr(rep, "certified", None)
    if cert is not None and not all(cert):
        notes.append(f"{sum(cert)} of {len(cert)} runs certified: no noise band "
                     "(an uncertified run is no evidence of noise)")
    return notes


def judge(text: str, printed_std: float | None, rep, noise=None,
          std_text: str | None = None) -> dict:
    """Judge ``rep`` (a :class:`~repro.engine.experiment.Reproduced` with values) against the
    printed ``text`` (± ``printed_std``, printed as ``std_text``) under the table's ``noise``
    model (:class:`repro.engine.compare.noise.NoiseModel`; without one, ``rep.n_paper``). Returns
    the
    row's ``reproduced``, ``reproduced_std``, ``n_seeds`` (runs counted), ``n_paper``,
    ``sigma_diff``, ``tolerance`` (the match width), ``paper_std`` (the test of the printed
    std), ``verdict`` and ``notes`` (derived sentences for the reason).
    """
    _refuse_tolerance(rep)
    n = rep.n
    planned = rep.n_planned if rep.n_planned is not None else rep.n_runs
    mean, s = rep.mean, rep.std
    target = text
    try:
        value = float(target)
    except ValueError:
        value = math.nan
    n_paper = noise.n_paper if noise is not None else rep.n_paper
    over_runs = (printed_std is not None and not rep.paper_std_over
                 and (noise is None or noise.printed_std == "runs"))
    tol = match_tolerance(target, printed_std if over_runs else None, rep.printed_units)
    notes = _counted(rep, n, planned)
    uncertified = any("runs certified" in x for x in notes)
    check = None
    if over_runs and n >= 2 and n_paper and n_paper >= 2 and not math.isnan(s):
        check = std_consistency(printed_std, std_text, s, n, n_paper)
        if not check.consistent:
            notes.append(check.note)
    sd = math.nan
    if n >= 2 and n_paper and not math.isnan(s):
        s_p = printed_std if over_runs and check is not None and check.consistent else s
        sd = sigma_diff(s, n, s_p, n_paper)
    out = {"reproduced": mean, "reproduced_std": s, "n_seeds": n,
           "n_paper": "" if n_paper is None else n_paper, "sigma_diff": sd, "tolerance": tol,
           "paper_std": "" if check is None else
           ("consistent" if check.consistent else "inconsistent") + f" (P = {check.p:.2g})"}
    if math.isnan(value) or math.isnan(mean):
        both = math.isnan(value) and math.isnan(mean)
        if n == 0 and rep.n_runs:
            notes.append("no run converged")
        return {**out, "verdict": "match" if both else "deviates", "notes": notes}
    d = abs(mean - value)
    if d <= tol:
        verdict = "match"
    elif not uncertified and not math.isnan(sd) and d <= 2.0 * sd:
        verdict = "within_noise"
    else:
        verdict = "deviates"
        if uncertified:
            band = "no noise band (uncertified runs)"
        elif not math.isnan(sd):
            band = f"2σ_diff {_fmt(2 * sd)} (n {n} vs {n_paper})"
        elif n < 2:
            band = f"no noise band ({n} run counted)"
        else:
            band = "no noise band (the paper's run count is unknown)"
        notes.append(f"off by {_fmt(d)}: beyond the printed width {_fmt(tol)} and {band}")
    return {**out, "verdict": verdict, "notes": notes}
