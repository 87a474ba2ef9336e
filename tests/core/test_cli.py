"""The command line end to end: help, list, run -> figures -> compare."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from repro.cli import _theory_argv, build_parser, main

SUBCOMMANDS = ["list", "run", "figures", "compare", "data", "theory", "where", "verify"]


@pytest.mark.parametrize("cmd", [[], *[[c] for c in SUBCOMMANDS]])
def test_help(cmd, capsys):
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args([*cmd, "--help"])
    assert info.value.code == 0
    assert "usage: repro" in capsys.readouterr().out


def test_console_script_is_installed():
    out = subprocess.run([sys.executable, "-m", "repro.cli", "list", "--details"],
                         capture_output=True, text=True, check=True).stdout
    assert "core.demo" in out and "smoke: 3 s" in out


def test_run_figures_compare(isolated, capsys):
    assert main(["run", "core.demo", "--scale", "smoke", "--jobs", "1", "--no-progress"]) == 0
    assert "3 computed, 0 cached, 0 not run" in capsys.readouterr().out
    assert main(["figures", "core.demo", "--scale", "smoke"]) == 0
    figs = isolated / "figures"
    for name in ["core_demo_table.md", "core_demo_table.csv", "core_demo_table.tex",
                 "core_demo_loss.png", "core_demo_loss.pdf"]:
        assert (figs / name).stat().st_size > 0
    with open(figs / "core_demo_table.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert [r[0] for r in rows] == ["seed", "0", "1", "2", "mean ± std"]
    assert main(["compare", "--scale", "smoke"]) == 0
    claims = (figs / "claims.md").read_text()
    assert "| pass |  |  | smoke |" in claims  # verdict, cause and reason (none for a pass), scale
    capsys.readouterr()
    assert main(["list", "--details"]) == 0  # the cost measured by the records, beside the
    listed = capsys.readouterr().out.splitlines()  # declared one
    demo = listed.index(next(ln for ln in listed if ln.startswith("core.demo")))
    assert listed[demo + 2] == "    cost: smoke: 3 s, paper: 15 s"
    assert listed[demo + 3].startswith(
        "    measured by the records here: smoke: 3/3 cells computed, ")
    assert listed[demo + 3].endswith(" s summed over the cells' wall times")
    assert sum("measured by the records here" in ln for ln in listed) == 1


def test_figures_says_why_an_experiment_without_results_renders_nothing(isolated, capsys):
    """Table 1 of fedmm without Office-31: every cell ran and is not_run; `repro figures` says so
    (it used to say "no records (run `repro run ...`)", which the user had just done).
    """
    assert main(["run", "fedmm.table1", "--scale", "smoke", "--no-progress"]) == 1
    assert "fedmm.table1 [smoke]: 0 computed, 0 cached, 54 not run" in capsys.readouterr().out
    assert main(["figures", "fedmm.table1", "--scale", "smoke"]) == 0
    out = capsys.readouterr().out
    assert "fedmm.table1 [smoke]: 54 cells, none with a result (data unavailable" in out
    assert "nothing rendered" in out and "run `repro run" not in out
    assert not list((isolated / "figures").glob("fedmm_table1*"))
    # `repro list` never counts cells that never ran as measured
    assert main(["list", "--details"]) == 0
    out = capsys.readouterr().out
    assert ("smoke: 0/54 cells computed; 54 recorded without a result (not run or failed)"
            in " ".join(out.split()))
    assert "54/54 cells" not in out
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()) < 40 and "repro list --details" in out


def test_unknown_experiment_is_a_clear_error(capsys):
    assert main(["run", "nope.table9"]) == 2
    assert "no experiment matches 'nope.table9'" in capsys.readouterr().err


def test_bad_jobs_is_a_clear_error_before_any_work(isolated, capsys):
    assert main(["run", "core.demo", "--scale", "smoke", "--jobs", "0"]) == 2
    assert "jobs must be >= 1, got 0" in capsys.readouterr().err
    assert not (isolated / "results").exists()


def _subparsers(parser):
    import argparse

    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return action.choices


def test_every_argument_has_help_and_every_command_examples(capsys):
    parser = build_parser()
    assert "examples:" in parser.epilog and "figures/REPORT.md" in parser.epilog
    subs = _subparsers(parser)
    assert sorted(subs) == sorted(SUBCOMMANDS)
    for name, p in [("repro", parser), *subs.items()]:
        for action in p._actions:
            if action.dest not in ("help", "command"):
                assert action.help, f"{name}: {action.dest} has no help"
    for name, p in subs.items():
        assert p.description and p.epilog.startswith("examples:\n  repro " + name)
        # every example parses (`repro theory ...` is handed whole to python -m theory)
        for line in p.epilog.splitlines()[1:]:
            import shlex

            argv = shlex.split(line.strip())[1:]
            if name == "theory":
                assert _theory_argv(argv) == argv[1:]
                continue
            parser.parse_args(argv)
    for line in parser.epilog.splitlines()[1:]:
        if line.startswith("  repro "):
            import shlex

            argv = shlex.split(line.split("  ")[1].strip())[1:]
            if _theory_argv(argv) is None:
                parser.parse_args(argv)


def test_unknown_experiment_lists_the_known_ones(capsys):
    from repro.engine.registry import load_all

    assert main(["run", "constrfl.tabel1"]) == 2
    err = capsys.readouterr().err
    known, suggestion = err.split("known: ", 1)[1].strip().split("\n")
    assert known.split(", ") == list(load_all())
    assert "core.demo" in known and "constrfl.table1" in known
    assert suggestion.startswith("did you mean: constrfl.table1")
    assert main(["figures", "nope"]) == 2
    assert "no experiment matches 'nope'; known: " in capsys.readouterr().err


def test_run_keep_going_exits_1_and_compare_links_failed_cells(tmp_path, monkeypatch):
    from repro.cli import main
    from repro.engine.compare.compare import _why_missing
    from repro.engine.registry import load_all
    from repro.engine.run.runner import collect

    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    monkeypatch.syspath_prepend(str(fixtures))
    monkeypatch.setenv("FEDREPRO_PLUGINS", "sweep_plugin")
    monkeypatch.setenv("FEDREPRO_RESULTS", str(tmp_path))
    assert main(["run", "test.flaky", "--scale", "smoke", "--keep-going", "--no-progress"]) == 1
    exps = load_all()
    recs = {"test.flaky": ("smoke", collect(exps["test.flaky"], "smoke", tmp_path))}
    why = _why_missing("test.flaky", exps, recs)
    assert why.startswith("failed: ValueError: singular system in cell 1; see ")
    assert why.endswith("deviations.md#failed-cells")


def test_list_gives_the_measured_total_of_the_current_records(isolated, capsys):
    """`repro list` ends with what every current record at --scale auto took: the
    summed wall times and the span from the first cell's start to the last one's finish.
    """
    from repro.demo.experiments import DEMO
    from repro.engine.commands.listing import measured_total
    from repro.engine.records.records import RunRecord, save_record
    from repro.engine.run.planning import auto_scale, plan

    out = isolated / "results"
    assert measured_total({"core.demo": DEMO}, out) == ""
    cells = plan(DEMO, auto_scale(DEMO, "auto", out))
    for k, (cell, wall) in enumerate(zip(cells, (600.0, 1200.0, 1800.0), strict=True)):
        save_record(RunRecord(experiment=DEMO.name, config=cell.config, key=cell.key,
                              seed=cell.seed, code=cell.code, metrics={"loss": 1.0},
                              timings={"wall_s": wall,
                                       "finished": f"2026-11-27T0{1 + k}:00:00+00:00"}), out)
    text = measured_total({"core.demo": DEMO}, out)
    # starts 00:50, 01:40, 02:30; the last finishes at 03:00: 2h10 = 2.17 h after the first start
    assert text.startswith(f"{len(cells)} records computed (0 more shared between experiments), "
                           "1.00 h summed over the cells' wall times; first cell started ")
    assert text.endswith("last finished 2.17 h later (the run's wall time when one sitting made "
                         "them all)")
    assert main(["list"]) == 0
    assert "all at --scale auto, measured here: 3 records" \
        in capsys.readouterr().out


def test_list_counts_the_cells_of_every_reading_against_every_reading(isolated):
    """`repro list` said "3 of 6 computed" for constrfl.table3 with all 6 cells recorded: it
    counted the primary reading's records against the cells of every reading.
    """
    from repro.engine.commands.listing import run_cells, status_here
    from repro.engine.records.records import RunRecord, save_record
    from repro.engine.registry import get, load_all
    from repro.engine.run.planning import plan, plan_readings

    load_all()
    exp = get("constrfl.table3")
    out = isolated / "results"
    cells = plan_readings(exp, "paper")
    assert len(cells) == run_cells(exp, "paper") == 6 > len(plan(exp, "paper")) == 3
    for cell in cells:
        save_record(RunRecord(experiment=exp.name, config=cell.config, key=cell.key,
                              seed=cell.seed, code=cell.code, metrics={"x": 1.0},
                              timings={"wall_s": 10.0}), out)
    assert status_here(exp, out) == "paper: 6 of 6 computed (60 s)"
