"""The committed ``figures/`` cannot be clobbered by the README's own commands.

On a temporary copy of the checkout (its Makefile, pyproject.toml, README and .gitignore, and
the tracked files of ``figures/`` committed to a fresh git repository): ``make paper-figures
SCALE=smoke`` (over core.demo and one theory check, so that it takes seconds: the same recipe,
the same commands), every command of the README's "One experiment" block and ``python -m theory
--only 'projections.*' --size small``; then ``git status --short figures/`` must list nothing
outside ``figures/smoke/``. Before the fix, the same commands rewrote REPORT.md, comparison.*,
claims.*, core_demo_* and theory.md.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from repro.cli import main as repro_main
from theory.__main__ import main as theory_main

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def _readme_commands() -> list[list[str]]:
    """The commands of the README's "One experiment" block, without the ``.venv/bin/`` part."""
    text = (ROOT / "README.md").read_text()
    block = re.search(r"## One experiment\n.*?```bash\n(.*?)```", text, re.S)
    assert block is not None, "README.md has no '## One experiment' bash block"
    cmds = [shlex.split(line, comments=True) for line in block.group(1).splitlines()]
    cmds = [[Path(c[0]).name, *c[1:]] for c in cmds if c]
    assert [c[0] for c in cmds].count("repro") >= 5 and ["python", "-m", "theory"] in [
        c[:3] for c in cmds]
    return cmds


def _copy_checkout(dest: Path) -> None:
    for name in ("Makefile", "pyproject.toml", "README.md", ".gitignore"):
        shutil.copy2(ROOT / name, dest / name)  # copy2: the .venv stamp stays newer
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "figures"],
                             capture_output=True, text=True, check=True).stdout.split("\0")
    for rel in filter(None, tracked):
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dest / rel)
    for name in (".venv", "repro", "theory", "bench"):  # the code as the checkout has it
        (dest / name).symlink_to(ROOT / name)
    git = ["git", "-C", str(dest), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "committed outputs"], check=True)


def _changed(dest: Path) -> list[str]:
    return subprocess.run(["git", "-C", str(dest), "status", "--short", "--untracked-files=all",
                           "figures/"], capture_output=True, text=True,
                          check=True).stdout.splitlines()


@pytest.mark.skipif(not (ROOT / ".venv" / "bin" / "repro").exists() or shutil.which("make")
                    is None, reason="needs the checkout's .venv (make setup) and make")
