"""The ``repro`` command line.

repro list [--details]
repro run NAME|GLOB|all [--scale auto|smoke|reduced|paper] [--jobs N] [--backend B] [--force]
repro figures [NAME|GLOB|all] [--scale S] [--out DIR]
repro compare [NAME ...] [--scale S] [--out DIR] [--against-committed]
repro verify [NAME] [--sample N] [--max-seconds S]
repro data verify|fetch [DATASET ...]
repro theory [any flag of python -m theory]
repro where [--results DIR] [--out DIR]
repro --version

This module parses the arguments and calls the engine, which does and says each command's work
(:mod:`repro.engine.commands.listing`, :mod:`~repro.engine.run.runner` and
:mod:`~repro.engine.commands.run_report`,
:mod:`~repro.engine.commands.figures_run`, :mod:`~repro.engine.commands.compare_run`,
:mod:`~repro.engine.commands.verify`, :mod:`~repro.engine.commands.data_command`). A command that
ends in an
exception says it in one line (:mod:`repro.engine.commands.errors`): an error raised on purpose
about
bad input as its message (exit status 2), anything else with its type and the ``file:line``
where it arose (exit status 1; ``-v`` prints the traceback).
"""

from __future__ import annotations

import argparse
import sys
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
  repro list                                  experiments, their scales, cells, what is here
  repro list --details                        ... and titles, costs, readings, methods
  repro run core.demo --scale smoke -v        run one experiment (seconds)
  repro run 'constrfl.*' --scale smoke        every experiment of a paper (glob)
  repro run all --jobs 2                      everything missing, SCALE=auto (hours)
  repro figures --scale smoke                 tables and figures from the saved records
  repro compare --scale smoke                 comparison.md, claims.md, REPORT.md
  repro theory --size small                   the theory checks (theory.md)
  repro data verify                           sha256 of every data file
  repro verify --sample 20                    recompute 20 committed cells, within round-off?

