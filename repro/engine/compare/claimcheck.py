"""The papers' qualitative claims: checked on the records, under the primary reading and
under each alternative reading that changes what the claim reads, and written to
``claims.md``/``claims.csv``.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path

from repro.engine.compare.causes import claim_causes
from repro.engine.compare.deviations import DEVIATIONS_FILE, heading_anchor
from repro.engine.compare.verdict import DEVIATIONS, is_primary
from repro.engine.experiment import Experiment, RecordsMissing
from repro.engine.records.kept import KEPT, made_by
from repro.engine.records.records import RunRecord, canonical_json
from repro.engine.report.comparison_md import linked
from repro.engine.run.planning import diverged, plan

CLAIM_COLUMNS = ("experiment", "reading", "primary", "claim", "source", "measured", "verdict",
                 "cause", "reason", "scale", "made_by")


CLAIM_VERDICTS = ("pass", "fail", "inconclusive", "not_run")


def paper_section_anchor(experiment: str, deviations: Path = DEVIATIONS_FILE) -> str:
    """The anchor of the ``## <package>: ...`` section of ``docs/deviations.md`` (``""`` when
    there is none).
    """
    text = deviations.read_text() if deviations.is_file() else ""
    group = experiment.split(".")[0]
    for h in re.findall(r"^## (.+)$", text, flags=re.M):
        if h.split(":")[0].strip().lower() == group:
            return heading_anchor(h)
    return ""


def section_link(experiment: str) -> str:
    """``see docs/deviations.md#<the experiment's paper section>``: a claim's default reason."""
    return f"see {DEVIATIONS}#{paper_section_anchor(experiment)}"


def evidence(exp: Experiment, scale: str, recs: list[RunRecord], reading_id: str) -> str:
    """``""`` when every cell of ``exp`` at ``scale`` under the reading has a result, else what
    the claim is judged on: ``on N of M cells (K diverged, J not run, L without a record): ``
    (a claim judged on part of a grid says so in its measured text).
    """
    if scale not in exp.scales:
        return ""
    reading = next((r for r in exp.select_readings("all") if r.id == reading_id), None)
    if reading is None:  # records handed in under a reading the experiment does not declare
        return ""
    grid = {canonical_json(c.config) for c in plan(exp, scale, reading)}
    n = len(grid)
    # the records of the grid's cells (a record of a method no table names is not one)
    recs = [r for r in recs if canonical_json(r.config) in grid]
    ok = sum(r.ok for r in recs)
    if ok >= n or not recs:  # none of them a cell of the grid (hand-made): nothing to count
        return ""
    div = sum(diverged(r) for r in recs)
    failed = sum(r.status == "failed" for r in recs) - div
    parts = [f"{k} {what}" for k, what in (
        (div, "diverged"), (failed, "failed"),
        (sum(r.status == "not_run" for r in recs), "not run"),
        (n - len(recs), "without a record")) if k]
    return f"on {ok} of {n} cells ({', '.join(parts)}): "


def check_claims(experiments: dict[str, Experiment],
                 records: dict[str, tuple[str, list[RunRecord]]],
                 alternatives: dict[str, dict[str, tuple[str, list[RunRecord]]]] | None = None,
                 figures_dir: Path | None = None) -> list[dict]:
    """Every claim under the primary reading and under each alternative reading with records;
    a failing or inconclusive claim's ``reason`` links its ``docs/deviations.md`` entry (the
    claim's own, else its paper's section). With ``figures_dir``, an experiment without records
    that registered a committed output (:mod:`repro.engine.records.from_outputs`) has its primary
    claims judged on that output, said in ``measured`` and in ``made_by`` (``kept: <file> at
    <commit>``: an earlier run's numbers, never shown as made by this code). A claim judged
    on part of its grid says on how many cells (:func:`evidence`).
    """
    from repro.engine.records.from_outputs import output_records

    rows = []
    for name, exp in experiments.items():
        runs = [(exp.primary_reading.id, True, records.get(name, ("", [])))]
        runs += [(rid, False, sr) for rid, sr in (alternatives or {}).get(name, {}).items()
                 if any(r.ok for r in sr[1])]
        for reading, primary, (scale, recs) in runs:
            ok = [r for r in recs if r.ok]
            source = ""
            if not ok and primary and figures_dir is not None:
                got = output_records(exp, figures_dir)
                if got is not None:
                    ok, source = got
                    # the budget the committed output was made at, where it says so
                    said = {r.config.get("scale") for r in ok}
                    if len(said) == 1 and None not in said:
                        scale = said.pop()
            # kept: numbers of an earlier run, not remade by this code (front_page says so)
            made = (f"{KEPT}: {source} (committed output, no run records here)" if source
                    else made_by(ok) if ok else "")
            stale = "; ".join(sorted({r.stale_note for r in ok if r.stale_note}))
            for claim in exp.claims:
                if not ok:
                    passed, measured, verdict = None, "no records", "not_run"
                else:
                    try:
                        passed, measured = claim.check(ok)
                    except RecordsMissing as exc:  # the records it needs are not there yet
                        passed, measured, verdict = None, f"records missing: {exc}", "not_run"
                    else:
                        # None: the margin lies within the claim's seed noise (Claim.check)
                        verdict = ("inconclusive" if passed is None else
                                   "pass" if passed else "fail")
                    if source:
                        measured = f"from {source} (no run records here): {measured}"
                    else:
                        measured = evidence(exp, scale, recs, reading) + measured
                    if stale:  # records of other code shown for want of current ones
                        measured = (f"NOT CURRENT: {'' if verdict == 'not_run' else 'judged on '}"
                                    f"records of older code ({stale}; a rerun of these cells "
                                    f"replaces them): {measured}")
                reason = ""
                if verdict in ("fail", "inconclusive"):
                    anchor = claim.deviation or f"{DEVIATIONS}#{paper_section_anchor(name)}"
                    reason = f"see {anchor}"
                rows.append({"experiment": name, "claim": claim.text, "source": claim.source,
                             "measured": measured, "verdict": verdict, "scale": scale,
                             "reading": reading, "primary": primary, "reason": reason,
                             "made_by": made})
    return claim_causes(per_reading(rows))


