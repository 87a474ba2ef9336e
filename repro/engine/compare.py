"""Reported vs reproduced, cell by cell, and the papers' qualitative claims.

Every row of every reported CSV (``repro/reported/*.csv`` and a paper package's own
``repro/<paper>/reported/*.csv``: :mod:`repro.engine.reported`) becomes one comparison row.
An experiment claims the CSVs named in its ``reported`` field and maps its records to rows
through ``reproduce``.

The verdict rule is :mod:`repro.engine.verdict` (stated at the top of ``comparison.md``);
the Markdown is :mod:`repro.engine.comparison_md`, the claims :mod:`repro.engine.claimcheck`.
A ``substitute_data`` row (our number on substitute data, counted apart) must link the
``docs/deviations.md`` entry that shows the paper's data cannot be obtained
(:func:`check_substitute_link`); a ``not_run`` row's reason says why, derived from the records
or from the experiment's own data check (``Experiment.unavailable``).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from repro.engine.claimcheck import (  # noqa: F401 (re-exported: the package's one place)
    CLAIM_COLUMNS,
    CLAIM_VERDICTS,
    DEVIATIONS_FILE,
    check_claims,
    counts_line,
    paper_section_anchor,
    section_link,
    write_claims,
)
from repro.engine.comparison_md import (  # noqa: F401 (re-exported)
    COLUMNS,
    _fmt,
    deviation_causes,
    heading_anchor,
    linked,
    reading_counts,
    reading_findings,
    summary,
    write_comparison,
)
from repro.engine.experiment import Experiment, Reproduced
from repro.engine.kept import made_by
from repro.engine.records import RunRecord
from repro.engine.reported import (  # noqa: F401 (re-exported: the comparison's rows)
    NON_KEY,
    ReportedRow,
    load_reported,
)
from repro.engine.verdict import (  # noqa: F401 (re-exported)
    DEVIATIONS,
    RULE_ID,
    VERDICTS,
    half_last_digit,
    is_primary,
    judge,
)


def default_experiment_name(stem: str) -> str:
    """``constrfl_table1`` -> ``constrfl.table1``; ``fairvfl_conf_table1`` ->
    ``fairvfl.conf_table1``.
    """
    paper, _, item = stem.partition("_")
    return f"{paper}.{item}"


def check_substitute_link(link: str, row_text: str,
                          deviations: Path = DEVIATIONS_FILE) -> None:
    """A ``substitute_data`` row must link an existing entry of ``docs/deviations.md``.

    Outside a source checkout (an installed wheel ships no ``docs/``) only the link's form is
    checked; the entry's existence is checked wherever the file is present (the tests).
    """
    where = f"{row_text}: substitute_data={link!r}"
    prefix = f"{DEVIATIONS}#"
    if not link.startswith(prefix):
        raise ValueError(f"{where} must be '{prefix}<anchor>' (the entry showing the paper's "
                         f"data cannot be obtained); give the experiment's reproduce() that link")
    if not deviations.is_file():
        return
    text = deviations.read_text()
    anchors = {heading_anchor(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}
    if link[len(prefix):] not in anchors:
        raise ValueError(f"{where} links no entry of {deviations}: add the entry (a heading "
                         f"whose anchor is {link[len(prefix):]!r}) saying why the paper's data "
                         f"cannot be obtained, or judge the row as a normal comparison")


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


def compare(experiments: dict[str, Experiment],
            records: dict[str, tuple[str, list[RunRecord]]],
            reported: list[ReportedRow] | None = None) -> list[dict]:
    """Comparison rows for every reported row.

    ``records`` maps experiment name to ``(scale, records)`` for the experiments that were
    collected.
    """
    reported = load_reported() if reported is None else reported
    owner: dict[str, str] = {}
    for exp in experiments.values():
        for stem in exp.reported:
            owner[stem] = exp.name
    produced: dict[str, dict[tuple, Reproduced]] = {}
    for name, (_, recs) in records.items():
        exp = experiments[name]
        ok = [r for r in recs if r.ok]
        if exp.reproduce is None or not ok:
            continue
        produced[name] = {(p.table, tuple(sorted(p.key.items())), p.metric): p
                          for p in exp.reproduce(ok)}
    # records made by other code (shown because no current one exists) are never silent
    stale = {name: "; ".join(sorted({r.stale_note for r in recs if r.ok and r.stale_note}))
             for name, (_, recs) in records.items()}
    rows = []
    for row in reported:
        name = owner.get(row.stem, default_experiment_name(row.stem))
        scale = records.get(name, ("", []))[0]
        key = (row.stem, tuple(sorted((k, v) for k, v in row.key)), row.metric)
        rep = produced.get(name, {}).get(key)
        out = verdict_for(row, rep, _why_missing(name, experiments, records))
        if stale.get(name) and rep is not None:
            out["reason"] = "; ".join(filter(None, (stale[name], out["reason"])))
        made = made_by([r for r in records.get(name, ("", []))[1] if r.ok]) if rep else ""
        rows.append({"experiment": name, **out, "scale": scale, "made_by": made})
    return rows


def compare_readings(experiments: dict[str, Experiment],
                     records: dict[str, tuple[str, list[RunRecord]]],
                     alternatives: dict[str, dict[str, tuple[str, list[RunRecord]]]] | None = None,
                     reported: list[ReportedRow] | None = None) -> list[dict]:
    """Comparison rows under every reading run (issue #15 item 2).

    ``records``: the primary reading's records per experiment (as for :func:`compare`);
    ``alternatives``: experiment -> reading id -> ``(scale, records)`` of its other readings.
    Every reported row gets one row under its experiment's primary reading (``primary`` True)
    and one per alternative reading that has records (``primary`` False).
    """
    reported = load_reported() if reported is None else reported
    rows = compare(experiments, records, reported)
    for r in rows:
        exp = experiments.get(r["experiment"])
        r.update(reading=exp.primary_reading.id if exp else "as-written", primary=True)
    for name, per in (alternatives or {}).items():
        stems = set(experiments[name].reported)
        mine = [row for row in reported if row.stem in stems]
        for rid, (scale, recs) in per.items():
            if not mine or not any(r.ok for r in recs):
                continue
            for r in compare(experiments, {name: (scale, recs)}, mine):
                rows.append({**r, "reading": rid, "primary": False})
    return _cite_fitting_readings(rows)


def _cite_fitting_readings(rows: list[dict]) -> list[dict]:
    """A deviating row of the primary reading names the alternative readings under which the
    same reported row is reproduced (match or within noise), with their values: the evidence
    of those readings' runs, in the row's reason.
    """
    good = {}
    for r in rows:
        if not is_primary(r) and r["verdict"] in ("match", "within_noise"):
            good.setdefault((r["experiment"], r["table"], r["key"], r["metric"]), []).append(
                f"{r['reading']} {_fmt(r['reproduced'])}")
    for r in rows:
        fits = good.get((r["experiment"], r["table"], r["key"], r["metric"]))
        if is_primary(r) and r["verdict"] == "deviates" and fits:
            r["reason"] = (f"reproduced under reading{'s' if len(fits) > 1 else ''} "
                           f"{', '.join(fits)}; under the primary reading: " + r["reason"])
    return rows


def _why_missing(name: str, experiments: dict[str, Experiment],
                 records: dict[str, tuple[str, list[RunRecord]]]) -> str:
    if name not in experiments:
        return (f"experiment {name} is not implemented yet; "
                f"see {DEVIATIONS}#not-yet-implemented")
    scale, recs = records.get(name, ("", []))
    # a reason's first line (a data error's full text, in the record, spans several)
    reasons = sorted({r.reason.splitlines()[0] for r in recs if not r.ok and r.reason})
    failed = [r for r in reasons if r.startswith("failed")]
    if failed:
        return f"{failed[0]}; see {DEVIATIONS}#failed-cells"
    if reasons:
        return f"not run: {reasons[0]}; see {DEVIATIONS}#data-unavailable"
    if not recs:
        missing = experiments[name].unavailable() if experiments[name].unavailable else ""
        if missing:
            return f"not run: data unavailable: {missing}"
        return (f"no records at scale {scale or '?'}: run `repro run {name}`; "
                f"see {DEVIATIONS}#no-records-yet")
    return (f"{name} does not produce this row (yet); see {DEVIATIONS}#not-yet-implemented "
            f"and the paper's own section there")


