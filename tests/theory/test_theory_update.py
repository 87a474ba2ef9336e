"""``python -m theory --update`` reruns some checks and keeps the others' earlier results."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from theory import registry

ROOT = Path(__file__).resolve().parents[2]

CHECKS = '''
from theory.registry import register
from theory.result import CheckResult

def _make(name, margin):
    def check(seed, size):
        return CheckResult(name=name, claim="c", paper="none", equation="-", instances=1,
                           worst_margin=margin, ground_truth={"solver": "closed form"},
                           passed=margin >= 0)
    return check

register("dummyu.a", paper="none", claim="c")(_make("dummyu.a", {a}))
register("dummyu.b", paper="none", claim="c")(_make("dummyu.b", {b}))
'''


def _run(tmp_path: Path, a: float, b: float, *args: str, commit: str = ""
         ) -> subprocess.CompletedProcess:
    module = tmp_path / f"dummyu_{len(list(tmp_path.glob('dummyu_*.py')))}.py"
    module.write_text(textwrap.dedent(CHECKS.replace("{a}", repr(a)).replace("{b}", repr(b))))
    env = {**__import__("os").environ, registry.EXTRA_MODULES_ENV: str(module)}
    if commit:
        env["FEDREPRO_COMMIT"] = commit
    return subprocess.run([sys.executable, "-m", "theory", "--out", str(tmp_path / "out"),
                           "--size", "small", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def _checks(tmp_path: Path) -> dict[str, dict]:
    data = json.loads((tmp_path / "out" / "theory.json").read_text())
    return {c["name"]: c for c in data["checks"]}


def test_update_replaces_rerun_checks_and_keeps_the_rest(tmp_path):
    assert _run(tmp_path, 1.0, 2.0, "--only", "dummyu.*").returncode == 0
    assert {n: c["worst_margin"] for n, c in _checks(tmp_path).items()} == {
        "dummyu.a": 1.0, "dummyu.b": 2.0}
    # rerun only a (now 3.0): b keeps its earlier 2.0, and theory.md lists both
    assert _run(tmp_path, 3.0, 9.0, "--only", "dummyu.a", "--update").returncode == 0
    assert {n: c["worst_margin"] for n, c in _checks(tmp_path).items()} == {
        "dummyu.a": 3.0, "dummyu.b": 2.0}
    md = (tmp_path / "out" / "theory.md").read_text()
    assert "dummyu.a" in md and "dummyu.b" in md
    # with --all the file holds only what was run
    assert _run(tmp_path, 3.0, 9.0, "--only", "dummyu.a", "--all").returncode == 0
    assert set(_checks(tmp_path)) == {"dummyu.a"}


def test_each_check_says_the_commit_that_ran_it_and_a_merge_keeps_the_earlier_ones(tmp_path):
    assert _run(tmp_path, 1.0, 2.0, "--only", "dummyu.*", commit="aaa111").returncode == 0
    assert {n: c["commit"] for n, c in _checks(tmp_path).items()} == {
        "dummyu.a": "aaa111", "dummyu.b": "aaa111"}
    assert "- commit: aaa111\n" in (tmp_path / "out" / "theory.md").read_text()
    assert _run(tmp_path, 3.0, 9.0, "--only", "dummyu.a", "--update",
                commit="bbb222").returncode == 0
    assert {n: c["commit"] for n, c in _checks(tmp_path).items()} == {
        "dummyu.a": "bbb222", "dummyu.b": "aaa111"}
    md = (tmp_path / "out" / "theory.md").read_text()
    assert "- commits: aaa111 (1 check), bbb222 (1 check)\n" in md


def test_update_keeps_an_earlier_failure_failing(tmp_path):
    assert _run(tmp_path, 1.0, -1.0, "--only", "dummyu.*").returncode == 1
    proc = _run(tmp_path, 1.0, 5.0, "--only", "dummyu.a", "--update")
    assert proc.returncode == 1 and "dummyu.b" in proc.stderr
