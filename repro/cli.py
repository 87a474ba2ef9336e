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
import json
import os
import sys
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


def cmd_list(args) -> int:
    from repro.engine.registry import load_all

    exps = load_all()
    results = getattr(args, "results", None)
    print(f"{'experiment':<28} {'scales':<22} {'cells':<16} cost (2 cores)")
    for name, exp in exps.items():
        n_cells = "/".join(str(len(exp.configs(s))) for s in exp.scales)
        cost = ", ".join(f"{s}: {exp.cost.get(s, '?')}" for s in exp.scales)
        print(f"{name:<28} {'/'.join(exp.scales):<22} {n_cells:<16} {cost}")
        print(f"    {exp.title}")
        measured = _measured_cost(exp, results)
        if measured:
            print(f"    measured by the records here: {measured}")
        if exp.readings:
            print("    readings: " + ", ".join(r.id + (" (primary)" if r.primary else "")
                                            for r in exp.select_readings("all")))
    return 0


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
    from repro.engine.runner import run_experiments

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
        print(f"{s.experiment} [{s.scale}]: {done} computed, {s.cached} cached, "
              f"{s.not_run} not run{stale}")
        for reason in sorted({r.reason for r in s.records if not r.ok}):
            text = reason if reason.startswith("failed") else f"not run: {reason}"
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


def cmd_figures(args) -> int:
    from repro.engine.code_identity import rendering_stale
    from repro.engine.runner import auto_scale, collect

    out = paths.figures_dir(args.out)
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
        note = "; ".join(sorted({r.stale_note for r in recs if r.ok and r.stale_note}))
        with rendering_stale(note):
            written = exp.render(recs, out, scale)
        marked = f" [{note}: run `repro run {exp.name}` to make them current]" if note else ""
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

    out = paths.figures_dir(args.out)
    exps, records = _collected(args, args.names)
    every = load_all()  # every experiment owns its reported rows, recompared or not
    alternatives = _alternative_readings(args, exps, records)
    rows = compare_readings(every, records, alternatives)
    claims = check_claims(exps, records, alternatives, figures_dir=out)
    if args.names:  # a partial comparison: the other experiments' rows stay as written
        rows = merge(rows, previous_comparison(out), set(exps))
        claims = merge(claims, previous_claims(out, section_link), set(exps))
        print(f"recompared {', '.join(sorted(exps))}; kept the rows and claims of every other "
              f"experiment from {out / 'comparison.csv'} and {out / 'claims.csv'} (or .md)")
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
    from theory.__main__ import main as theory_main  # lazily: repro does not import theory

    try:
        return theory_main(argv)
    except SystemExit as exc:  # argparse's --help / usage error inside python -m theory
        return exc.code if isinstance(exc.code, int) else 2


def cmd_where(args) -> int:
    print(f"repro (fedrepro) {version()}")
    for name, path, why in paths.where(args.results, args.out):
        print(f"{name:<8} {path if path is not None else '-'}\n         ({why})")
    return 0


COMMANDS = {"list": cmd_list, "run": cmd_run, "figures": cmd_figures, "compare": cmd_compare,
            "data": cmd_data, "theory": cmd_theory, "where": cmd_where}


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
        return COMMANDS[args.command](args)
    except BrokenPipeError:  # `repro list | head`: the reader left; say nothing more
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - the interpreter flushes at exit
        return 0
    except KeyboardInterrupt:
        print(f"repro {args.command}: interrupted; workers stopped, finished records kept "
              "(rerun to continue)", file=sys.stderr)
        return 130
    except (KeyError, ValueError, RuntimeError, FloatingPointError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"repro {args.command}: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
