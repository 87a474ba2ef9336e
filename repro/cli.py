"""The ``repro`` command line.

repro list
repro run NAME|GLOB|all [--scale auto|smoke|reduced|paper] [--jobs N] [--backend B] [--force]
repro figures [NAME|GLOB|all] [--scale S] [--out DIR]
repro compare [--scale S] [--out DIR]
repro data verify|fetch [DATASET ...]
repro theory [any flag of python -m theory]
repro where [--results DIR] [--out DIR]
repro --version
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import warnings
from collections import Counter
from pathlib import Path

from repro.core import paths

SCALE_CHOICES = ("auto", "smoke", "reduced", "extended", "paper")


def version() -> str:
    """The installed distribution's version (the source tree's when it is not installed)."""
    from importlib import metadata

    try:
        return metadata.version("fedrepro")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def _scale_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scale", default="auto", choices=SCALE_CHOICES,
                   help="auto = each experiment at 'extended' where it declares one and "
                        "records of it exist, else at 'reduced' where it declares one, else "
                        "'paper' (default: %(default)s)")


def _results_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--results", type=Path, default=None,
                   help="run-record directory (default: $FEDREPRO_RESULTS or ./results)")


EPILOG = """\
examples:
  repro list                                  experiments, their scales, cells and cost
  repro run core.demo --scale smoke -v        run one experiment (seconds)
  repro run 'constrfl.*' --scale smoke        every experiment of a paper (glob)
  repro run all --jobs 2                      everything missing, SCALE=auto (hours)
  repro figures --scale smoke                 tables and figures from the saved records
  repro compare --scale smoke                 comparison.md, claims.md, REPORT.md
  repro theory --size small                   the theory checks (theory.md)
  repro data verify                           sha256 of every data file
  repro verify --sample 20                    recompute 20 committed cells, equal or not