def per_reading(rows: list[dict]) -> list[dict]:
    """A claim is kept under an alternative reading only where that reading changes its
    inputs: where it measured the same numbers with the same verdict as under the primary
    reading (e.g. a loss claim under a DFP/DFN metric reading, which reads no DFP/DFN), the
    alternative's row repeats the primary's and is dropped. A claim with no primary row (not
    checked under it) keeps its alternatives.
    """
    def ident(r: dict) -> tuple:
        return r["experiment"], r.get("claim", "")

    primary = {ident(r): (r.get("measured", ""), r["verdict"]) for r in rows if is_primary(r)}
    return [r for r in rows if is_primary(r)
            or primary.get(ident(r)) != (r.get("measured", ""), r["verdict"])]


def claim_counts(rows: list[dict]) -> tuple[int, Counter, int]:
    """``(rows, verdicts under the primary readings, rows under alternative readings)``: the
    counts claims.md opens with and ``repro compare`` prints.
    """
    rows = per_reading(rows)  # also kept rows of an earlier claims.csv (repro compare NAME)
    primary = [r for r in rows if is_primary(r)]
    return len(rows), Counter(r["verdict"] for r in primary), len(rows) - len(primary)


def counts_line(rows: list[dict]) -> str:
    """One sentence of :func:`claim_counts`, the same in claims.md, the console and REPORT.md."""
    total, counts, alt = claim_counts(rows)
    return (f"{total} claim rows: {total - alt} under the primary readings ("
            + ", ".join(f"{counts[v]} {v}" for v in CLAIM_VERDICTS)
            + f"), {alt} under alternative readings that change the claim's inputs")


def write_claims(rows: list[dict], out_dir: Path) -> Path:
    """``claims.md`` (counts, then one table row per claim and reading) and ``claims.csv`` (the
    same rows, read back by a partial ``repro compare``: :mod:`repro.engine.records.kept`).
    """
    rows = per_reading(rows)  # kept rows of an earlier claims.csv repeat no more than new ones
    path = Path(out_dir) / "claims.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=CLAIM_COLUMNS, lineterminator="\n",
                           extrasaction="ignore")
        w.writeheader()
        w.writerows({k: r.get(k, "") for k in CLAIM_COLUMNS} for r in rows)
    lines = ["# Qualitative claims", "",
             counts_line(rows) + " (`inconclusive`: the margin does not exceed twice the seed "
             "std of the paired difference; counted apart). A claim is listed under an "
             "alternative reading only where that reading changes what it measures. Every "
             "failing or inconclusive claim links its reason.", "",
             "| experiment | reading | claim | source | measured | verdict | cause | reason | "
             "scale | made by |", "|---|---|---|---|---|---|---|---|---|---|"]

    def cell(x: object) -> str:  # a '|' inside a measured text would split the row
        return str(x).replace("|", "\\|").replace("\n", " ")

    for r in rows:
        reading = r.get("reading", "as-written") + ("" if is_primary(r) else " (alt.)")
        lines.append("| " + " | ".join([cell(r["experiment"]), cell(reading)] + [
            cell(r.get(k, "")) for k in ("claim", "source", "measured", "verdict", "cause")]
            + [linked(cell(r.get("reason", ""))), cell(r["scale"]), cell(r.get("made_by", ""))])
            + " |")
    path.write_text("\n".join(lines) + "\n")
    return path
