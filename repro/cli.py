"""The ``repro`` command line.

    repro list
    repro run NAME|GLOB|all [--scale auto|smoke|reduced|paper] [--jobs N] [--backend B] [--force]
    repro figures [NAME|GLOB|all] [--scale S] [--out DIR]
    repro compare [--scale S] [--out DIR]
    repro data verify|fetch [DATASET ...]
    repro theory [--only PATTERN] [--size small|default]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from repro.core import paths

SCALE_CHOICES = ("auto", "smoke", "reduced", "paper")


def figures_dir() -> Path:
    return paths.figures_dir()


def _scale_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scale", default="auto", choices=SCALE_CHOICES,
                   help="auto = each experiment at 'reduced' where it declares one, else "
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
(`make bench`). Records: $FEDREPRO_RESULTS (./results); outputs: $FEDREPRO_FIGURES
(./figures). Using an algorithm on your own data: docs/usage.md.
"""


SUBCOMMAND_EXAMPLES = {
    "list": ["repro list"],
    "run": ["repro run core.demo --scale smoke -v", "repro run 'relfair.*' --scale smoke",
            "repro run all --jobs 2", "repro run constrfl.table4 --scale paper --force",
            "repro run all --backend dask --address tcp://HOST:8786 --jobs 32"],
    "figures": ["repro figures core.demo --scale smoke", "repro figures --out /tmp/figs"],
    "compare": ["repro compare --scale smoke"],
    "data": ["repro data verify", "repro data fetch adult"],
    "theory": ["repro theory --size small", "repro theory --only 'constrfl.*'"],
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
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                title="commands")

    _command(sub, "list", help="list registered experiments, their scales and cost")

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
    p.add_argument("--force", action="store_true", help="recompute cells that have records")
    p.add_argument("--keep-going", action="store_true",
                   help="a cell that raises is recorded as failed (with its error) and the "
                        "sweep goes on; exit status 1 at the end; the next run retries it")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    _results_arg(p)

    p = _command(sub, "figures", help="render tables and figures from saved records")
    p.add_argument("name", nargs="?", default="all",
                   help="experiment name, a glob such as 'relfair.*', or 'all' (default)")
    _scale_arg(p)
    p.add_argument("--out", type=Path, default=None, help="output directory (default: figures/)")
    _results_arg(p)

    p = _command(sub, "compare", help="reported vs reproduced: comparison.md/.csv, claims.md, "
                                       "REPORT.md")
    _scale_arg(p)
    p.add_argument("--out", type=Path, default=None, help="output directory (default: figures/)")
    _results_arg(p)

    p = _command(sub, "data", help="verify or fetch the raw data files")
    p.add_argument("action", choices=("verify", "fetch"),
                   help="verify: check the sha256 of every manifest file (missing and corrupt "
                        "files are listed); fetch: download what is missing into the cache, "
                        "then verify")
    p.add_argument("datasets", nargs="*", help="limit to these datasets (default: all)")

    p = _command(sub, "theory", help="run the theory checks (same as python -m theory)")
    p.add_argument("--only", default=None, help="glob over check names")
    p.add_argument("--size", default="default", choices=("small", "default"),
                   help="small: the instances the tests use (about a minute); default: the "
                        "full checks (default: %(default)s)")
    p.add_argument("--out", type=Path, default=None, help="output directory (default: figures/)")
    return parser


def cmd_list(args) -> int:
    from repro.core.registry import load_all

    exps = load_all()
    print(f"{'experiment':<28} {'scales':<22} {'cells':<16} cost (2 cores)")
    for name, exp in exps.items():
        n_cells = "/".join(str(len(exp.configs(s))) for s in exp.scales)
        cost = ", ".join(f"{s}: {exp.cost.get(s, '?')}" for s in exp.scales)
        print(f"{name:<28} {'/'.join(exp.scales):<22} {n_cells:<16} {cost}")
        print(f"    {exp.title}")
    return 0


