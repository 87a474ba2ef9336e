"""The experiment runner: identity-derived seeds, caching, kill-safety, parallel equality."""

from __future__ import annotations

import hashlib
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from repro.core.validation import DivergenceError
from repro.demo.experiments import DEMO, LogRegConfig
from repro.engine import registry
from repro.engine.experiment import RunContext, cell_seed
from repro.engine.records.records import record_path
from repro.engine.run.runner import collect, executor, plan, run_experiment

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture
def plugins(monkeypatch):
    monkeypatch.syspath_prepend(str(FIXTURES))
    monkeypatch.setenv("FEDREPRO_PLUGINS", "sweep_plugin")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(FIXTURES), *sys.path]))
    return registry.load_all()


def test_cell_seed_is_sha256_of_identity_not_position():
    config = {"seed": 1, "l2": 1e-4}
    ident = json.dumps({"experiment": "core.demo", "config": {"l2": 1e-4, "seed": 1}},
                       sort_keys=True, separators=(",", ":"))
    expected = int.from_bytes(hashlib.sha256(ident.encode()).digest()[:8], "little")
    assert cell_seed("core.demo", config) == expected
    assert cell_seed("core.demo", {"l2": 1e-4, "seed": 1}) == expected  # key order irrelevant
    seeds = [c.seed for c in plan(DEMO, "smoke")]
    assert len(set(seeds)) == 3
    assert seeds == [cell_seed("core.demo", c) for c in DEMO.cells("smoke")]


def test_named_streams_are_independent_of_creation_order():
    a = RunContext("x.y", {"i": 0}, 123)
    b = RunContext("x.y", {"i": 0}, 123)
    first = a.rng("init").normal(size=3)
    b.rng("other").normal(size=5)
    assert np.array_equal(first, b.rng("init").normal(size=3))
    assert not np.array_equal(first, a.rng("batches").normal(size=3))


def test_same_cell_twice_gives_equal_records_but_timings(isolated):
    r1 = run_experiment(DEMO, "smoke", progress=False).records
    r2 = run_experiment(DEMO, "smoke", force=True, progress=False).records
    assert [r.without_timings() for r in r1] == [r.without_timings() for r in r2]
    assert all(r.curves["train_loss"] for r in r1)
    assert r1[0].metrics["test_accuracy"] > 7530 / 9865


def test_rerun_skips_recorded_cells(isolated):
    s1 = run_experiment(DEMO, "smoke", progress=False)
    s2 = run_experiment(DEMO, "smoke", progress=False)
    assert (s1.computed, s1.cached, s2.computed, s2.cached) == (3, 0, 0, 3)
    assert [r.metrics for r in s2.records] == [r.metrics for r in s1.records]


def test_jobs_2_equals_jobs_1(tmp_path, isolated):
    one = run_experiment(DEMO, "smoke", jobs=1, out=tmp_path / "a", progress=False).records
    two = run_experiment(DEMO, "smoke", jobs=2, out=tmp_path / "b", progress=False).records
    assert [r.metrics for r in one] == [r.metrics for r in two]
    assert [r.curves for r in one] == [r.curves for r in two]


def test_dask_backend_equals_loky(tmp_path, isolated, plugins):
    exp = plugins["test.sweep"]
    loky = run_experiment(exp, "smoke", jobs=1, out=tmp_path / "a", progress=False).records
    dask = run_experiment(exp, "smoke", jobs=2, backend="dask", out=tmp_path / "b",
                          progress=False).records
    assert [r.metrics for r in loky] == [r.metrics for r in dask]


def test_ray_backend_equals_loky(tmp_path, isolated):
    loky = run_experiment(DEMO, "smoke", jobs=1, out=tmp_path / "a", progress=False).records
    ray = run_experiment(DEMO, "smoke", jobs=2, backend="ray", out=tmp_path / "b",
                         progress=False).records
    assert [r.without_timings() for r in loky] == [r.without_timings() for r in ray]


