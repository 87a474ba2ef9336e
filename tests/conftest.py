"""Shared fixtures: every test writes results and figures into its own temporary folders."""

from __future__ import annotations

import pytest


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """Results, figures and the download cache under ``tmp_path``; downloads off."""
    monkeypatch.setenv("FEDREPRO_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("FEDREPRO_FIGURES", str(tmp_path / "figures"))
    monkeypatch.setenv("FEDREPRO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FEDREPRO_OFFLINE", "1")
    return tmp_path
