"""repro.core.paths: the one place that decides where results, figures and data live."""

from __future__ import annotations

from pathlib import Path

import pytest

from repro.core import paths

ENVS = ("FEDREPRO_RESULTS", "FEDREPRO_FIGURES", "FEDREPRO_DATA", "FEDREPRO_CACHE",
        "XDG_CACHE_HOME")


@pytest.fixture
def clean_env(monkeypatch):
    for name in ENVS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def _fake_checkout(root: Path, name: str = "fedrepro") -> Path:
    root.mkdir(parents=True)
    (root / "Makefile").write_text("test:\n")
    (root / "pyproject.toml").write_text(f'[project]\nname = "{name}"\nversion = "0"\n')
    return root


def test_outside_a_checkout_outputs_follow_the_working_folder(tmp_path, clean_env):
    work = tmp_path / "empty"
    work.mkdir()
    clean_env.chdir(work)
    clean_env.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    clean_env.setattr(paths, "user_cache_dir", lambda: (tmp_path / "xdg" / "fedrepro", "xdg"))
    assert paths.find_checkout() is None
    assert paths.results_dir() == work / "results"
    assert paths.figures_dir() == work / "figures"
    assert paths.data_cache_dir() == tmp_path / "xdg" / "fedrepro"
    assert paths.shared_mirror_dir() is None
    names = [(n, p) for n, p, _ in paths.where()]
    assert names == [("results", work / "results"), ("figures", work / "figures"),
                     ("data", None), ("cache", tmp_path / "xdg" / "fedrepro")]


def test_xdg_cache_home_without_platformdirs(tmp_path, clean_env):
    import builtins

    real_import = builtins.__import__

    def no_platformdirs(name, *args, **kwargs):
        if name == "platformdirs":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    clean_env.setattr(builtins, "__import__", no_platformdirs)
    clean_env.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    path, why = paths.user_cache_dir()
    assert path == tmp_path / "xdg" / "fedrepro" and "XDG_CACHE_HOME" in why


def test_inside_a_checkout_and_below_it(tmp_path, clean_env):
    root = _fake_checkout(tmp_path / "repo")
    (tmp_path / "shared" / "data").mkdir(parents=True)
    sub = root / "docs" / "deep"
    sub.mkdir(parents=True)
    clean_env.chdir(sub)
    assert paths.find_checkout() == root.resolve()
    assert paths.results_dir() == root.resolve() / "results"
    assert paths.figures_dir() == root.resolve() / "figures"
    assert paths.data_cache_dir() == root.resolve() / "data" / "cache"
    assert paths.shared_mirror_dir() == (tmp_path / "shared" / "data").resolve()
    for _, _, why in paths.where():
        assert str(root.resolve()) in why


def test_another_projects_makefile_is_not_a_checkout(tmp_path, clean_env):
    other = _fake_checkout(tmp_path / "other", name="notfedrepro")
    clean_env.chdir(other)
    assert paths.find_checkout() is None
    assert paths.results_dir() == other.resolve() / "results"


def test_environment_then_flags_override(tmp_path, clean_env):
    root = _fake_checkout(tmp_path / "repo")
    clean_env.chdir(root)
    clean_env.setenv("FEDREPRO_RESULTS", str(tmp_path / "r"))
    clean_env.setenv("FEDREPRO_FIGURES", str(tmp_path / "f"))
    clean_env.setenv("FEDREPRO_DATA", str(tmp_path / "d"))
    clean_env.setenv("FEDREPRO_CACHE", str(tmp_path / "c"))
    got = {n: (p, why) for n, p, why in paths.where()}
    assert got["results"] == (tmp_path / "r", "$FEDREPRO_RESULTS")
    assert got["figures"] == (tmp_path / "f", "$FEDREPRO_FIGURES")
    assert got["data"][0] == tmp_path / "d" and got["data"][1].startswith("$FEDREPRO_DATA")
    assert got["cache"] == (tmp_path / "c", "$FEDREPRO_CACHE")
    flagged = {n: (p, why) for n, p, why in paths.where(results=tmp_path / "R",
                                                         figures=tmp_path / "F")}
    assert flagged["results"] == (tmp_path / "R", "--results given")
    assert flagged["figures"] == (tmp_path / "F", "--out given")


def test_no_module_computes_a_place_from_its_own_file():
    """Places come from repro.core.paths only; ``__file__`` may only find package data."""
    pkg = Path(paths.__file__).resolve().parents[1]
    offenders = []
    for py in pkg.rglob("*.py"):
        assert "REPO_ROOT" not in py.read_text(), py
        for i, line in enumerate(py.read_text().splitlines(), 1):
            places = ("results", "figures", "cache", '"data"', "REPO_ROOT")
            if "__file__" in line and any(w in line for w in places):
                offenders.append(f"{py.relative_to(pkg)}:{i}: {line.strip()}")
    assert offenders == []
