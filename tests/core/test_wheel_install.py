"""A wheel of the checkout, installed into a fresh virtual environment,
works from an empty folder and writes nothing into ``site-packages``.

The wheel is built without build isolation (the project's own setuptools, no download) and
installed with ``--no-deps``; the fresh environment reaches the dependencies (numpy, torch, ...)
through a one-line ``.pth`` naming this environment's ``site-packages``, so torch is not
installed again. ``repro`` itself is imported from the installed wheel: the test asserts it.
A plain path line in a ``.pth`` does not run the ``.pth`` files of the folder it names, so this
checkout's editable install is not active there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA = ROOT.parent / "shared" / "data"


def _tree(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in folder.rglob("*") if p.is_file()}


def _run(cmd: list[str], cwd: Path, env: dict) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{cmd} -> {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.mark.slow
def test_installed_wheel_writes_into_the_working_folder_only(tmp_path):
    # 1. a wheel of the checkout as it is now (a copy, so the build leaves nothing here)
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "setup.py"):
        shutil.copy(ROOT / name, src / name)
    for pkg in ("repro", "theory", "bench"):
        shutil.copytree(ROOT / pkg, src / pkg,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    # the copy as a git repository of its own: the wheel records the commit it is built from
    git = ["git", "-C", str(src), "-c", "user.email=t@t", "-c", "user.name=t"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "source"]):
        subprocess.run([*git, *cmd], check=True)
    source_commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True,
                                   check=True).stdout.strip()
    wheels = tmp_path / "wheels"
    env_build = {k: v for k, v in os.environ.items() if k != "FEDREPRO_COMMIT"}
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
          "-w", str(wheels), str(src)], tmp_path, env_build)
    (wheel,) = wheels.glob("fedrepro-*.whl")
    # one top-level package, repro: theory/ and bench/ are inside it
    with zipfile.ZipFile(wheel) as zf:
        top = {n.split("/")[0] for n in zf.namelist() if ".dist-info/" not in n}
        assert top == {"repro"}, top
        assert zf.read("repro/_build_commit.txt").decode().strip() == source_commit

    # 2. a fresh environment with the wheel; dependencies from this one
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path,
         dict(os.environ))
    py = venv / "bin" / "python"
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()"
                                "['purelib'])"], capture_output=True, text=True,
                               check=True).stdout.strip())
    (site / "zz_fedrepro_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps",
          "--no-index", str(wheel)], tmp_path, dict(os.environ))
    before = _tree(site)

    # 3. an empty folder, no fedrepro variable set, downloads off, data from the mirror
    work = tmp_path / "empty"
    work.mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("FEDREPRO_") and k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(XDG_CACHE_HOME=str(tmp_path / "xdg"), FEDREPRO_OFFLINE="1",
               PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
               OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    if SHARED_DATA.is_dir():
        env["FEDREPRO_DATA"] = str(SHARED_DATA)
    where_repro = _run([str(py), "-c", "import repro, repro.theory, repro.bench; "
                        "print(repro.__file__); print(repro.theory.__file__); "
                        "print(repro.bench.__file__)"], work, env).stdout.split()
    assert all(Path(p).is_relative_to(venv) for p in where_repro), where_repro
    assert not (site / "theory").exists() and not (site / "bench").exists()
    repro = str(venv / "bin" / "repro")

    where = _run([repro, "where"], work, env).stdout
    assert f"results  {work / 'results'}" in where and f"figures  {work / 'figures'}" in where
    assert f"cache    {tmp_path / 'xdg' / 'fedrepro'}" in where
    assert "no checkout at or above the working folder" in where
    assert _run([repro, "--version"], work, env).stdout.startswith("repro (fedrepro) 0.1.0")

    run = _run([repro, "run", "constrfl.table4", "--scale", "smoke", "--no-progress"], work,
               env)
    assert "constrfl.table4 [smoke]: 12 computed, 0 cached, 0 not run" in run.stdout
    compare = _run([repro, "compare", "--scale", "smoke"], work, env)
    assert str(work / "figures" / "smoke" / "comparison.md") in compare.stdout  # smoke: apart
    theory = _run([str(py), "-m", "repro.theory", "--only", "projections.box", "--size",
                   "small"], work, env)
    assert "projections.box" in theory.stdout + theory.stderr
    theory_cli = _run([repro, "theory", "--only", "projections.simplex", "--size", "small"],
                      work, env)
    assert "projections.simplex" in theory_cli.stdout + theory_cli.stderr

    bench = _run([str(py), "-m", "repro.bench", "--quick", "--only", "core.projections"],
                 work, env)
    assert str(work / "figures" / "bench.md") in bench.stdout

    records = list((work / "results" / "constrfl.table4").glob("*.json"))
    assert len(records) == 12
    # the commit the wheel was built from, not an empty field
    assert {json.loads(p.read_text())["commit"] for p in records} == {source_commit}
    for name in ("comparison.md", "comparison.csv", "claims.md", "REPORT.md", "theory.md",
                 "theory.json"):
        assert (work / "figures" / "smoke" / name).is_file(), name
    assert (work / "figures" / "bench.md").is_file()
    assert sorted(p.name for p in work.iterdir()) == ["figures", "results"]
    after = _tree(site)
    assert after == before, sorted(set(after.items()) ^ set(before.items()))[:10]
    print("\n".join(["$ repro where", where, "$ repro run constrfl.table4 --scale smoke",
                     run.stdout, "$ repro compare --scale smoke", compare.stdout,
                     "$ python -m repro.theory --only 'projections.box' --size small",
                     theory.stdout]))