results: figures/REPORT.md (start here), comparison.md, claims.md, theory.md, bench.md
(`make bench`). Records: --results, $FEDREPRO_RESULTS, the checkout's results/ when run inside
a fedrepro checkout, else ./results; outputs: --out, $FEDREPRO_FIGURES, the checkout's figures/,
else ./figures; `repro where` prints the places in use and why. Using an algorithm on your own
data: docs/usage.md.
"""


SUBCOMMAND_EXAMPLES = {
    "list": ["repro list", "repro list --details"],
    "run": ["repro run core.demo --scale smoke -v", "repro run 'relfair.*' --scale smoke",
            "repro run all --scale smoke --list-stale",
            "repro run all --jobs 2", "repro run constrfl.table4 --scale paper --force",
            "repro run all --backend dask --address tcp://HOST:8786 --jobs 32"],
    "figures": ["repro figures core.demo --scale smoke", "repro figures --out /tmp/figs"],
    "compare": ["repro compare --scale smoke",
                "repro compare 'constrfl.*'    # recompare constrfl into figures/partial/",
                "repro compare constrfl.table4 --against-committed"],
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


def _compare_and_verify(sub) -> None:
    """The ``compare`` and ``verify`` subcommands: the two that hold results to others."""
    p = _command(sub, "compare", help="reported vs reproduced: comparison.md/.csv, claims.md, "
                                       "REPORT.md")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="recompare only these experiments (names or globs), writing to the "
                        "partial folder (figures/partial/, ignored by git); every other "
                        "experiment's rows and claims are kept as the committed comparison.csv "
                        "and claims.csv hold them, marked 'kept' with the commit that wrote "
                        "them (default: recompare everything)")
    _scale_arg(p)
    p.add_argument("--out", type=Path, default=None, help="output directory (default: figures/)")
    p.add_argument("--against-committed", action="store_true",
                   help="write nothing; print, per cell and per comparison row, how the current "
                        "records of NAME agree with the committed figures/ (the cells ledger "
                        "and comparison.csv), within the round-off tolerance of repro verify")
    _results_arg(p)

    p = _command(sub, "verify", help="recompute a random sample of the committed cells "
                                      "(figures/cells/*.csv) and say, per cell, bitwise equal, "
                                      "equal within tolerance (the largest difference), "
                                      "different (both numbers) or stale code; the tolerance "
                                      "is |Δ| <= k·u·(|x| + s), docs/usage.md#verify-tolerance")
    p.add_argument("name", nargs="?", default="*",
                   help="experiment name or glob (default: every experiment with a ledger)")
    p.add_argument("--sample", type=int, default=20, metavar="N",
                   help="how many cells to recompute (default 20; 0: every cell)")
    p.add_argument("--seed", type=int, default=0, help="seed of the draw (default 0)")
    p.add_argument("--max-seconds", type=float, default=float("inf"), metavar="S",
                   help="draw only cells whose recorded wall time is at most S seconds")
    p.add_argument("--out", type=Path, default=None,
                   help="the figures folder whose cells/ ledger is checked (default: figures/)")


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

    p = _command(sub, "list", help="list registered experiments: one line each with their "
                                    "scales, cells and what is recorded here")
    p.add_argument("--details", action="store_true",
                   help="also titles, declared and measured costs, readings, what --scale auto "
                        "leaves to another machine, and every paper's library methods")
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

    _compare_and_verify(sub)

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


def cmd_list(args) -> int:
    from repro.engine.commands.listing import list_experiments

    extra = {"details": True} if getattr(args, "details", False) else {}
    return list_experiments(getattr(args, "results", None), **extra)


def cmd_run(args) -> int:
    from repro.engine.registry import select_suggesting

    if args.list_stale:
        from repro.engine.commands.run_report import list_stale

        return list_stale(select_suggesting(args.name), args.scale, args.results)
    from repro.engine.commands.run_report import report_sweep
    from repro.engine.run.runner import run_experiments

    return report_sweep(run_experiments(
        select_suggesting(args.name), args.scale, jobs=args.jobs, backend=args.backend,
        force=args.force, out=args.results, progress=not args.no_progress,
        address=args.address, keep_going=args.keep_going, reading=args.reading))


def cmd_figures(args) -> int:
    from repro.engine.commands.figures_run import render_figures
    from repro.engine.registry import select_suggesting

    return render_figures(select_suggesting(args.name), args.scale, args.results, args.out)


def cmd_compare(args) -> int:
    if args.against_committed:
        from repro.engine.commands.against import against_committed

        if not args.names:
            raise ValueError("--against-committed needs the experiments to compare (NAME ...), "
                             "e.g. repro compare constrfl.table4 --against-committed")
        return against_committed(args.names, args.scale, args.results, args.out)
    from repro.engine.commands.compare_run import run_compare

    return run_compare(args.names, args.scale, args.results, args.out)


def cmd_verify(args) -> int:
    from repro.engine.commands.verify import verify_command

    return verify_command(args.name, args.sample, args.seed, args.max_seconds, args.out)


def cmd_data(args) -> int:
    from repro.engine.commands.data_command import data_command

    return data_command(args.action, args.datasets)


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


def main(argv: list[str] | None = None) -> int:
    from repro.engine.commands.console import (
        interrupted,
        one_line_warnings,
        quiet_tracker_after_interrupt,
        silence_output,
    )
    from repro.engine.run.progress import configure_logging

    argv = sys.argv[1:] if argv is None else list(argv)
    theory_argv = _theory_argv(argv)
    if theory_argv is not None:
        # argparse cannot hand a subcommand's leading --flags on untouched: pass them directly
        return _theory_main(theory_argv)
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose)
    quiet_tracker_after_interrupt()
    try:
        with one_line_warnings():
            return COMMANDS[args.command](args)
    except BrokenPipeError as exc:  # `repro list | head`: the reader left; say nothing more
        silence_output()
        # `repro run ... | tee log` and Ctrl-C: the interrupt reaches tee too, and the pipe
        # breaks while the KeyboardInterrupt unwinds: still an interrupt (130), not success
        return 130 if interrupted(exc) else 0
    except KeyboardInterrupt:
        try:
            print(f"repro {args.command}: interrupted; workers stopped, finished records kept "
                  "(rerun to continue)", file=sys.stderr)
        except OSError:  # stderr was piped into the reader that the same Ctrl-C stopped
            silence_output()
        return 130
    except Exception as exc:  # noqa: BLE001 - said in one line (its traceback with -v)
        from repro.engine.commands.errors import error_lines, is_expected

        try:
            for line in error_lines(args.command, exc, args.verbose):
                print(line, file=sys.stderr)
        except OSError:  # stderr is gone (a closed pipe): nothing more can be said
            silence_output()
        # a message raised on purpose (bad input) is a usage error; anything else a failure
        return 2 if is_expected(exc) else 1


if __name__ == "__main__":
    sys.exit(main())
