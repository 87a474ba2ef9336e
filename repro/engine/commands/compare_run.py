"""``repro compare``: the comparison pipeline, from the records to the written pages.

:func:`run_compare` collects the records of every experiment (or of the named ones: a partial
comparison, whose other rows and claims are kept from the committed ``comparison.csv`` and
``claims.csv``, :mod:`repro.engine.records.kept`, written to the partial folder, never to the
committed
one) under every reading, compares them with the reported
values (:func:`repro.engine.compare.compare.compare_readings`), checks the claims, writes
``comparison.md/.csv``, ``claims.md/.csv`` and ``REPORT.md`` into the folder
:func:`repro.engine.commands.outputs.outputs_folder` picks, and prints the verdict counts.
"""

from __future__ import annotations

import sys
from pathlib import Path

from repro.core import paths
from repro.engine.commands.figures_run import partial_run
from repro.engine.commands.outputs import outputs_folder
from repro.engine.compare.claimcheck import counts_line
from repro.engine.compare.compare import (
    check_claims,
    compare_readings,
    is_primary,
    reading_counts,
    section_link,
    summary,
    write_claims,
    write_comparison,
)
from repro.engine.records.kept import merge, previous_claims, previous_comparison
from repro.engine.registry import load_all, select_suggesting
from repro.engine.report.overview import write_overview
from repro.engine.report.report import paper_name, smoke_banner
from repro.engine.run.planning import auto_scale, collect, is_complete


def collected(scale: str, results: Path | None, names: list[str] | None = None):
    """``(experiments, records)``: experiment name -> ``(scale, records)`` of its primary
    reading, for every experiment or those ``names`` (names or globs) choose; an experiment
    that does not declare ``scale`` gets no records (its rows are ``not_run``, said on stderr).
    """
    exps = load_all()
    if names:  # a partial comparison: records of the chosen experiments only
        chosen = {e.name for pattern in names for e in select_suggesting(pattern)}
        exps = {n: e for n, e in exps.items() if n in chosen}
    records = {}
    lacking = []
    for name, exp in exps.items():
        if scale != "auto" and scale not in exp.scales:
            lacking.append(name)
            records[name] = (scale, [])
            continue
        s = auto_scale(exp, scale, results)
        records[name] = (s, collect(exp, s, results))
    if lacking:
        print(f"no scale {scale!r} declared by {', '.join(lacking)}: their rows are "
              "not_run", file=sys.stderr)
    return exps, records


def alternative_readings(results: Path | None, exps, records):
    """Experiment -> reading id -> (scale, records) for every non-primary reading."""
    out = {}
    for name, exp in exps.items():
        scale = records[name][0]
        alts = [r for r in exp.select_readings("all") if not r.primary]
        if alts and scale in exp.scales:
            out[name] = {r.id: (scale, collect(exp, scale, results, reading=r))
                         for r in alts}
    return out


def reading_of(exp, rid: str):
    return next(r for r in exp.select_readings("all") if r.id == rid)


def run_compare(names: list[str], scale: str, results: Path | None, out: Path | None) -> int:
    """Compare, check the claims, write the pages, print the counts; the exit status (0)."""
    exps, records = collected(scale, results, names)
    every = load_all()  # every experiment owns its reported rows, recompared or not
    alternatives = alternative_readings(results, exps, records)
    smoke = any(s == "smoke" for s, _ in records.values())
    complete = all(is_complete(exps[n], s, recs) for n, (s, recs) in records.items()) \
        and all(is_complete(exps[n], s, recs, reading=reading_of(exps[n], rid))
                for n, per in alternatives.items() for rid, (s, recs) in per.items())
    base = paths.figures_dir(out)
    part = partial_run(exps.values()) if names else ""
    folder = outputs_folder(out, smoke, complete, {}, part)
    rows = compare_readings(every, records, alternatives)
    # fedmm's claims fall back on the committed per-seed tables, of the scale they were made at
    claims = check_claims(exps, records, alternatives, figures_dir=folder if smoke else base)
    if names:  # a partial comparison: the other experiments' rows stay as written
        # smoke: the smoke folder's earlier rows; else the committed rows, never an earlier
        # partial comparison's
        keep = folder if smoke else base
        rows = merge(rows, previous_comparison(keep), set(exps))
        claims = merge(claims, previous_claims(keep, section_link), set(exps))
        print(f"recompared {', '.join(sorted(exps))}; kept the rows and claims of every other "
              f"experiment from {keep / 'comparison.csv'} and {keep / 'claims.csv'} (or .md)")
    written = write_comparison(rows, folder)
    written.append(write_claims(claims, folder))
    written.append(write_overview(every, records, rows, claims, folder))
    for paper, c in summary(rows).items():
        print(f"{paper_name(paper)}: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
    print(f"claims: {counts_line(claims)}")  # the sentence claims.md and REPORT.md print
    for paper, per in reading_counts([r for r in rows if not is_primary(r)]).items():
        for (name, rid, _), c in per.items():
            print(f"  {paper_name(paper)} {name} reading {rid}: "
                  + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
    if smoke_banner(rows):  # also at the top of comparison.md and REPORT.md
        print(smoke_banner(rows).replace("**", "").replace("`", ""))
    print("wrote " + ", ".join(str(p) for p in written))
    return 0
