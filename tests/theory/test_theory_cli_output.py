"""Where ``python -m theory`` writes, how ``--only`` merges, and what it prints while it runs.

The output follows ``--out``, else ``$FEDREPRO_FIGURES``, else the
package's figures folder; ``--only`` merges into the earlier ``theory.json`` (``--all`` replaces,
``--update`` is the old spelling of the merge); every check prints a line as it finishes and a
bar over checks runs on stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from theory import registry
from theory.__main__ import main

ROOT = Path(__file__).resolve().parents[2]

CHECKS = '''
import time
from theory.registry import register
from theory.result import CheckResult

def _make(name, margin, applies=True):
    def check(seed, size):
        time.sleep(0.01)
        return CheckResult(name=name, claim="c", paper="none", equation="-", instances=1,
                           worst_margin=margin, ground_truth={"solver": "closed form"},
                           passed=margin >= 0, applies=applies, measured=1.0, bound=2.0,
                           looseness=2.0, closest={"q": 0.5},
                           finding=None if applies else "loose by 2x")
    return check

register("dummyo.a", paper="none", claim="c")(_make("dummyo.a", {a}))
register("dummyo.b", paper="none", claim="c")(_make("dummyo.b", {b}))
register("dummyo.c", paper="none", claim="c")(_make("dummyo.c", -1.0, applies=False))
'''


def _module(tmp_path: Path, a: float = 1.0, b: float = 2.0) -> Path:
    path = tmp_path / f"dummyo_{len(list(tmp_path.glob('dummyo_*.py')))}.py"
    path.write_text(textwrap.dedent(CHECKS.replace("{a}", repr(a)).replace("{b}", repr(b))))
    return path


def _run(tmp_path: Path, *args: str, cwd: Path = ROOT, figures: Path | None = None,
         a: float = 1.0, b: float = 2.0) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "FEDREPRO_FIGURES"}
    env[registry.EXTRA_MODULES_ENV] = str(_module(tmp_path, a, b))
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    if figures is not None:
        env["FEDREPRO_FIGURES"] = str(figures)
    return subprocess.run([sys.executable, "-m", "theory", "--size", "small", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=300)


def _names(folder: Path) -> dict[str, dict]:
    return {c["name"]: c for c in json.loads((folder / "theory.json").read_text())["checks"]}


def test_output_follows_fedrepro_figures(tmp_path):
    figures = tmp_path / "figs"
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    proc = _run(tmp_path, "--only", "dummyo.[ab]", cwd=cwd, figures=figures)
    assert proc.returncode == 0, proc.stderr
    assert set(_names(figures)) == {"dummyo.a", "dummyo.b"}
    assert (figures / "theory.md").is_file()
    assert not (cwd / "figures").exists()  # not ./figures of the current directory


def test_out_wins_over_fedrepro_figures(tmp_path):
    figures, out = tmp_path / "figs", tmp_path / "out"
    proc = _run(tmp_path, "--only", "dummyo.a", "--out", str(out), figures=figures)
    assert proc.returncode == 0, proc.stderr
    assert set(_names(out)) == {"dummyo.a"}
    assert not figures.exists()


def test_only_merges_by_default_and_all_replaces(tmp_path):
    out = tmp_path / "out"
    assert _run(tmp_path, "--only", "dummyo.[ab]", "--out", str(out)).returncode == 0
    # rerun only a with a new margin: b keeps its earlier result (merge is the default)
    assert _run(tmp_path, "--only", "dummyo.a", "--out", str(out), a=3.0).returncode == 0
    checks = _names(out)
    assert {n: c["worst_margin"] for n, c in checks.items()} == {"dummyo.a": 3.0,
                                                                  "dummyo.b": 2.0}
    md = (out / "theory.md").read_text()
    assert "dummyo.a" in md and "dummyo.b" in md
    # --update is still accepted, as the old name of the merge
    assert _run(tmp_path, "--only", "dummyo.b", "--update", "--out", str(out),
                b=4.0).returncode == 0
    assert {n: c["worst_margin"] for n, c in _names(out).items()} == {"dummyo.a": 3.0,
                                                                       "dummyo.b": 4.0}
    # --all replaces everything with what this run selected
    assert _run(tmp_path, "--only", "dummyo.a", "--all", "--out", str(out)).returncode == 0
    assert set(_names(out)) == {"dummyo.a"}


def test_a_small_only_run_keeps_an_earlier_default_file(tmp_path):
    """Row 3: the README's ``--only ... --size small`` must not wipe a default-size file."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "theory.json").write_text(json.dumps({"size": "default", "checks": [
        {"name": "dummyo.b", "claim": "c", "paper": "p", "equation": "-", "instances": 1,
         "worst_margin": 5.0, "ground_truth": {}, "passed": True, "size": "default"}]}))
    proc = _run(tmp_path, "--only", "dummyo.a", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    data = json.loads((out / "theory.json").read_text())
    checks = {c["name"]: c for c in data["checks"]}
    assert set(checks) == {"dummyo.a", "dummyo.b"}
    assert checks["dummyo.a"]["size"] == "small" and checks["dummyo.b"]["size"] == "default"
    assert checks["dummyo.b"]["worst_margin"] == 5.0
    assert data["size"] == "mixed" and "size default" in proc.stderr
    md = (out / "theory.md").read_text()
    assert "Size `mixed` (per row)" in md
    assert "| dummyo.b | p - | default |" in md


def test_a_line_per_check_as_it_finishes_and_a_bar(tmp_path):
    proc = _run(tmp_path, "--only", "dummyo.", "--out", str(tmp_path / "out"), b=-0.5)
    assert proc.returncode == 1  # b fails; c is a finding and does not fail the run
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("[")]
    assert len(lines) == 3, proc.stdout
    assert lines[0].split()[:3] == ["[1/3]", "dummyo.a", "pass"]
    assert lines[1].split()[:3] == ["[2/3]", "dummyo.b", "FAIL"]
    assert lines[2].split()[:3] == ["[3/3]", "dummyo.c", "finding"]
    assert "margin -0.5" in lines[1] and lines[1].rstrip().endswith("s")
    assert "3/3" in proc.stderr and "check" in proc.stderr  # the tqdm bar over checks
    assert "1 passed, 1 failed, 1 finding" in proc.stdout + proc.stderr