def test_missing_dist_extra_is_a_clear_error(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.startswith("ray"):
            raise ImportError("No module named 'ray'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(RuntimeError, match=r"fedrepro\[dist\]"), executor("ray", 2):
        pass
    with pytest.raises(ValueError, match="backend must be one of"), executor("spark", 2):
        pass


def test_nan_stops_the_run_at_the_closed_form_round(isolated, plugins):
    # |x_k| = 999^k; x_k^2 overflows once 999^k > sqrt(max float).
    expected = math.ceil(0.5 * math.log(np.finfo(float).max) / math.log(999))
    assert expected == 52
    with pytest.raises(DivergenceError) as info:
        run_experiment(plugins["test.diverge"], "smoke", progress=False)
    assert info.value.round == expected
    assert f"round {expected}: loss = inf" in str(info.value)


def test_bad_hyperparameter_names_it():
    with pytest.raises(ValueError, match=r"l2 must be in \[0, inf\), got -1"):
        LogRegConfig(l2=-1)
    with pytest.raises(ValueError, match=r"max_iter must be in \[1, inf\), got 0"):
        DEMO.run_cell({"seed": 0, "l2": 1e-4, "max_iter": 0}, RunContext("core.demo", {}, 0))


def _cli(args, env):
    return [sys.executable, "-m", "repro.cli", *args], env


def test_sigkill_keeps_finished_records_and_recomputes_none(tmp_path, plugins):
    env = {**os.environ, "FEDREPRO_RESULTS": str(tmp_path / "res"), "SWEEP_SLEEP": "1.0",
           "SWEEP_LOG": str(tmp_path / "log.txt")}
    cmd = [sys.executable, "-m", "repro.cli", "run", "test.sweep", "--scale", "smoke",
           "--no-progress"]
    proc = subprocess.Popen(cmd, env=env, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    exp = plugins["test.sweep"]
    paths = [record_path(tmp_path / "res", exp.name, c.key) for c in plan(exp, "smoke")]
    deadline = time.time() + 60
    while sum(p.exists() for p in paths) < 3 and time.time() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in paths if p.exists()}
    assert 3 <= len(before) < 8
    assert not list((tmp_path / "res" / exp.name).glob(".tmp-*"))

    env["SWEEP_LOG"] = str(tmp_path / "log2.txt")
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    assert f"{8 - len(before)} computed, {len(before)} cached" in done.stdout
    for p, (data, mtime) in before.items():
        assert (p.read_bytes(), p.stat().st_mtime_ns) == (data, mtime)
    rerun = (tmp_path / "log2.txt").read_text().split("\n")[:-1]
    assert len(rerun) == 8 - len(before)
    recorded = {json.loads(data)["config"]["i"] for data, _ in before.values()}
    assert recorded.isdisjoint({int(line.split()[1]) for line in rerun})
    assert len(collect(exp, "smoke", tmp_path / "res")) == 8


def test_a_named_divergence_is_final_not_retried_and_exits_0(isolated, plugins, monkeypatch,
                                                             tmp_path, capsys):
    """A DivergenceError is the algorithm's outcome at that cell (deterministic): the
    next run does not retry it, --force does, the grid counts as complete, `repro run` exits 0
    and names it; any other failure is retried and exits 1.
    """
    from repro.engine.commands.run_report import report_sweep
    from repro.engine.run.planning import diverged, is_complete

    exp = plugins["test.diverging"]
    log = tmp_path / "computed.txt"
    monkeypatch.setenv("SWEEP_LOG", str(log))
    s = run_experiment(exp, "smoke", progress=False, keep_going=True)
    assert [r.status for r in s.records] == ["ok", "failed", "ok"]
    assert s.records[1].reason == ("failed: DivergenceError: diverged at round 3: loss = inf")
    assert [diverged(r) for r in s.records] == [False, True, False]
    assert is_complete(exp, "smoke", s.records)
    assert report_sweep([s]) == 0
    out = capsys.readouterr()
    assert "1 cell(s) diverged" in out.out and "failed;" not in out.err
    assert "test.diverging [smoke]: 2 computed, 0 cached, 0 not run, 1 diverged (final)" in out.out
    assert log.read_text().count("computed") == 3
    again = run_experiment(exp, "smoke", progress=False, keep_going=True)
    assert (again.computed, again.cached) == (0, 3)  # not retried
    assert log.read_text().count("computed") == 3
    assert again.records[1].without_timings() == s.records[1].without_timings()
    assert report_sweep([again]) == 0
    assert ("test.diverging [smoke]: 0 computed, 2 cached, 0 not run, 1 diverged (final)"
            in capsys.readouterr().out)
    forced = run_experiment(exp, "smoke", progress=False, keep_going=True, force=True)
    assert forced.computed == 3 and log.read_text().count("computed") == 6
    # another failure: retried, the grid is incomplete, exit 1
    flaky = run_experiment(plugins["test.flaky"], "smoke", progress=False, keep_going=True)
    assert not any(diverged(r) for r in flaky.records)
    assert not is_complete(plugins["test.flaky"], "smoke", flaky.records)
    assert report_sweep([flaky]) == 1
    # a claim judged on part of a grid says on how many cells
    from repro.engine.compare.claimcheck import evidence

    rid = exp.primary_reading.id
    assert evidence(exp, "smoke", s.records, rid) == "on 2 of 3 cells (1 diverged): "
    assert evidence(exp, "smoke", s.records[:1], rid) == "on 1 of 3 cells (2 without a record): "
    fixed = plugins["test.flaky"]
    monkeypatch.setenv("FLAKY_FIXED", "1")
    whole = run_experiment(fixed, "smoke", progress=False, keep_going=True).records
    assert evidence(fixed, "smoke", whole, rid) == ""


def test_keep_going_records_the_failed_cell_and_retries_it(isolated, plugins, monkeypatch):
    exp = plugins["test.flaky"]
    with pytest.raises(ValueError, match="singular system") as info:
        run_experiment(exp, "smoke", progress=False)
    assert any("in cell test.flaky {'i': 1}" in n for n in info.value.__notes__)
    s = run_experiment(exp, "smoke", progress=False, keep_going=True)
    assert [r.status for r in s.records] == ["ok", "failed", "ok"]
    assert s.records[1].reason == "failed: ValueError: singular system in cell 1"
    assert (s.computed, s.cached) == (2, 1)  # the first run stopped at cell 1, after cell 0
    monkeypatch.setenv("FLAKY_FIXED", "1")
    s = run_experiment(exp, "smoke", progress=False, keep_going=True)
    assert (s.computed, s.cached) == (1, 2) and all(r.ok for r in s.records)
    assert s.records[1].metrics == {"i": 1.0}


def test_cells_are_dispatched_one_at_a_time(isolated, monkeypatch):
    """Seen in a complete run: joblib's automatic batch size, grown on millisecond cells,
    sent its last two-minute cells to one worker as one batch while the other sat idle.
    The runner asks joblib for one cell per dispatch (batch_size=1).
    """
    import joblib

    from repro.engine.run import runner

    seen = {}
    real = joblib.Parallel

    class Spy(real):
        def __init__(self, *a, **kw):
            seen.update(kw)
            super().__init__(*a, **kw)

    monkeypatch.setattr(runner, "Parallel", Spy)
    run_experiment(DEMO, "smoke", jobs=2, progress=False, force=True)
    assert seen.get("batch_size") == 1
