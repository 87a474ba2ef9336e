"""Reported vs reproduced, cell by cell, and the papers' qualitative claims.

Every row of every reported CSV (``repro/reported/*.csv`` and a paper package's own
``repro/<paper>/reported/*.csv``: :mod:`repro.engine.compare.reported`) becomes one comparison row.
An experiment claims the CSVs named in its ``reported`` field and maps its records to rows
through ``reproduce``.

The verdict rule is :mod:`repro.engine.compare.verdict` (stated at the top of ``comparison.md``),
its
application to one row :mod:`repro.engine.compare.judging` (a ``substitute_data`` row must link the
``docs/deviations.md`` entry that shows the paper's data cannot be obtained), the cause of a
deviating row :mod:`repro.engine.compare.causes` (fitted readings
:mod:`repro.engine.compare.fitted`); the
Markdown is :mod:`repro.engine.report.comparison_md`, the claims
:mod:`repro.engine.compare.claimcheck`. This
module maps records to rows, the rows of every reading and of the declared diagnostics; a
``not_run`` row's reason says why, derived from the records or from the experiment's own data
check (``Experiment.unavailable``).
"""

from __future__ import annotations

from repro.engine.compare.causes import assign_causes, diagnostics
from repro.engine.compare.claimcheck import (  # noqa: F401 (re-exported: the package's one place)
    CLAIM_COLUMNS,
    CLAIM_VERDICTS,
    check_claims,
    counts_line,
    paper_section_anchor,
    section_link,
    write_claims,
)
from repro.engine.compare.deviations import (  # noqa: F401 (re-exported)
    DEVIATIONS_FILE,
    check_substitute_link,
    heading_anchor,
)
from repro.engine.compare.judging import verdict_for
from repro.engine.compare.reported import (  # noqa: F401 (re-exported: the comparison's rows)
    NON_KEY,
    ReportedRow,
    load_reported,
)
from repro.engine.compare.verdict import (  # noqa: F401 (re-exported)
    DEVIATIONS,
    RULE_ID,
    VERDICTS,
    half_last_digit,
    is_primary,
    judge,
)
from repro.engine.experiment import Experiment, Reproduced
from repro.engine.records.kept import made_by
from repro.engine.records.records import RunRecord
from repro.engine.report.comparison_md import (  # noqa: F401 (re-exported)
    COLUMNS,
    linked,
    reading_counts,
    reading_findings,
    summary,
    write_comparison,
)


def default_experiment_name(stem: str) -> str:
    """``constrfl_table1`` -> ``constrfl.table1``; ``fairvfl_conf_table1`` ->
    ``fairvfl.conf_table1``.
    """
    paper, _, item = stem.partition("_")
    return f"{paper}.{item}"


def compare(experiments: dict[str, Experiment],
            records: dict[str, tuple[str, list[RunRecord]]],
            reported: list[ReportedRow] | None = None) -> list[dict]:
    """Comparison rows for every reported row (causes not yet assigned: that needs the rows
    of every reading, :func:`compare_readings`).

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
    """Comparison rows under every reading run, with the cause of every deviating row.

    ``records``: the primary reading's records per experiment (as for :func:`compare`);
    ``alternatives``: experiment -> reading id -> ``(scale, records)`` of its other readings.
    Every reported row gets one row under its experiment's primary reading (``primary`` True),
    one per alternative reading that has records and one per setting of a declared diagnostic
    (:class:`repro.engine.compare.causes.Diagnostic`) whose experiment has records (``primary``
    False,
    ``diagnostic`` its name); then :func:`repro.engine.compare.causes.assign_causes`.
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
    rows += diagnostic_rows(records, reported)
    return assign_causes(rows, reported)


def diagnostic_rows(records: dict[str, tuple[str, list[RunRecord]]],
                    reported: list[ReportedRow]) -> list[dict]:
    """The rows of every declared diagnostic with records: one per setting (its label, the
    row's ``reading``) and reported row it addresses.
    """
    out = []
    index = {(row.stem, tuple(sorted(row.key)), row.metric): row for row in reported}
    for diag in diagnostics().values():
        scale, recs = records.get(diag.name, ("", []))
        ok = [r for r in recs if r.ok]
        if not ok:
            continue
        stale = "; ".join(sorted({r.stale_note for r in ok if r.stale_note}))
        made = made_by(ok)
        for label, rep in diag.rows(ok):
            row = index.get((rep.table, tuple(sorted(rep.key.items())), rep.metric))
            if row is None:
                raise ValueError(f"diagnostic {diag.name} addresses no reported row: "
                                 f"{rep.table} {dict(rep.key)} {rep.metric}")
            r = verdict_for(row, rep, "")
            if stale:
                r["reason"] = "; ".join(filter(None, (stale, r["reason"])))
            out.append({"experiment": diag.target, **r, "scale": scale, "made_by": made,
                        "reading": label, "primary": False, "diagnostic": diag.name})
    return out


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


