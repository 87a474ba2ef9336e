"""Judge the committed records again, without rerunning anything: the comparison of
``figures/cells/*.csv`` (the ledger of a complete run: every cell's config and metrics) under
the current rule, readings, causes and fitted readings.

Usage: ``python scripts/ledger_compare.py [--figures figures] [--results DIR] [--out DIR]``

``--results DIR``: records of cells run since (e.g. a reading added after the ledger was
written), which replace or add to the ledger's rows of the same cells. The rows then mix the
ledger's commit and later code; every record is labelled ``ledger+results`` (and a record of
``DIR`` made by an earlier edit of the current code is taken as current) so that the evidence
of one reading for another's row is accepted across them: the evaluation assumes that the code
changes in between leave the numbers as they are, which a complete run then checks.

The ledger holds no curves, so the experiments whose rows need them (constrfl Tables 1-2: each
trial's per-client objectives) are taken from ``--results`` where it holds every cell, else from
the committed ``comparison.csv``, re-judged from its columns (:mod:`repro.engine.compare.rejudge`);
every other row is recomputed from the ledger's metrics by the experiment's own ``reproduce``. A
metric reading whose metrics the committed records lack (a reading added since) is left out and
said. The ledger rows are the committed records of the commit in their ``commit`` column, so the
rows say ``made_by`` that commit.

Writes ``comparison.md``/``.csv`` into ``--out`` (default ``results/ledger-compare``, an ignored
folder) and prints, per paper, the primary rows reproduced (match + within noise) of the
comparable ones (match, within noise, deviates) and the deviating rows per cause.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
from collections import Counter, defaultdict
from pathlib import Path

from repro.engine.commands.verify import read_ledger
from repro.engine.compare.causes import cause_counts, check_causes, diagnostics
from repro.engine.compare.compare import compare_readings
from repro.engine.compare.rejudge import rejudge_row
from repro.engine.compare.verdict import is_primary
from repro.engine.records.kept import merge
from repro.engine.records.records import RunRecord, canonical_json
from repro.engine.registry import load_all
from repro.engine.report.comparison_md import write_comparison
from repro.engine.report.report import paper_name
from repro.engine.run.planning import collect as collect_records
from repro.engine.run.planning import read_records

NEEDS_CURVES = ("constrfl.table1", "constrfl.table2")
MIXED = "ledger+results"


def _records(rows) -> dict[str, list[RunRecord]]:
    out: dict[str, list[RunRecord]] = defaultdict(list)
    for r in rows:
        out[r.experiment].append(RunRecord(r.experiment, r.config, r.key, r.seed,
                                           metrics=dict(r.metrics), commit=r.commit))
    return out


def _under(exp, reading, recs: list[RunRecord]) -> list[RunRecord]:
    want = {canonical_json(c) for _, c in exp.reading_configs("paper", reading)}
    return [r for r in recs if canonical_json(r.config) in want]


def _with_results(exp, reading, recs: list[RunRecord], results: Path | None):
    """The ledger's records of ``reading``, those of ``results`` replacing them cell by cell."""
    mine = _under(exp, reading, recs)
    if results is None:
        return mine
    fresh = [r for r in collect_records(exp, "paper", results, reading=reading) if r.ok]
    have = {canonical_json(r.config) for r in fresh}
    out = read_records([r for r in mine if canonical_json(r.config) not in have], reading)
    return [dataclasses.replace(r, commit=MIXED, stale_note="") for r in out + fresh]


def _complete(exp, results: Path, reading=None) -> bool:
    """Whether ``results`` holds a record of every cell of ``exp`` under ``reading`` that its
    rows read (constrfl Table 2's rows read the script's hyperparameter set only).
    """
    reading = reading or exp.primary_reading
    got = collect_records(exp, "paper", results, reading=reading)
    want = [c for _, c in exp.reading_configs("paper", reading)
            if c.get("hyper", "script") == "script"]
    return sum(r.ok and r.config.get("hyper", "script") == "script" for r in got) == len(want)


def collect(figures: Path, results: Path | None = None):
    """``(experiments, records, alternatives, skipped readings)`` from the ledger (and
    ``results``).
    """
    exps = load_all()
    by_exp = _records(read_ledger(figures))
    records, alternatives, skipped = {}, {}, []
    diag = set(diagnostics())
    for name, exp in exps.items():
        if exp.reproduce is None and name not in diag:
            continue
        if name in NEEDS_CURVES:   # from ``results`` where it holds every cell, else skipped
            if results is not None and _complete(exp, results):
                records[name] = ("paper", _with_results(exp, exp.primary_reading, [], results))
                for reading in exp.select_readings("all"):
                    if not reading.primary and _complete(exp, results, reading):
                        alternatives.setdefault(name, {})[reading.id] = (
                            "paper", _with_results(exp, reading, [], results))
            continue
        recs = by_exp.get(name, [])
        records[name] = ("paper", _with_results(exp, exp.primary_reading, recs, results))
        for reading in exp.select_readings("all"):
            if reading.primary:
                continue
            try:
                mine = _with_results(exp, reading, recs, results)
                if results is None:
                    mine = read_records(mine, reading)
            except KeyError:
                skipped.append(f"{name} {reading.id}")
                continue
            if mine:
                alternatives.setdefault(name, {})[reading.id] = ("paper", mine)
    return exps, records, alternatives, skipped


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--figures", default="figures")
    ap.add_argument("--out", default="results/ledger-compare")
    ap.add_argument("--results", help="records of cells run since the ledger")
    args = ap.parse_args(argv)
    figures = Path(args.figures)
    exps, records, alternatives, skipped = collect(
        figures, Path(args.results) if args.results else None)
    rows = compare_readings(exps, records, alternatives)
    with open(figures / "comparison.csv", newline="") as f:
        committed = [rejudge_row(r) for r in csv.DictReader(f)
                     if r["experiment"] in NEEDS_CURVES and r["experiment"] not in records]
    rows = merge(rows, committed, set(records))
    out = Path(args.out)
    write_comparison(rows, out)
    if skipped:
        print("readings left out (their metrics are not in the committed records): "
              + ", ".join(skipped))
    per: dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        if is_primary(r):
            per[r["paper_file"]][r["verdict"]] += 1
    for paper, c in sorted(per.items()):
        comparable = c["match"] + c["within_noise"] + c["deviates"]
        print(f"{paper_name(paper)}: {c['match'] + c['within_noise']} of {comparable} "
              f"reproduced ({c['match']} match, {c['within_noise']} within noise, "
              f"{c['deviates']} deviate)")
    for (paper, table), c in cause_counts(rows).items():
        print(f"  {paper[:3]} {table}: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
    problems = check_causes(rows)
    print(f"{len(problems)} cause problems" + "".join(f"\n  {p}" for p in problems[:20]))
    print(f"wrote {out / 'comparison.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
