"""The command line's edges fail cleanly: each test failed before the fix.

A piped interrupt exits 130; a read-only ``--out`` is one line naming the folder; a quarantined
record leaves "2 of 3" said; ``-v`` lines go through the bar's ``write``; loky's worker-restart
warning is explained in one line (no bare ``warnings.warn(``); cells another run holds show as
in progress; ``repro list`` is aligned, says fedmm's cost once and counts the cells ``run``
runs.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from repro import cli
from repro.cli import main

ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture
def demo_data(isolated, monkeypatch):
    if SHARED_DATA.is_dir():
        monkeypatch.setenv("FEDREPRO_DATA", str(SHARED_DATA))
    return isolated


def test_a_broken_pipe_after_an_interrupt_exits_130(monkeypatch, capsys):
    """`repro run ... 2>&1 | tee log`, Ctrl-C: tee stops too, and the pipe breaks while the
    interrupt unwinds. It used to exit 0 (the BrokenPipeError handler came first).
    """
    def interrupted_then_piped(args):
        try:
            raise KeyboardInterrupt
        finally:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setitem(cli.COMMANDS, "list", interrupted_then_piped)
    assert main(["list"]) == 130

    def reader_left(args):  # `repro list | head`: a broken pipe alone is still 0
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setitem(cli.COMMANDS, "list", reader_left)
    assert main(["list"]) == 0


def test_a_piped_ctrl_c_exits_130_end_to_end(tmp_path):
    """The real thing: SIGINT to a `repro` whose stdout and stderr go into a pipe whose reader
    is gone (as tee is, after the same Ctrl-C).
    """
    code = ("import signal, sys, time\n"
            # a terminal's Ctrl-C: SIGINT delivered and raising KeyboardInterrupt, whatever
            # the test worker passed on (a blocked mask or an ignored SIGINT, both inherited
            # through exec, left by another test; the cause of 60 s timeouts here)
            "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})\n"
            "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "from repro import cli\n"
            "def slow(args):\n"
            "    print('started', flush=True)\n"
            "    try:\n"
            "        time.sleep(60)\n"
            "    finally:\n"
            "        print('x' * 100000)\n"  # unwinding writes into the broken pipe
            "cli.COMMANDS['list'] = slow\n"
            "sys.exit(cli.main(['list']))\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, cwd=tmp_path)
    assert proc.stdout.readline().strip() == b"started"
    proc.stdout.close()  # the reader (tee) is gone
    proc.send_signal(2)
    assert proc.wait(timeout=60) == 130


def test_a_read_only_out_is_one_line_naming_the_folder(demo_data, tmp_path, capsys):
    """A folder that cannot be made (a file in its path; as root, the one way to refuse a
    write here) or written: one line naming it, exit 2; it was a 22-line traceback, exit 1.
    """
    assert main(["run", "core.demo", "--scale", "smoke", "--no-progress"]) == 0
    capsys.readouterr()
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    for command in (["figures", "core.demo", "--scale", "smoke"], ["compare", "--scale", "smoke"]):
        assert main([*command, "--out", str(blocker / "out")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1, err
        assert err[0].startswith(f"repro {command[0]}: error: output folder {blocker / 'out'} "
                                 "is not writable (")
        assert "choose another with --out dir" in err[0].lower()


def test_a_read_only_out_folder(demo_data, tmp_path, capsys, monkeypatch):
    assert main(["run", "core.demo", "--scale", "smoke", "--no-progress"]) == 0
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    if os.geteuid() == 0:  # root writes into a 0555 folder: the OS's refusal is simulated
        import repro.core.paths as paths

        def refuse(*args, dir=None, **kwargs):
            raise PermissionError(13, "Permission denied", str(dir))

        monkeypatch.setattr(paths.tempfile, "mkstemp", refuse)
    try:
        # `compare core.demo`: the folder check, not the experiments another test's plugin
        # left registered in this process (their scales), is what this test is about
        for command in (["figures", "core.demo", "--scale", "smoke"],
                        ["compare", "core.demo", "--scale", "smoke"]):
            assert main([*command, "--out", str(ro)]) == 2
            assert f"output folder {ro} is not writable" in capsys.readouterr().err
    finally:
        ro.chmod(0o755)


def test_a_quarantined_record_leaves_2_of_3_said(demo_data, capsys):
    assert main(["run", "core.demo", "--scale", "smoke", "--no-progress"]) == 0
    records = sorted((demo_data / "results" / "core.demo").glob("*.json"))
    assert len(records) == 3
    records[1].write_text(records[1].read_text()[:200])  # truncated
    capsys.readouterr()
    assert main(["figures", "core.demo", "--scale", "smoke"]) == 0
    out, err = capsys.readouterr()
    assert "bad record" in err and "moved to" in err  # quarantined, in one line
    assert "[INCOMPLETE: 2 of 3 cells have a result; `repro run core.demo --scale smoke` " \
           "fills in the rest]" in out
    assert main(["compare", "--scale", "smoke"]) == 0
    report = (demo_data / "figures" / "REPORT.md").read_text()
    assert "**core.demo** (scale: smoke): " in report
    assert "; 2 of 3 cells recorded, 1 without a record" in report


def test_verbose_cell_lines_go_through_the_bar(demo_data, capsys):
    r"""-v with the bar: each cell's line is whole on its own line (the bar cleared with \r
    first), not glued onto the bar's text. Before, the worker's StreamHandler wrote it right
    after the bar.
    """
    assert main(["-v", "run", "core.demo", "--scale", "smoke", "--jobs", "1"]) == 0
    err = capsys.readouterr().err
    lines = [ln for ln in re.split(r"\n", err) if "-> ok" in ln]
    assert len(lines) == 3, err
    for ln in lines:
        shown = ln.split("\r")[-1]  # what a terminal shows: the text after the last \r
        assert re.match(r"^\d\d:\d\d:\d\d repro core\.demo \{.*\} -> ok \(\d+\.\d\ds\)$",
                        shown), repr(ln)


def test_loky_worker_restart_is_explained_in_one_line(monkeypatch, capsys):
    import joblib.externals.loky.process_executor as pe

    source = Path(pe.__file__)
    lineno = next(i for i, ln in enumerate(source.read_text().splitlines(), 1)
                  if ln.strip() == "warnings.warn(")

    def restarts(args):
        for _ in range(2):  # twice: explained once
            warnings.warn_explicit(
                "A worker stopped while some jobs were given to the executor. This can be "
                "caused by a too short worker timeout or by a memory leak.", UserWarning,
                str(source), lineno, module=pe.__name__)
        warnings.warn_explicit("something else", UserWarning, str(source), lineno,
                               module=pe.__name__)
        return 0

    monkeypatch.setitem(cli.COMMANDS, "list", restarts)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        assert main(["list"]) == 0
    err = capsys.readouterr().err
    from repro.engine.commands.console import WORKER_RESTART_NOTE

    assert err.count(WORKER_RESTART_NOTE) == 1
    assert "warnings.warn(" not in err and "A worker stopped" not in err
    assert f"{source}:{lineno}: UserWarning: something else\n" in err
    assert len(err.strip().splitlines()) == 2


def test_cells_held_by_another_run_show_as_in_progress(demo_data, capsys):
    from repro.engine.registry import load_all
    from repro.engine.run.runner import lock_path, plan

    exp = load_all()["core.demo"]
    cell = plan(exp, "smoke")[0]
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        lock = lock_path(demo_data / "results", exp.name, cell.key)
        lock.parent.mkdir(parents=True, exist_ok=True)
        lock.write_text(f'{{"pid": {other.pid}, "host": "{socket.gethostname()}"}}')
        assert main(["run", "core.demo", "--scale", "smoke", "--no-progress"]) == 0
    finally:
        other.kill()
        other.wait()
    out = capsys.readouterr().out
    assert ("core.demo [smoke]: 2 computed, 0 cached, 1 in progress in another run, "
            "0 not run") in out
    assert f"    in progress: being computed by another process (pid {other.pid} on " in out
    assert "not run: being computed" not in out


def test_list_is_aligned_says_each_cost_once_and_counts_what_run_runs(capsys):
    assert main(["list", "--details"]) == 0
    out = capsys.readouterr().out.splitlines()
    header = out[0]
    col_scales, col_cells = header.index("scales"), header.index("cells")
    end = out.index("")  # the experiments, then a blank line and the library methods
    rows = [ln for ln in out[1:end] if not ln.startswith(" ")]
    assert len(rows) >= 20
    methods = out[end + 1:]
    assert methods[0].startswith("library methods")
    assert [ln for ln in methods[1:] if not ln.startswith(" ")] == [
        "constrfl", "fairvfl", "fedmm", "relfair"]
    assert "    FedProxGDA: " in "\n".join(methods) and "[fedmm.fig5]" in "\n".join(methods)
    for ln in rows:
        name, scales, cells = ln.split()
        assert ln.index(scales, len(name)) == col_scales, ln
        assert ln.index(cells, col_scales + len(scales)) == col_cells, ln
    table1 = next(ln for ln in rows if ln.startswith("relfair.table1 "))
    assert table1.split()[2] == "22/66"  # every reading, each shared cell once: what run runs
    text = "\n".join(out)
    assert text.count("798,750") == 1  # fedmm's figures share their runs and one cost text
    assert text.count("    cost: as fedmm.fig2 (the same runs)") == 2
    assert max(len(ln) for ln in out if ln.startswith("    cost")) <= 100
    assert max(len(ln) for ln in methods) <= 100


def test_list_counts_match_the_runner(demo_data, capsys):
    """The count `repro list` shows is what `repro run` computes: relfair.table1 at smoke."""
    from repro.engine.commands.listing import run_cells
    from repro.engine.registry import load_all
    from repro.engine.run.runner import plan_readings

    exp = load_all()["relfair.table1"]
    assert run_cells(exp, "smoke") == len(plan_readings(exp, "smoke", "all")) == 22
    assert len(exp.configs("smoke")) == 12  # what the column showed before


def test_readme_says_make_setup_before_anything_else():
    readme = (ROOT / "README.md").read_text()
    first = readme.split("\n## ", 1)[0]
    assert "make setup" in first
    one = readme.split("## One experiment", 1)[1].split("```", 1)[0]
    assert "make setup" in one
