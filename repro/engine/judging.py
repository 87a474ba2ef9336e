"""How a reported row and our values become one judged comparison row.

:func:`verdict_for` applies the rule (:func:`repro.engine.verdict.judge`) to one printed
number and what an experiment reproduced for it, and writes the row's reason: what the rule
derived (k of N, a spread beyond 3x, the margins of a deviation), the experiment's note, a
misprint's corrected value; a ``substitute_data`` row (our number on substitute data) must link
its ``docs/deviations.md`` entry (:func:`repro.engine.deviations.check_substitute_link`).
:func:`cite_fitting_readings` adds to a deviating primary row the alternative readings under
which the same printed number is reproduced. Nothing here writes Markdown
(:mod:`repro.engine.comparison_md`) or collects records (:mod:`repro.engine.compare`).
"""

from __future__ import annotations

import math

from repro.engine.deviations import check_substitute_link
from repro.engine.experiment import Reproduced
from repro.engine.measured import four_digits
from repro.engine.reported import ReportedRow
from repro.engine.verdict import DEVIATIONS, RULE_ID, is_primary, judge


def _substitute(row: ReportedRow, rep: Reproduced, out: dict) -> dict:
    check_substitute_link(rep.substitute_data, f"{row.stem} {row.key_text} {row.metric}")
    # the link said once: where the experiment's note carries it, the note says it
    link = "" if rep.substitute_data in rep.note else f": {rep.substitute_data}"
    out.update(tolerance="", verdict="substitute_data",
               reason=f"our {rep.mean:.4g} is on substitute data (the paper's cannot be "
                      f"obtained){link}" + (f"; {rep.note}" if rep.note else ""))
    return out


def verdict_for(row: ReportedRow, rep: Reproduced | None, why_missing: str) -> dict:
    """One comparison row (a dict over :data:`COLUMNS`, minus experiment and scale), judged by
    :func:`repro.engine.verdict.judge`; the reason joins what the rule derived (k of N, a
    spread beyond 3x, the margins of a deviation) with the experiment's note.
    """
    out = {"paper_file": row.paper_file, "table": row.table, "key": row.key_text,
           "metric": row.metric, "reported": row.text,
           "reported_std": "" if row.std is None else row.std,
           "reproduced": "", "reproduced_std": "", "n_seeds": 0, "n_paper": "",
           "sigma_diff": "", "tolerance": ""}
    if rep is None or not rep.values:
        out.update(verdict="not_run", reason=why_missing)
        return out
    got = judge(row.text, row.std, rep)
    out["rule"] = RULE_ID
    notes = got.pop("notes")
    out.update({k: ("" if isinstance(v, float) and math.isnan(v) and k != "reproduced" else v)
                for k, v in got.items()})
    if rep.substitute_data:
        return _substitute(row, rep, out)
    fixed = ("" if rep.corrected is None else f"judged against the corrected value "
             f"{rep.corrected} (printed {row.text} is a misprint): {rep.note}")
    if out["verdict"] == "deviates":
        why = fixed or rep.note or f"see {DEVIATIONS}#{row.stem}"
    else:
        why = fixed
    out["reason"] = "; ".join(filter(None, [*notes, why]))
    return out


def cite_fitting_readings(rows: list[dict]) -> list[dict]:
    """A deviating row of the primary reading names the alternative readings under which the
    same reported row is reproduced (match or within noise), with their values: the evidence
    of those readings' runs, in the row's reason.
    """
    good = {}
    for r in rows:
        if not is_primary(r) and r["verdict"] in ("match", "within_noise"):
            good.setdefault((r["experiment"], r["table"], r["key"], r["metric"]), []).append(
                f"{r['reading']} {four_digits(r['reproduced'])}")
    for r in rows:
        fits = good.get((r["experiment"], r["table"], r["key"], r["metric"]))
        if is_primary(r) and r["verdict"] == "deviates" and fits:
            r["reason"] = (f"reproduced under reading{'s' if len(fits) > 1 else ''} "
                           f"{', '.join(fits)}; under the primary reading: " + r["reason"])
    return rows
