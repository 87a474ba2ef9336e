"""Issue #22's acceptance: a wheel of the checkout, installed into a fresh virtual environment,
works from an empty folder and writes nothing into ``site-packages``.

The wheel is built without build isolation (the project's own setuptools, no download) and
installed with ``--no-deps``; the fresh environment reaches the dependencies (numpy, torch, ...)
through a one-line ``.pth`` naming this environment's ``site-packages``, so torch is not
installed again. ``repro`` itself is imported from the installed wheel: the test asserts it.
A plain path line in a ``.pth`` does not run the ``.pth`` files of the folder it names, so this
checkout's editable install is not active there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
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
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for pkg in ("repro", "theory", "bench"):
        shutil.copytree(ROOT / pkg, src / pkg,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    wheels = tmp_path / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
          "-w", str(wheels), str(src)], tmp_path, dict(os.environ))
    (wheel,) = wheels.glob("fedrepro-*.whl")

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
    where_repro = _run([str(py), "-c", "import repro, theory, bench; print(repro.__file__); "
                        "print(theory.__file__); print(bench.__file__)"], work, env).stdout.split()
    assert all(Path(p).is_relative_to(venv) for p in where_repro), where_repro
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
    assert str(work / "figures" / "comparison.md") in compare.stdout
    theory = _run([str(py), "-m", "theory", "--only", "projections.box", "--size", "small"],
                  work, env)
    assert "projections.box" in theory.stdout + theory.stderr

    bench = _run([str(py), "-m", "bench", "--quick", "--only", "core.projections"],
                 work, env)
    assert str(work / "figures" / "bench.md") in bench.stdout

    records = list((work / "results" / "constrfl.table4").glob("*.json"))
    assert len(records) == 12
    for name in ("comparison.md", "comparison.csv", "claims.md", "REPORT.md", "theory.md",
                 "theory.json", "bench.md"):
        assert (work / "figures" / name).is_file(), name
    assert sorted(p.name for p in work.iterdir()) == ["figures", "results"]
    after = _tree(site)
    assert after == before, sorted(set(after.items()) ^ set(before.items()))[:10]
    print("\n".join(["$ repro where", where, "$ repro run constrfl.table4 --scale smoke",
                     run.stdout, "$ repro compare --scale smoke", compare.stdout,
                     "$ python -m theory --only 'projections.box' --size small",
                     theory.stdout]))
