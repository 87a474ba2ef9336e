"""How a reported row and our values become one judged comparison row.

:func:`verdict_for` applies the rule (:func:`repro.engine.compare.verdict.judge`) to one printed
number and what an experiment reproduced for it, under the table's noise model
(:mod:`repro.engine.compare.noise`), and writes the row's reason: what the rule derived (k of N, a
printed std the stated protocol cannot produce, the margins of a deviation) and the experiment's
note (a misprint is named there; the row is judged against the printed number). A
``substitute_data`` row (our number on substitute data) must link its ``docs/deviations.md``
entry (:func:`repro.engine.compare.deviations.check_substitute_link`). No link is added to a
deviating row: its cause and the runs that show it are :mod:`repro.engine.compare.causes`'.
Nothing here writes Markdown (:mod:`repro.engine.report.comparison_md`) or collects records
(:mod:`repro.engine.compare.compare`).
"""

from __future__ import annotations

import math

from repro.engine.compare.deviations import check_substitute_link
from repro.engine.compare.noise import noise_model
from repro.engine.compare.reported import ReportedRow
from repro.engine.compare.verdict import RULE_ID, judge
from repro.engine.experiment import Reproduced


def _substitute(row: ReportedRow, rep: Reproduced, out: dict) -> dict:
    check_substitute_link(rep.substitute_data, f"{row.stem} {row.key_text} {row.metric}")
    # the link said once: where the experiment's note carries it, the note says it
    link = "" if rep.substitute_data in rep.note else f": {rep.substitute_data}"
    out.update(tolerance="", sigma_diff="", paper_std="", verdict="substitute_data",
               reason=f"our {rep.mean:.4g} is on substitute data (the paper's cannot be "
                      f"obtained){link}" + (f"; {rep.note}" if rep.note else ""))
    return out


def verdict_for(row: ReportedRow, rep: Reproduced | None, why_missing: str) -> dict:
    """One comparison row (a dict over :data:`COLUMNS`, minus experiment and scale), judged by
    :func:`repro.engine.compare.verdict.judge`; the reason joins what the rule derived with the
    experiment's note.
    """
    out = {"paper_file": row.paper_file, "table": row.table, "key": row.key_text,
           "metric": row.metric, "reported": row.text,
           "reported_std": "" if row.std is None else row.std,
           "place": f"line {row.line}, cell {row.cell}" if row.line else "",
           "reproduced": "", "reproduced_std": "", "n_seeds": 0, "n_paper": "",
           "sigma_diff": "", "tolerance": "", "paper_std": "", "cause": "", "evidence": ""}
    if rep is None or not rep.values:
        out.update(verdict="not_run", reason=why_missing)
        return out
    got = judge(row.text, row.std, rep, noise_model(row.stem), row.std_text or None)
    out["rule"] = RULE_ID
    notes = got.pop("notes")
    out.update({k: ("" if isinstance(v, float) and math.isnan(v) and k != "reproduced" else v)
                for k, v in got.items()})
    if rep.substitute_data:
        return _substitute(row, rep, out)
    out["reason"] = "; ".join(filter(None, [*notes, rep.note]))
    return out
