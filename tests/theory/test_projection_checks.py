"""The theory harness and the projection checks (size "small")."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import theory.core.projections as TP
from repro.core import projections as P
from theory import registry
from theory.__main__ import main
from theory.result import CheckResult

ROOT = Path(__file__).resolve().parents[2]
NAMES = {f"projections.{k}" for k in ("orthant", "box", "ball", "simplex", "capped_simplex")}


def _run_cli(*args, env_extra=None):
    env = {k: v for k, v in os.environ.items() if k != registry.EXTRA_MODULES_ENV}
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "theory", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def test_projection_checks_pass_small():
    results = [r for r in registry.run_checks("projections", "small") if r.name in NAMES]
    assert {r.name for r in results} == NAMES
    for r in results:
        assert r.passed, (r.name, r.details)
        assert r.worst_margin > 0
        assert r.instances == 10 and r.size == "small"
        assert r.ground_truth["solver"] == "CLARABEL"
        assert r.ground_truth["statuses"] == {"optimal": 10}
        assert r.ground_truth["settings"]["tol_gap_rel"] <= 1e-10
        crit = r.details["criteria"]
        assert crit["kkt"]["worst_error"] <= 1e-10
        assert crit["objective"]["worst_error"] <= 1e-7
        assert crit["argmin"]["worst_error"] <= 1e-5
        assert r.seed == registry.seed_for(r.name)
        json.dumps(r.to_dict(), allow_nan=False)


def test_cli_writes_json_and_markdown(tmp_path):
    proc = _run_cli("--only", "projections", "--size", "small", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    payload = json.loads((tmp_path / "theory.json").read_text())
    assert NAMES <= {c["name"] for c in payload["checks"]}
    assert all(c["passed"] for c in payload["checks"])
    assert {"numpy", "cvxpy", "clarabel", "python"} <= set(payload["versions"])
    # Seeds come from sha256 of the name, so another process derives the same ones.
    for c in payload["checks"]:
        digest = hashlib.sha256(c["name"].encode()).digest()
        assert c["seed"] == int.from_bytes(digest[:8], "big")
    md = (tmp_path / "theory.md").read_text()
    assert all(name in md for name in NAMES)
    assert "projections.capped_simplex" in proc.stdout


def test_failing_and_crashing_checks_make_cli_exit_1(tmp_path):
    module = tmp_path / "dummy_checks.py"
    module.write_text(textwrap.dedent('''
        from theory.registry import register
        from theory.result import CheckResult

        @register("dummy.always_fails", paper="none", claim="1 <= 0")
        def check_fails(seed, size):
            return CheckResult(name="dummy.always_fails", claim="1 <= 0", paper="none",
                               equation="-", instances=1, worst_margin=-1.0,
                               ground_truth={"solver": "closed form"}, passed=False,
                               details={"counterexample": 1})

        @register("dummy.raises", paper="none", claim="does not crash")
        def check_raises(seed, size):
            raise RuntimeError("boom")
    '''))
    out = tmp_path / "out"
    proc = _run_cli("--only", "dummy", "--size", "small", "--out", str(out),
                    env_extra={registry.EXTRA_MODULES_ENV: str(module)})
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    checks = {c["name"]: c for c in json.loads((out / "theory.json").read_text())["checks"]}
    assert set(checks) == {"dummy.always_fails", "dummy.raises"}
    assert not checks["dummy.always_fails"]["passed"]
    assert checks["dummy.raises"]["worst_margin"] == "-inf"
    assert "boom" in checks["dummy.raises"]["details"]["error"]
    # The dummy checks exist only in that subprocess, never in the real registry.
    assert not any(name.startswith("dummy.") for name in registry.registered())


def test_unmatched_pattern_exits_2(tmp_path, capsys):
    assert main(["--only", "no-such-check-xyz", "--out", str(tmp_path)]) == 2
    assert "no theory check matches" in capsys.readouterr().err
    assert not (tmp_path / "theory.json").exists()


def test_registry_rejects_duplicate_names(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))

    def other(seed, size):  # pragma: no cover - never run
        raise AssertionError

    with pytest.raises(ValueError, match="already registered"):
        registry.register("projections.simplex", paper="x", claim="y")(other)


def test_pattern_matching():
    assert registry.matches("projections.capped_simplex", "capped")
    assert registry.matches("projections.capped_simplex", "projections.*simplex")
    assert not registry.matches("projections.box", "simplex")
    assert registry.matches("anything", None)


def test_check_result_to_dict_is_strict_json():
    r = CheckResult(name="a", claim="c", paper="p", equation="e", instances=np.int64(3),
                    worst_margin=-np.inf, ground_truth={"statuses": {"optimal": 2}},
                    passed=np.bool_(False), details={"x": np.arange(2), "y": (np.float64(1.5),)})
    d = r.to_dict()
    assert d["worst_margin"] == "-inf" and d["instances"] == 3 and d["passed"] is False
    assert d["details"] == {"x": [0, 1], "y": [1.5]}
    json.dumps(d, allow_nan=False)


# ------------------------------------------------------------------------- the certificates
# The KKT residuals are the oracle of tests/core/test_projections.py, so they must reject
# wrong answers: feasible non-optimal points, infeasible points, wrong multipliers.

def test_kkt_certificates_reject_wrong_points():
    rng = np.random.default_rng(0)
    y = rng.normal(size=12)
    x = P.simplex_projection(y)
    assert TP.max_kkt_error(TP.kkt_simplex(x, y)) <= 1e-12
    support = np.flatnonzero(x > 0)
    moved = x.copy()
    moved[support[0]] += 1e-6  # off the simplex
    assert TP.max_kkt_error(TP.kkt_simplex(moved, y)) > 1e-7
    uniform = np.full(12, 1 / 12)  # feasible, not optimal
    assert TP.max_kkt_error(TP.kkt_simplex(uniform, y)) > 1e-3

    cap = 1 / (0.25 * 12)
    x = P.capped_simplex_projection(y, cap)
    assert TP.max_kkt_error(TP.kkt_capped_simplex(x, y, cap)) <= 1e-12
    swapped = x[::-1].copy()  # feasible permutation, not optimal
    assert TP.max_kkt_error(TP.kkt_capped_simplex(swapped, y, cap)) > 1e-3
    assert TP.max_kkt_error(TP.kkt_capped_simplex(P.simplex_projection(y), y, 0.05)) > 1e-3

    c = np.zeros(12)
    x = P.ball_projection(3 * y, 1.0, c)
    assert TP.max_kkt_error(TP.kkt_ball(x, 3 * y, 1.0, c)) <= 1e-12
    rotated = np.roll(x, 1)  # on the sphere, not parallel to y
    assert TP.max_kkt_error(TP.kkt_ball(rotated, 3 * y, 1.0, c)) > 1e-3
    assert TP.max_kkt_error(TP.kkt_ball(1.01 * x, 3 * y, 1.0, c)) > 1e-3  # outside

    lo, hi = -0.5 * np.ones(12), 0.5 * np.ones(12)
    assert TP.max_kkt_error(TP.kkt_box(np.clip(y, lo, hi), y, lo, hi)) == 0.0
    assert TP.max_kkt_error(TP.kkt_box(np.zeros(12), y, lo, hi)) > 1e-3
    assert TP.max_kkt_error(TP.kkt_orthant(np.abs(y), y)) > 1e-3