results: figures/REPORT.md (start here), comparison.md, claims.md, theory.md, bench.md
(`make bench`). Records: --results, $FEDREPRO_RESULTS, the checkout's results/ when run inside
a fedrepro checkout, else ./results; outputs: --out, $FEDREPRO_FIGURES, the checkout's figures/,
else ./figures; `repro where` prints the places in use and why. Using an algorithm on your own
data: docs/usage.md.
"""


SUBCOMMAND_EXAMPLES = {
    "list": ["repro list"],
    "run": ["repro run core.demo --scale smoke -v", "repro run 'relfair.*' --scale smoke",
            "repro run all --scale smoke --list-stale",
            "repro run all --jobs 2", "repro run constrfl.table4 --scale paper --force",
            "repro run all --backend dask --address tcp://HOST:8786 --jobs 32"],
    "figures": ["repro figures core.demo --scale smoke", "repro figures --out /tmp/figs"],
    "compare": ["repro compare --scale smoke",
                "repro compare 'constrfl.*'    # recompare constrfl, keep the other rows"],
    "data": ["repro data verify", "repro data fetch adult"],
    "theory": ["repro theory --size small", "repro theory --only 'constrfl.*'"],
    "where": ["repro where", "repro where --results /scratch/results"],
    "verify": ["repro verify --sample 20", "repro verify 'relfair.*' --sample 5",
               "repro verify --sample 10 --max-seconds 60 --out figures/smoke"],
}


def _command(sub, name: str, help: str) -> argparse.ArgumentParser:
    """A subcommand whose own ``--help`` repeats its summary and shows examples."""
    examples = "\n".join(f"  {e}" for e in SUBCOMMAND_EXAMPLES[name])
    p = sub.add_parser(name, help=help, description=help[0].upper() + help[1:] + ".",
                       epilog=f"examples:\n{examples}",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    # -v after the subcommand too (`repro run NAME -v`); SUPPRESS keeps a -v given before it
    p.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS,
                   help="-v: one line per cell; -vv: every logged round")
    return p


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="repro", description="Reproduce the fedrepro papers' tables, figures and claims "
        "(papers 000-004: fairvfl, relfair, constrfl, fedmm).", epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="-v: one line per cell; -vv: every logged round")
    parser.add_argument("--version", action="version", version=f"repro (fedrepro) {version()}",
                        help="print the installed fedrepro version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                title="commands")

    p = _command(sub, "list", help="list registered experiments, their scales and cost (declared, "
                                    "and measured by the records found)")
    _results_arg(p)

    p = _command(sub, "run", help="run an experiment's cells (skips recorded ones)")
    p.add_argument("name", help="experiment name, a glob such as 'constrfl.*', or 'all'")
    _scale_arg(p)
    p.add_argument("--jobs", type=int, default=1, help="parallel workers (default: 1)")
    p.add_argument("--backend", default="loky", choices=("loky", "dask", "ray"),
                   help="loky: local processes; dask/ray: a cluster (needs the 'dist' extra; "
                        "DASK_SCHEDULER_ADDRESS / RAY_ADDRESS select an existing one)")
    p.add_argument("--address", "--scheduler", dest="address", default=None,
                   help="an existing cluster: Dask scheduler (tcp://host:8786) or Ray head "
                        "(ray://host:10001); default $DASK_SCHEDULER_ADDRESS / $RAY_ADDRESS, "
                        "else a local cluster of --jobs workers")
    p.add_argument("--reading", default="all", metavar="ID|all|primary",
                   help="the readings of the paper to run (default: all declared; "
                        "`repro list` names them)")
    p.add_argument("--force", action="store_true", help="recompute cells that have records")
    p.add_argument("--keep-going", action="store_true",
                   help="a cell that raises is recorded as failed (with its error) and the "
                        "sweep goes on; exit status 1 at the end; the next run retries it")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--list-stale", action="store_true",
                   help="list the records made by other code (their cells would be "
                        "recomputed) and exit without running anything")
    _results_arg(p)

    p = _command(sub, "figures", help="render tables and figures from saved records")
    p.add_argument("name", nargs="?", default="all",
                   help="experiment name, a glob such as 'relfair.*', or 'all' (default)")
    _scale_arg(p)
    p.add_argument("--out", type=Path, default=None, help="output directory (default: figures/)")
    _results_arg(p)

    p = _command(sub, "compare", help="reported vs reproduced: comparison.md/.csv, claims.md, "
                                       "REPORT.md")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="recompare only these experiments (names or globs); every other "
                        "experiment's rows and claims are kept as the previous comparison.csv "
                        "and claims.csv in the output folder hold them, marked 'kept' with the "
                        "commit that wrote them (default: recompare everything)")
    _scale_arg(p)
    p.add_argument("--out", type=Path, default=None, help="output directory (default: figures/)")
    _results_arg(p)

    p = _command(sub, "verify", help="recompute a random sample of the committed cells "
                                      "(figures/cells/*.csv) and say, per cell, equal, "
                                      "different (both numbers) or stale code")
    p.add_argument("name", nargs="?", default="*",
                   help="experiment name or glob (default: every experiment with a ledger)")
    p.add_argument("--sample", type=int, default=20, metavar="N",
                   help="how many cells to recompute (default 20; 0: every cell)")
    p.add_argument("--seed", type=int, default=0, help="seed of the draw (default 0)")
    p.add_argument("--max-seconds", type=float, default=float("inf"), metavar="S",
                   help="draw only cells whose recorded wall time is at most S seconds")
    p.add_argument("--out", type=Path, default=None,
                   help="the figures folder whose cells/ ledger is checked (default: figures/)")

    p = _command(sub, "data", help="verify or fetch the raw data files")
    p.add_argument("action", choices=("verify", "fetch"),
                   help="verify: check the sha256 of every manifest file (missing and corrupt "
                        "files are listed); fetch: download what is missing into the cache, "
                        "then verify")
    p.add_argument("datasets", nargs="*", help="limit to these datasets (default: all)")

    p = _command(sub, "theory", help="run the theory checks: every argument is passed to "
                                      "python -m theory (see `repro theory --help`)")
    p.add_argument("theory_args", nargs=argparse.REMAINDER,
                   help="the flags of python -m theory (--only, --size, --out, --all, ...)")

    p = _command(sub, "where", help="print where records, outputs and data are read and "
                                     "written, and why")
    p.add_argument("--out", type=Path, default=None, help="as `repro figures --out`")
    _results_arg(p)
    return parser


def _measured_cost(exp, results) -> str:
    """What the current records under ``results`` took, per scale: cells recorded of the
    scale's primary-reading cells and the sum of their wall seconds (stale records not counted,
    nor the time of a record copied from a run another experiment computed: ``shared``).
    """
    from repro.engine.runner import collect

    parts = []
    for s in exp.scales:
        recs = collect(exp, s, results, include_stale=False)
        if recs:
            own = [r for r in recs if "shared_from" not in r.timings]
            wall = sum(float(r.timings.get("wall_s", 0.0)) for r in own)
            shared = f" ({len(recs) - len(own)} shared with another experiment, not summed)"
            parts.append(f"{s}: {len(recs)}/{len(exp.configs(s))} cells, "
                         + (f"{wall / 3600:.2f} h" if wall >= 3600 else f"{wall:.0f} s")
                         + " summed over the cells' wall times"
                         + (shared if len(own) < len(recs) else ""))
    return "; ".join(parts)


def run_cells(exp, scale: str) -> int:
    """The cells ``repro run NAME --scale SCALE`` runs (every reading, the default): a cell
    two readings share counts once, as the runner computes it once.
    """
    from repro.engine.records import canonical_json

    return len({canonical_json(config) for reading in exp.select_readings("all")
                for _, config in exp.reading_configs(scale, reading)})


def cmd_list(args) -> int:
    import textwrap

    from repro.engine.registry import load_all

    exps = load_all()
    results = getattr(args, "results", None)
    rows = [("experiment", "scales", "cells `run` runs")]
    for name, exp in exps.items():
        rows.append((name, "/".join(exp.scales),
                     "/".join(str(run_cells(exp, s)) for s in exp.scales)))
    widths = [max(len(r[i]) for r in rows) for i in range(2)]
    print(f"{rows[0][0]:<{widths[0]}}  {rows[0][1]:<{widths[1]}}  {rows[0][2]} (per scale, "
          "every reading); cost on 2 cores below each")
    wrap = textwrap.TextWrapper(width=100, initial_indent="    cost: ",
                                subsequent_indent="          ", break_on_hyphens=False)
    seen_cost: dict[str, str] = {}
    for (name, scales, cells), exp in zip(rows[1:], exps.values(), strict=True):
        print(f"{name:<{widths[0]}}  {scales:<{widths[1]}}  {cells}")
        print(f"    {exp.title}")
        cost = ", ".join(f"{s}: {exp.cost.get(s, '?')}" for s in exp.scales)
        if cost in seen_cost:  # experiments sharing their runs share one cost text
            print(f"    cost: as {seen_cost[cost]} (the same runs)")
        else:
            seen_cost[cost] = name
            print(wrap.fill(cost))
        measured = _measured_cost(exp, results)
        if measured:
            print(f"    measured by the records here: {measured}")
        if exp.readings:
            print("    readings: " + ", ".join(r.id + (" (primary)" if r.primary else "")
                                            for r in exp.select_readings("all")))
    _list_methods(exps)
    return 0


def _list_methods(exps) -> None:
    """The library methods of every paper (``repro.<paper>.methods``) and the experiments
    that run each one; a method no experiment names says so (issue 32).
    """
    from repro.engine.registry import library_methods

    print("\nlibrary methods (repro.<paper>.methods; a table runs the methods it names)")
    for paper, methods in library_methods().items():
        print(f"{paper}")
        for name, method in methods.items():
            users = [n for n, e in exps.items()
                     if n.split(".")[0] == paper and name in e.methods]
            where = ", ".join(users) if users else "in no table (library only)"
            print(f"    {name}: {method.summary} [{where}]")


def _select(pattern: str):
    """``registry.select``, whose error for an unknown name lists the known ones, plus the
    closest names when the pattern looks like a typo.
    """
    import difflib

    from repro.engine.registry import load_all, select

    try:
        return select(pattern)
    except KeyError as exc:
        close = difflib.get_close_matches(pattern, list(load_all()), n=3, cutoff=0.6)
        if not close:
            raise
        raise KeyError(f"{exc.args[0]}\ndid you mean: {', '.join(close)}?") from None


def cmd_run(args) -> int:
    from repro.engine.runner import BUSY_REASON, run_experiments

    if args.list_stale:
        return _list_stale(args)
    summaries = run_experiments(_select(args.name), args.scale, jobs=args.jobs,
                                backend=args.backend, force=args.force, out=args.results,
                                progress=not args.no_progress, address=args.address,
                                keep_going=args.keep_going, reading=args.reading)
    failed = missing_data = cells = 0
    for s in summaries:
        stale = f" ({s.stale} stale: made by other code, recomputed)" if s.stale else ""
        # a cell that ended not_run or failed was attempted, not computed: count it once
        done = s.computed - (s.not_run - s.busy)
        # a cell another live run holds (its lock) is in progress there, not "not run" here
        busy = f", {s.busy} in progress in another run" if s.busy else ""
        print(f"{s.experiment} [{s.scale}]: {done} computed, {s.cached} cached{busy}, "
              f"{s.not_run - s.busy} not run{stale}")
        for reason in sorted({r.reason for r in s.records if not r.ok}):
            text = (reason if reason.startswith("failed") else f"in progress: {reason}"
                    if reason.startswith(BUSY_REASON) else f"not run: {reason}")
            print("    " + text.replace("\n", "\n    "))
        failed += sum(r.status == "failed" for r in s.records)
        missing_data += sum(r.reason.startswith("data unavailable") for r in s.records)
        cells += len(s.records)
    if failed:
        print(f"{failed} cell(s) failed; their errors are in the log above and in their "
              "records; rerun to retry them", file=sys.stderr)
        return 1
    if cells and missing_data == cells:
        print("nothing ran: every cell's data is missing (see above for where it was looked "
              "for and how to get it)", file=sys.stderr)
        return 1
    return 0


def _list_stale(args) -> int:
    from repro.engine.runner import auto_scale, stale_records

    total = 0
    for exp in _select(args.name):
        stale = stale_records(exp, auto_scale(exp, args.scale, args.results), args.results)
        for rec in stale.values():
            print(f"{exp.name} {json.dumps(rec.config, sort_keys=True)}: {rec.stale_note}, "
                  f"commit {rec.commit or 'unknown'}, finished "
                  f"{rec.timings.get('finished', '?')}")
        if stale:
            print(f"{len(stale)} stale record(s) of {exp.name}: `repro run {exp.name}` "
                  "recomputes them")
        total += len(stale)
    print(f"{total} stale record(s) in all")
    return 0


def _collected(args, names: list[str] | None = None):
    from repro.engine.registry import load_all
    from repro.engine.runner import auto_scale, collect

    exps = load_all()
    if names:  # a partial comparison: records of the chosen experiments only
        chosen = {e.name for pattern in names for e in _select(pattern)}
        exps = {n: e for n, e in exps.items() if n in chosen}
    records = {}
    lacking = []
    for name, exp in exps.items():
        if args.scale != "auto" and args.scale not in exp.scales:
            lacking.append(name)
            records[name] = (args.scale, [])
            continue
        scale = auto_scale(exp, args.scale, args.results)
        records[name] = (scale, collect(exp, scale, args.results))
    if lacking:
        print(f"no scale {args.scale!r} declared by {', '.join(lacking)}: their rows are "
              "not_run", file=sys.stderr)
    return exps, records


def _alternative_readings(args, exps, records):
    """Experiment -> reading id -> (scale, records) for every non-primary reading."""
    from repro.engine.runner import collect

    out = {}
    for name, exp in exps.items():
        scale = records[name][0]
        alts = [r for r in exp.select_readings("all") if not r.primary]
        if alts and scale in exp.scales:
            out[name] = {r.id: (scale, collect(exp, scale, args.results, reading=r))
                         for r in alts}
    return out


def _every_reading(exp, scale, results, primary):
    """The records of every reading of ``exp`` (each cell once): the ledger's rows."""
    from repro.engine.runner import collect

    recs = {r.key: r for r in primary}
    for reading in exp.select_readings("all"):
        if not reading.primary:
            recs.update((r.key, r) for r in collect(exp, scale, results, reading=reading)
                        if r.key not in recs)
    return list(recs.values())