def test_run_checks_reports_each_result_before_the_next_check_starts(tmp_path, monkeypatch):
    order = []

    def make(name):
        def check(seed, size):
            order.append(("run", name))
            from theory.result import CheckResult
            return CheckResult(name=name, claim="c", paper="p", equation="-", instances=1,
                               worst_margin=1.0, ground_truth={}, passed=True)
        return check

    monkeypatch.setattr(registry, "_REGISTRY", {})
    for n in ("x.one", "x.two"):
        registry.register(n, paper="p", claim="c")(make(n))
    monkeypatch.setattr(registry, "load_check_modules", lambda: [])
    monkeypatch.setattr(registry, "_IMPORT_ERRORS", {})
    registry.run_checks(None, "small", on_result=lambda r: order.append(("done", r.name)))
    assert order == [("run", "x.one"), ("done", "x.one"), ("run", "x.two"), ("done", "x.two")]


def test_finding_is_counted_apart_and_does_not_fail(tmp_path):
    out = tmp_path / "out"
    proc = _run(tmp_path, "--only", "dummyo.c", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    c = _names(out)["dummyo.c"]
    assert c["verdict"] == "finding" and c["applies"] is False
    md = (out / "theory.md").read_text()
    assert "finding" in md and "loose by 2x" in md
    assert "looseness" in md and "closest" in md


def test_main_default_folder_is_figures_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDREPRO_FIGURES", str(tmp_path / "env"))
    monkeypatch.setattr(registry, "_REGISTRY", {})
    monkeypatch.setattr(registry, "load_check_modules", lambda: [])
    monkeypatch.setattr(registry, "_IMPORT_ERRORS", {})
    assert main(["--only", "nothing-matches"]) == 2
    from theory.__main__ import output_dir
    assert output_dir(None) == tmp_path / "env"
    assert output_dir(tmp_path / "o") == tmp_path / "o"


def test_default_folder_without_env_is_the_package_figures_dir(monkeypatch):
    from repro.core.paths import figures_dir
    from theory.__main__ import output_dir
    monkeypatch.delenv("FEDREPRO_FIGURES", raising=False)
    assert output_dir(None) == figures_dir()
