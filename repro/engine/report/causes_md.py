"""The causes, noise models and fitted readings of a comparison, written for a reader.

:func:`table_counts_lines`: per paper and table, the verdict counts of the primary readings
beside the counts per cause of their deviating rows (``comparison.md`` and ``REPORT.md``);
:func:`noise_line`: the noise model of one table; :func:`fitted_lines`: every fitted reading
with its search space, calibration rows and held-out rows reproduced.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from repro.engine.compare.causes import CAUSES, cause_counts
from repro.engine.compare.fitted import fit_all
from repro.engine.compare.noise import declared
from repro.engine.compare.verdict import is_primary
from repro.engine.report.report import paper_name

__all__ = ["cause_words", "fitted_lines", "noise_line", "table_counts_lines"]

_VERDICTS = ("match", "within_noise", "deviates", "substitute_data", "not_run")


def _paper(paper_file: str) -> str:
    try:
        return paper_name(paper_file)
    except ValueError:   # a row of no declared paper (hand-made)
        return paper_file or "(no paper)"


def table_counts_lines(rows: list[dict]) -> list[str]:
    """Per paper and table (primary readings): verdict counts, then the deviating rows per
    cause.
    """
    verdicts: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for r in rows:
        if is_primary(r):
            verdicts[(r.get("paper_file", ""), str(r.get("table", "")))][r["verdict"]] += 1
    causes = cause_counts(rows)
    shown = [c for c in CAUSES if any(c in v for v in causes.values())]
    lines = ["| paper | table | " + " | ".join(_VERDICTS) + " | "
             + " | ".join(f"cause: {c}" for c in shown) + " |",
             "|---|---|" + "---|" * (len(_VERDICTS) + len(shown))]
    for (paper, table), v in sorted(verdicts.items()):
        c = causes.get((paper, table), Counter())
        lines.append(f"| {_paper(paper)} | {table} | "
                     + " | ".join(str(v[k]) for k in _VERDICTS) + " | "
                     + " | ".join(str(c[k]) for k in shown) + " |")
    missing = sum(c["(none)"] for c in causes.values())
    if missing:
        lines += ["", f"**{missing} deviating rows have no cause** (a defect: every deviating "
                      "row carries one)."]
    return lines


def cause_words(counts: Counter) -> str:
    """``counts`` of deviating rows per cause in words, in the vocabulary's order ("none" when
    empty): ``setting guessed 11, unexplained 3``.
    """
    order = [*CAUSES, "(none)"]
    return ", ".join(f"{c} {counts[c]}" for c in order if counts[c]) or "none"


def noise_line(stem: str) -> str:
    """The declared noise model of ``stem`` in one line ("" where none is declared)."""
    m = declared().get(stem)
    return "" if m is None else f"**Noise model** ({stem}): {m.line()}"


def fitted_lines(rows: list[dict]) -> list[str]:
    """Every fitted reading fitted on ``rows``: setting, search space, calibration rows, the
    choice per group, the held-out rows reproduced.
    """
    fits = fit_all(rows)
    if not fits:
        return []
    lines = ["## Fitted readings", "",
             "An unstated setting chosen from a search space declared in code, on declared "
             "calibration rows, and judged only on the other rows it bears on (held out). A "
             "fitted reading never replaces the primary; a deviating primary row that it "
             "reproduces while held out has the cause `setting identified`.", "",
             "| fitted reading | experiment | setting | search space | calibration rows | "
             "choice (calibration rows reproduced) | held out | held out reproduced |",
             "|---|---|---|---|---|---|---|---|"]
    for f in fits:
        rd = f.reading
        choice = "; ".join(
            f"{g + ': ' if g else ''}{c} ({f.calibration[g][c][0]}/{f.calibration[g][c][1]})"
            for g, c in sorted(f.chosen.items()))
        n = f.calibration_counts()[1]
        m, total = f.held_out_counts()
        lines.append(f"| {rd.id} | {rd.experiment} | {rd.setting} | "
                     f"{', '.join(rd.candidates)} | {rd.calibration_text} ({n} rows"
                     f"{', ' + rd.group_text if rd.group_text else ''}) | {choice} | {total} | "
                     f"{m} of {total} |")
    lines.append("")
    return lines