def _writable_outputs(folder: Path) -> Path:
    """Create ``folder`` if needed and check a file can be written in it, else a one-line
    error naming it (a read-only ``--out`` used to end in a 22-line traceback).
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".write-test-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutputsNotWritable(
            f"output folder {folder} is not writable ({type(exc).__name__}: "
            f"{exc.strerror or exc}); nothing was written. Choose another with --out DIR or "
            "$FEDREPRO_FIGURES (`repro where` shows the places in use)") from None
    return folder


class OutputsNotWritable(RuntimeError):
    """The output folder cannot be written: said before anything is rendered."""


def _outputs_folder(args, smoke: bool, complete: bool, used: dict) -> Path:
    place = paths.outputs_place(args.out, smoke=smoke, complete=complete)
    if place.path not in used:
        used[place.path] = _writable_outputs(place.path)
        base = paths.figures_dir(args.out)
        if place.path != base:
            print(f"outputs in {place.path} ({place.why})")
    return place.path


def cmd_figures(args) -> int:
    from repro.engine.code_identity import rendering_stale
    from repro.engine.report import coverage_of, rendering_coverage
    from repro.engine.runner import auto_scale, collect, is_complete
    from repro.engine.verify import write_ledger

    used: dict = {}
    for exp in _select(args.name):
        scale = auto_scale(exp, args.scale, args.results)
        recs = collect(exp, scale, args.results)
        if exp.render is None:
            continue
        if not any(r.ok for r in recs):
            if recs:  # every cell ran and ended not_run or failed: say why, not "run it"
                why = sorted({r.reason.splitlines()[0].split(". ")[0][:120] for r in recs})
                print(f"{exp.name} [{scale}]: {len(recs)} cells, none with a result "
                      f"({'; '.join(why[:2])}); nothing rendered")
            else:
                print(f"{exp.name} [{scale}]: no records (run `repro run {exp.name} --scale "
                      f"{scale}`); nothing rendered")
            continue
        complete = is_complete(exp, scale, recs)
        out = _outputs_folder(args, scale == "smoke", complete, used)
        note = "; ".join(sorted({r.stale_note for r in recs if r.ok and r.stale_note}))
        with rendering_stale(note), rendering_coverage(coverage_of(exp, scale, recs)):
            written = exp.render(recs, out, scale)
        ledger = write_ledger(exp, scale, _every_reading(exp, scale, args.results, recs), out)
        written += [ledger] if ledger is not None else []
        marked = f" [{note}: run `repro run {exp.name}` to make them current]" if note else ""
        if not complete:  # e.g. a quarantined record: 2 of 3 seeds, said, not passed over
            total = len(exp.configs(scale))
            marked += (f" [INCOMPLETE: {sum(r.ok for r in recs)} of {total} cells have a "
                       f"result; `repro run {exp.name} --scale {scale}` fills in the rest]")
        print(f"{exp.name} [{scale}]: " + ", ".join(p.name for p in written) + marked)
    return 0


def cmd_compare(args) -> int:
    from repro.engine.claimcheck import counts_line
    from repro.engine.compare import (
        check_claims,
        compare_readings,
        is_primary,
        reading_counts,
        section_link,
        summary,
        write_claims,
        write_comparison,
    )
    from repro.engine.kept import merge, previous_claims, previous_comparison
    from repro.engine.overview import write_overview
    from repro.engine.registry import load_all
    from repro.engine.report import paper_name, smoke_banner
    from repro.engine.runner import is_complete

    exps, records = _collected(args, args.names)
    every = load_all()  # every experiment owns its reported rows, recompared or not
    alternatives = _alternative_readings(args, exps, records)
    smoke = any(scale == "smoke" for scale, _ in records.values())
    complete = all(is_complete(exps[n], scale, recs) for n, (scale, recs) in records.items()) \
        and all(is_complete(exps[n], scale, recs, reading=_reading(exps[n], rid))
                for n, per in alternatives.items() for rid, (scale, recs) in per.items())
    base = paths.figures_dir(args.out)
    out = _outputs_folder(args, smoke, complete, {})
    rows = compare_readings(every, records, alternatives)
    # fedmm's claims fall back on the committed per-seed tables, of the scale they were made at
    claims = check_claims(exps, records, alternatives, figures_dir=out if smoke else base)
    if args.names:  # a partial comparison: the other experiments' rows stay as written
        keep = out if smoke or (out / "comparison.csv").is_file() else base
        rows = merge(rows, previous_comparison(keep), set(exps))
        claims = merge(claims, previous_claims(keep, section_link), set(exps))
        print(f"recompared {', '.join(sorted(exps))}; kept the rows and claims of every other "
              f"experiment from {keep / 'comparison.csv'} and {keep / 'claims.csv'} (or .md)")
    written = write_comparison(rows, out)
    written.append(write_claims(claims, out))
    written.append(write_overview(every, records, rows, claims, out))
    for paper, c in summary(rows).items():
        print(f"{paper_name(paper)}: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
    print(f"claims: {counts_line(claims)}")  # the sentence claims.md and REPORT.md print
    for paper, per in reading_counts([r for r in rows if not is_primary(r)]).items():
        for (name, rid, _), c in per.items():
            print(f"  {paper_name(paper)} {name} reading {rid}: "
                  + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
    if smoke_banner(rows):  # also at the top of comparison.md and REPORT.md (#14 item 6)
        print(smoke_banner(rows).replace("**", "").replace("`", ""))
    print("wrote " + ", ".join(str(p) for p in written))
    return 0


def cmd_verify(args) -> int:
    from repro.engine.registry import load_all
    from repro.engine.verify import EQUAL, read_ledger, sample_rows, verify

    figures = paths.figures_dir(args.out)
    rows = read_ledger(figures, args.name)
    if not rows:
        print(f"no ledger rows for {args.name!r} under {figures / 'cells'} (written by "
              "`repro figures`)", file=sys.stderr)
        return 2
    chosen = sample_rows(rows, args.sample if args.sample > 0 else len(rows), args.seed,
                         args.max_seconds)
    print(f"recomputing {len(chosen)} of {len(rows)} committed cells ({figures / 'cells'})",
          flush=True)
    outcomes = verify(chosen, load_all(), echo=lambda o: print(o.line(), flush=True))
    counts = {}
    for o in outcomes:
        counts[o.verdict] = counts.get(o.verdict, 0) + 1
    print(", ".join(f"{n} {v}" for v, n in sorted(counts.items())))
    return 0 if counts.get(EQUAL, 0) == len(outcomes) else 1


def _reading(exp, rid: str):
    return next(r for r in exp.select_readings("all") if r.id == rid)


def cmd_data(args) -> int:
    from repro.core.data.store import fetch, manifest, verify_all

    known = sorted({d for d, _ in manifest()})
    unknown = [d for d in args.datasets if d not in known]
    if unknown:
        raise ValueError(f"unknown dataset {unknown[0]!r}" + (
            f" (and {', '.join(map(repr, unknown[1:]))})" if unknown[1:] else "")
            + f"; the manifest's datasets: {', '.join(known)}")
    if args.action == "fetch":
        names = args.datasets or sorted({d for d, _ in manifest()})
        for (d, f) in sorted(manifest()):
            if d in names:
                fetch(d, f)
        print(f"fetched/verified every file of {', '.join(names)}")
        return 0
    counts: Counter = Counter()
    per_dataset: dict[str, Counter] = {}
    for rec, status, detail in verify_all(args.datasets or None):
        counts[status] += 1
        per_dataset.setdefault(rec.dataset, Counter())[status] += 1
        if status != "ok":
            print(f"{status.upper()}: {rec.relpath}: {detail}", file=sys.stderr)
    for d, c in per_dataset.items():
        print(f"{d:<30} ok {c['ok']:>4}  corrupt {c['corrupt']:>3}  missing {c['missing']:>3}")
    total = sum(counts.values())
    print(f"{total} files: {counts['ok']} ok, {counts['corrupt']} corrupt, "
          f"{counts['missing']} missing")
    return 0 if counts["corrupt"] == 0 and counts["missing"] == 0 else 1


def cmd_theory(args) -> int:
    return _theory_main(list(args.theory_args))


def _theory_main(argv: list[str]) -> int:
    """``python -m theory`` with ``argv``: every flag it has, its help and its exit status."""
    _theory_package()
    from theory.__main__ import main as theory_main  # lazily: repro does not import theory

    try:
        return theory_main(argv)
    except SystemExit as exc:  # argparse's --help / usage error inside python -m theory
        return exc.code if isinstance(exc.code, int) else 2


def _theory_package() -> None:
    """Make ``theory`` name fedrepro's checks: the wheel ships them as ``repro.theory``
    (setup.py) and their modules import each other as ``theory.*``. A ``theory`` already
    imported from the same folder (the checkout's) is kept, anything else replaced.
    """
    try:
        import repro.theory as ours
    except ModuleNotFoundError:  # a checkout that is not installed: its top-level theory/
        return
    current = sys.modules.get("theory")
    if current is not ours and list(getattr(current, "__path__", [])) != list(ours.__path__):
        sys.modules["theory"] = ours


def cmd_where(args) -> int:
    print(f"repro (fedrepro) {version()}")
    for name, path, why in paths.where(args.results, args.out):
        print(f"{name:<8} {path if path is not None else '-'}\n         ({why})")
    return 0


COMMANDS = {"list": cmd_list, "run": cmd_run, "figures": cmd_figures, "compare": cmd_compare,
            "data": cmd_data, "theory": cmd_theory, "where": cmd_where,
            "verify": cmd_verify}


def _theory_argv(argv: list[str]) -> list[str] | None:
    """The arguments after ``theory`` when that is the command (global -v flags before it)."""
    i = 0
    while i < len(argv) and argv[i] in ("-v", "-vv", "-vvv", "--verbose"):
        i += 1
    if i < len(argv) and argv[i] == "theory":
        return argv[i + 1:]
    return None


# joblib's loky backend starts a resource tracker, a process that ignores SIGINT and, once the
# workers are gone, unlinks what they had registered. After a Ctrl-C the workers' own cleanup
# may already have removed those files, and the tracker then warns, e.g.
# "resource_tracker: /dev/shm/...: FileNotFoundError(2, ...)", on the terminal after the
# one-line interrupt message (seen in CI, stop 23). The tracker reads its warning filters from
# the interpreter flags it is started with (``sys.warnoptions``), so one filter here, set
# before any worker exists, silences that module alone; nothing else is filtered.
_TRACKER_FILTER = "ignore::UserWarning:joblib.externals.loky.backend.resource_tracker"


def _quiet_tracker_after_interrupt() -> None:
    """Pass a warning filter for loky's resource tracker on to the processes it starts."""
    if _TRACKER_FILTER not in sys.warnoptions:
        sys.warnoptions.append(_TRACKER_FILTER)


def _interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` was raised while a KeyboardInterrupt unwound (its context chain)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__context__ or exc.__cause__
    return False


def _silence_output() -> None:
    """Point stdout and stderr at /dev/null: the reader of the pipe is gone, and the
    interpreter's flush at exit would otherwise print a BrokenPipeError of its own.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            os.dup2(devnull, stream.fileno())
        except (OSError, ValueError, AttributeError):  # not a real file (a test's capture)
            pass
    os.close(devnull)
    sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - the interpreter flushes at exit


# joblib's loky executor restarts a worker whose memory grew by more than 300 MB over its
# jobs (its leak guard: the worker returns its job's result first, then exits, and a new one
# is started; no job is lost) and says so with a UserWarning, "A worker stopped while some
# jobs were given to the executor ...", printed with its source line, a bare
# `warnings.warn(`. Our cells hold data sets and torch models, so the guard fires in long
# sweeps: it is explained once, in one line, instead.
WORKER_RESTART = "A worker stopped while some jobs were given to the executor"
WORKER_RESTART_NOTE = (
    "note: joblib restarted a worker process whose memory had grown by more than 300 MB "
    "(its leak guard; the worker returned its cell's result before it stopped, no cell is "
    "lost)")


@contextlib.contextmanager
def _one_line_warnings():
    """Warnings as one line each (``file:line: Category: message``, no source line), the
    loky worker restart as :data:`WORKER_RESTART_NOTE`, once.
    """
    original = warnings.showwarning
    said = []

    def show(message, category, filename, lineno, file=None, line=None):
        text = str(message)
        if text.startswith(WORKER_RESTART):
            if said:
                return
            said.append(1)
            text = WORKER_RESTART_NOTE
        else:
            text = f"{filename}:{lineno}: {category.__name__}: {text}"
        from tqdm.auto import tqdm

        try:
            tqdm.write(text, file=file or sys.stderr)  # below any progress bar
        except OSError:
            pass

    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = original


def main(argv: list[str] | None = None) -> int:
    from repro.engine.progress import configure_logging

    argv = sys.argv[1:] if argv is None else list(argv)
    theory_argv = _theory_argv(argv)
    if theory_argv is not None:
        # argparse cannot hand a subcommand's leading --flags on untouched: pass them directly
        return _theory_main(theory_argv)
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose)
    _quiet_tracker_after_interrupt()
    try:
        with _one_line_warnings():
            return COMMANDS[args.command](args)
    except BrokenPipeError as exc:  # `repro list | head`: the reader left; say nothing more
        _silence_output()
        # `repro run ... | tee log` and Ctrl-C: the interrupt reaches tee too, and the pipe
        # breaks while the KeyboardInterrupt unwinds: still an interrupt (130), not success
        return 130 if _interrupted(exc) else 0
    except KeyboardInterrupt:
        try:
            print(f"repro {args.command}: interrupted; workers stopped, finished records kept "
                  "(rerun to continue)", file=sys.stderr)
        except OSError:  # stderr was piped into the reader that the same Ctrl-C stopped
            _silence_output()
        return 130
    except (KeyError, ValueError, RuntimeError, FloatingPointError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"repro {args.command}: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