def test_readme_commands_leave_committed_figures_alone(tmp_path, monkeypatch):
    dest = tmp_path / "clone"
    dest.mkdir()
    _copy_checkout(dest)
    committed = len(list((dest / "figures").iterdir()))
    assert committed > 50 and (dest / "figures" / "REPORT.md").is_file()
    for var in ("FEDREPRO_FIGURES", "FEDREPRO_RESULTS", "FEDREPRO_CACHE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("FEDREPRO_OFFLINE", "1")
    if (ROOT.parent / "shared" / "data").is_dir():
        monkeypatch.setenv("FEDREPRO_DATA", str(ROOT.parent / "shared" / "data"))
    make = subprocess.run(["make", "paper-figures", "SCALE=smoke", "EXPERIMENTS=core.demo",
                           "THEORY_ONLY=projections.simplex", "JOBS=1"], cwd=dest,
                          capture_output=True, text=True, timeout=600, env=os.environ.copy())
    assert make.returncode == 0, make.stdout[-3000:] + make.stderr[-3000:]
    smoke = dest / "figures" / "smoke"
    assert {"REPORT.md", "comparison.md", "claims.md", "theory.md", "theory.json",
            "core_demo_table.md", "core_demo_loss.png"} <= {p.name for p in smoke.iterdir()}

    monkeypatch.chdir(dest)
    for cmd in _readme_commands():
        if cmd[0] == "repro" and cmd[1] == "run" and cmd[2] != "core.demo":
            continue  # `repro run` writes records only (results/), and this one takes a minute
        if cmd[0] == "repro":
            assert repro_main(cmd[1:]) == 0, cmd
        else:
            assert theory_main(cmd[3:]) == 0, cmd
    assert theory_main(["--only", "projections.*", "--size", "small"]) == 0

    changed = _changed(dest)
    assert [ln for ln in changed if not ln[3:].startswith("figures/smoke/")] == [], changed
    # the partial `repro compare 'constrfl.*'` went apart too
    assert (dest / "figures" / "partial" / "comparison.md").is_file()
    assert (smoke / "theory.json").is_file()
    assert len(list((dest / "figures").iterdir())) == committed + 2  # smoke/ and partial/


def test_a_complete_run_writes_the_figures_folder(tmp_path, monkeypatch, capsys):
    """The other side: a complete run of a scale (core.demo at paper scale, 3 cells) writes the
    figures folder; with a record missing it goes to ``partial/``; smoke goes to ``smoke/``; a
    folder named by ``--out`` or ``$FEDREPRO_FIGURES`` is written as named.
    """
    root = tmp_path / "co"
    root.mkdir()
    shutil.copy2(ROOT / "Makefile", root / "Makefile")
    shutil.copy2(ROOT / "pyproject.toml", root / "pyproject.toml")
    for var in ("FEDREPRO_FIGURES", "FEDREPRO_RESULTS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("FEDREPRO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FEDREPRO_OFFLINE", "1")
    if (ROOT.parent / "shared" / "data").is_dir():
        monkeypatch.setenv("FEDREPRO_DATA", str(ROOT.parent / "shared" / "data"))
    monkeypatch.chdir(root)
    from repro.core import paths

    figures = root / "figures"
    assert paths.outputs_place().path == figures
    assert paths.outputs_place(smoke=True).path == figures / "smoke"
    assert paths.outputs_place(complete=False).path == figures / "partial"
    assert paths.outputs_place(tmp_path / "x", smoke=True).path == tmp_path / "x"
    monkeypatch.setenv("FEDREPRO_FIGURES", str(tmp_path / "env"))
    assert paths.outputs_place(smoke=True, complete=False).path == tmp_path / "env"
    monkeypatch.delenv("FEDREPRO_FIGURES")

    assert repro_main(["run", "core.demo", "--scale", "paper", "--no-progress"]) == 0
    records = sorted((root / "results" / "core.demo").glob("*.json"))
    assert len(records) == 3
    hidden = records[0].rename(tmp_path / records[0].name)
    assert repro_main(["figures"]) == 0
    assert (figures / "partial" / "core_demo_table.md").is_file()
    assert not (figures / "core_demo_table.md").exists()
    hidden.rename(records[0])
    (figures / "partial" / "core_demo_table.md").unlink()
    # one experiment named: a partial run, never the figures folder, complete records or not
    assert repro_main(["figures", "core.demo"]) == 0
    assert (figures / "partial" / "core_demo_table.md").is_file()
    assert not (figures / "core_demo_table.md").exists()
    assert "a partial run (core.demo only)" in capsys.readouterr().out
    assert repro_main(["figures"]) == 0
    assert (figures / "core_demo_table.md").is_file()  # complete: the figures folder
    assert repro_main(["compare", "core.demo"]) == 0  # a partial comparison: partial/
    assert (figures / "partial" / "comparison.csv").is_file()
    assert not (figures / "comparison.csv").exists()
    assert repro_main(["figures", "core.demo", "--out", "mine"]) == 0
    assert (root / "mine" / "core_demo_table.md").is_file()
    # theory at default size with --only: the partial folder, the committed files untouched
    (figures / "theory.md").write_text("committed\n")
    assert theory_main(["--only", "projections.simplex"]) == 0
    assert (figures / "theory.md").read_text() == "committed\n"
    assert (figures / "partial" / "theory.json").is_file()
    assert "1 passed, 0 failed, 0 findings (the 1 check run)" in capsys.readouterr().out
    # --out naming a folder whose theory.md has no theory.json beside it: refused
    (root / "mine" / "theory.md").write_text("mine\n")
    assert theory_main(["--only", "projections.simplex", "--out", "mine"]) == 2
    assert (root / "mine" / "theory.md").read_text() == "mine\n"
    assert "no theory.json beside it" in capsys.readouterr().err
