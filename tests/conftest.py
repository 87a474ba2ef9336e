"""Shared fixtures: every test writes results and figures into its own temporary folders."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# theory/ and bench/ are importable as `theory` and `bench` from the checkout's root (the
# installed package ships them as repro.theory and repro.bench, setup.py): so that a bare
# `pytest`, whose sys.path lacks the working folder, finds them as `python -m pytest` does
ROOT = str(Path(__file__).resolve().parents[1])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """Results, figures and the download cache under ``tmp_path``; downloads off."""
    monkeypatch.setenv("FEDREPRO_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("FEDREPRO_FIGURES", str(tmp_path / "figures"))
    monkeypatch.setenv("FEDREPRO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FEDREPRO_OFFLINE", "1")
    return tmp_path