def _select(pattern: str):
    """``registry.select``, whose error for an unknown name lists the known ones, plus the
    closest names when the pattern looks like a typo."""
    import difflib

    from repro.core.registry import load_all, select

    try:
        return select(pattern)
    except KeyError as exc:
        close = difflib.get_close_matches(pattern, list(load_all()), n=3, cutoff=0.6)
        if not close:
            raise
        raise KeyError(f"{exc.args[0]}\ndid you mean: {', '.join(close)}?") from None


def cmd_run(args) -> int:
    from repro.core.runner import run_experiments

    summaries = run_experiments(_select(args.name), args.scale, jobs=args.jobs,
                                backend=args.backend, force=args.force, out=args.results,
                                progress=not args.no_progress, address=args.address,
                                keep_going=args.keep_going)
    failed = 0
    for s in summaries:
        print(f"{s.experiment} [{s.scale}]: {s.computed} computed, {s.cached} cached, "
              f"{s.not_run} not run")
        for reason in sorted({r.reason for r in s.records if not r.ok}):
            print(f"    {reason}" if reason.startswith("failed") else f"    not run: {reason}")
        failed += sum(r.status == "failed" for r in s.records)
    if failed:
        print(f"{failed} cell(s) failed; their errors are in the log above and in their "
              "records; rerun to retry them", file=sys.stderr)
        return 1
    return 0


def _collected(args):
    from repro.core.registry import load_all
    from repro.core.runner import collect

    exps = load_all()
    records = {}
    for name, exp in exps.items():
        scale = exp.resolve_scale(args.scale)
        records[name] = (scale, collect(exp, scale, args.results))
    return exps, records


def cmd_figures(args) -> int:
    from repro.core.runner import collect

    out = args.out or figures_dir()
    for exp in _select(args.name):
        scale = exp.resolve_scale(args.scale)
        recs = collect(exp, scale, args.results)
        if exp.render is None:
            continue
        if not any(r.ok for r in recs):
            print(f"{exp.name} [{scale}]: no records (run `repro run {exp.name} --scale "
                  f"{scale}`); nothing rendered")
            continue
        paths = exp.render(recs, out, scale)
        print(f"{exp.name} [{scale}]: " + ", ".join(p.name for p in paths))
    return 0


def cmd_compare(args) -> int:
    from repro.core.compare import check_claims, compare, summary, write_claims, write_comparison
    from repro.core.overview import write_overview
    from repro.core.report import paper_name, smoke_banner

    out = args.out or figures_dir()
    exps, records = _collected(args)
    rows = compare(exps, records)
    paths = write_comparison(rows, out)
    claims = check_claims(exps, records)
    paths.append(write_claims(claims, out))
    paths.append(write_overview(exps, records, rows, claims, out))
    for paper, c in summary(rows).items():
        print(f"{paper_name(paper)}: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
    cc = Counter(r["verdict"] for r in claims)
    print(f"claims: {dict(cc)}")
    if smoke_banner(rows):  # also at the top of comparison.md and REPORT.md (#14 item 6)
        print(smoke_banner(rows).replace("**", "").replace("`", ""))
    print("wrote " + ", ".join(str(p) for p in paths))
    return 0


def cmd_data(args) -> int:
    from repro.core.data.store import fetch, manifest, verify_all

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
    from theory.__main__ import main as theory_main

    argv = ["--size", args.size]
    if args.only:
        argv += ["--only", args.only]
    if args.out:
        argv += ["--out", str(args.out)]
    return theory_main(argv)


COMMANDS = {"list": cmd_list, "run": cmd_run, "figures": cmd_figures, "compare": cmd_compare,
            "data": cmd_data, "theory": cmd_theory}


def main(argv: list[str] | None = None) -> int:
    from repro.core.progress import configure_logging

    args = build_parser().parse_args(argv)
    configure_logging(args.verbose)
    try:
        return COMMANDS[args.command](args)
    except (KeyError, ValueError, RuntimeError, FloatingPointError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"repro {args.command}: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
