"""`make bench` plumbing: ratios written with the machine they ran on and the targets."""

from __future__ import annotations

import re

import pytest

import bench.harness as bench
from bench.harness import TARGETS, Target, load_benchmarks, main, render


def test_bench_writes_ratios(tmp_path, capsys):
    assert main(["--only", "core.projections", "--out", str(tmp_path), "--quick"]) == 0
    text = (tmp_path / "bench.md").read_text()
    rows = re.findall(r"^\| (?:capped )?simplex.* \| ([0-9.]+)x \| — \|$", text, flags=re.M)
    assert len(rows) == 6 and all(float(r) > 0 for r in rows)
    assert "Machine: " in text and "cores" in text and "BLAS" in text and "threads" in text
    assert "**Quick run**" in text
    assert not bench._QUICK  # --quick does not leak into later calls
    assert main(["--only", "nothing.*", "--out", str(tmp_path)]) == 2


def test_paper_benchmarks_register_where_main_reads_them():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", (
        "import bench.harness as b; "
        "import bench.__main__ as m; print(m.benchmark is b.benchmark)")],
        capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"
    names = set(load_benchmarks())
    assert names >= {"core.projections", "core.demo"}
    # the benchmarks each paper needs are registered, with their targets stated
    issue_benchmarks = {"constrfl.client_step", "relfair.client_round", "fairvfl.round",
                        "fedmm.local_step"}
    assert issue_benchmarks <= names and issue_benchmarks <= set(TARGETS)


def test_every_paper_issue_target_is_stated():
    load_benchmarks()   # the targets register with their modules (another worker may not have)
    cs, rr = TARGETS["constrfl.client_step"], TARGETS["relfair.client_round"]
    assert (cs.max_bound, cs.where, cs.min_ratio) == (3.0, "d=300", None)
    assert (rr.max_bound, rr.where, rr.min_ratio) == (3.0, "1 thread", None)
    assert TARGETS["fairvfl.round"].min_ratio is None
    assert "per-sample loop" in TARGETS["fairvfl.round"].text
    assert TARGETS["fedmm.local_step"].min_ratio is None
    assert "per-client loop" in TARGETS["fedmm.local_step"].text


def _row(case, baseline, fast):
    return {"case": case, "baseline_s": baseline, "fast_s": fast}


def test_render_puts_the_target_next_to_each_ratio(monkeypatch):
    monkeypatch.setitem(TARGETS, "demo.step", Target("one step", "≥ 4× at n=100", 4.0, "n=100"))
    results = {
        "demo.step": ([_row("n=10", 1.0, 0.5), _row("n=100", 2.0, 0.25)], "1", ""),
        "demo.slow": ([_row("a", 1.0, 0.5), _row("b", 3.0, 0.5)], "2 -> 1", ""),
        "demo.broken": ([], "2", "DataFileMissing: mnist"),
    }
    md = render(results, "2 cores, BLAS x, torch 2 threads")
    assert "Machine: 2 cores, BLAS x, torch 2 threads" in md
    assert "| demo.step | ≥ 4× at n=100 | 8.0× at n=100 | met |" in md
    assert "| demo.slow | no numeric target | 2.0× to 6.0× (2 cases) | — |" in md
    assert "| demo.broken | no numeric target | failed: DataFileMissing: mnist | failed |" in md
    assert "| n=10 | 1 | 0.5 | 2.0x | (target at n=100) |" in md
    assert "| n=100 | 2 | 0.25 | 8.0x | ≥ 4×: met |" in md
    assert "| b | 3 | 0.5 | 6.0x | — |" in md
    assert "One call: one step. Target: ≥ 4× at n=100. Torch threads: 1." in md
    assert "Torch threads: 2 -> 1." in md
    assert "Failed: DataFileMissing: mnist" in md
    mixed = render({"demo.step": ([_row("n=100, x", 1.0, 0.5), _row("n=100, y", 5.0, 0.5)],
                                  "1", "")}, "m")
    assert "| demo.step | ≥ 4× at n=100 | 2.0×, 10.0× at n=100 | NOT met in 1 of 2 cases |" \
        in mixed
    assert "| n=100, x | 1 | 0.5 | 2.0x | ≥ 4×: NOT met |" in mixed
    none = render({"demo.step": ([_row("n=10", 1.0, 0.5)], "1", "")}, "m")
    assert "| demo.step | ≥ 4× at n=100 | 2.0× | no case at n=100 |" in none
    assert "| demo.step | ≥ 4× at n=100 | no cases | — |" in render(
        {"demo.step": ([], "1", "")}, "m")


def test_a_failing_benchmark_is_reported_and_the_run_fails(tmp_path, monkeypatch):
    import torch

    threads = torch.get_num_threads()

    def broken():
        torch.set_num_threads(1)
        raise FileNotFoundError("no data")

    monkeypatch.setitem(bench._BENCHMARKS, "zz.broken", broken)
    monkeypatch.setitem(bench._BENCHMARKS, "zz.fine", lambda: [_row("tiny", 0.2, 0.1)])
    assert main(["--only", "zz.*", "--out", str(tmp_path)]) == 1
    md = (tmp_path / "bench.md").read_text()
    assert "| zz.broken | no numeric target | failed: FileNotFoundError: no data | failed |" in md
    assert "| tiny | 0.2 | 0.1 | 2.0x | — |" in md
    assert torch.get_num_threads() == threads  # restored after the benchmark pinned it


@pytest.mark.parametrize("quick", [True, False])
def test_quick_mode_times_one_call(quick, monkeypatch):
    calls = []
    monkeypatch.setattr(bench, "_QUICK", quick)
    bench.best_time(lambda: calls.append(1), repeat=4)
    assert len(calls) == (1 if quick else 5)


def test_a_throwaway_bench_module_is_discovered_with_its_target(tmp_path, monkeypatch):
    """A new paper's ``bench/<paper>.py`` is found and states its own target: no list edited."""
    import sys

    import bench as bench_pkg

    (tmp_path / "throwaway.py").write_text(
        "from bench.harness import Target, benchmark\n\n\n"
        "@benchmark('throwaway.step', Target('one step', '>= 2x at n=9', 2.0, 'n=9'))\n"
        "def _step():\n    return [{'case': 'n=9', 'baseline_s': 3.0, 'fast_s': 1.0}]\n")
    monkeypatch.setattr(bench_pkg, "__path__", [*bench_pkg.__path__, str(tmp_path)])
    monkeypatch.setattr(bench, "_BENCHMARKS", dict(bench._BENCHMARKS))
    monkeypatch.setattr(bench, "TARGETS", dict(TARGETS))
    try:
        assert "throwaway.step" in load_benchmarks()
        assert bench.TARGETS["throwaway.step"].min_ratio == 2.0
        text = render({"throwaway.step": (bench._BENCHMARKS["throwaway.step"](), "1", "")},
                      "test machine")
        assert "≥ 2×: met" in text
    finally:
        sys.modules.pop("bench.throwaway", None)


def test_the_summary_verdict_counts_the_cases_not_met():
    t = Target("one round", "≥ 3.5× at 100 clients", min_ratio=3.5, where="100 clients")
    rows = [{"case": f"case {i} at 100 clients", "baseline_s": r, "fast_s": 1.0}
            for i, r in enumerate([1.7, 2.2, 2.3, 2.7, 4.1, 4.5])]
    assert bench._measured(t, rows)[1] == "NOT met in 4 of 6 cases"
    assert bench._measured(t, rows[4:])[1] == "met in all 2 cases"
    assert bench._measured(t, rows[:1])[1] == "NOT met"


def test_bound_columns_and_the_time_over_bound_verdict(monkeypatch):
    """A section whose rows state ``bound_s`` shows the bound and time / bound beside the
    oracle ratio, and a ``max_bound`` target is judged on time / bound of its cases.
    """
    monkeypatch.setitem(TARGETS, "demo.bounded", Target("one call", "≤ 3× bound at d=3",
                                                        where="d=3", max_bound=3.0))
    rows = [dict(_row("d=3, a", 1.0, 0.2), bound_s=0.1), dict(_row("d=3, b", 1.0, 0.4),
                                                                bound_s=0.1),
            dict(_row("d=1", 1.0, 0.5), bound_s=0.01), _row("d=3, none", 1.0, 0.5)]
    md = render({"demo.bounded": (rows, "1", "")}, "m")
    assert "| case | oracle s / call | vectorized s / call | ratio | bound s / call | " \
           "time / bound | target |" in md
    assert "| d=3, a | 1 | 0.2 | 5.0x | 0.1 | 2.0x | ≤ 3× bound: met |" in md
    assert "| d=3, b | 1 | 0.4 | 2.5x | 0.1 | 4.0x | ≤ 3× bound: NOT met |" in md
    assert "| d=1 | 1 | 0.5 | 2.0x | 0.01 | 50.0x | (target at d=3) |" in md
    assert "| d=3, none | 1 | 0.5 | 2.0x | — | — | (target at d=3) |" in md
    assert "| demo.bounded | ≤ 3× bound at d=3 | 2.0×, 4.0× of the bound at d=3 | " \
           "NOT met in 1 of 2 cases |" in md


def test_bounds_use_the_rates_measured_in_this_run(monkeypatch):
    import bench.bounds as bounds

    monkeypatch.setattr(bounds, "rates", lambda: {"gemm64": 1e10, "gemm32": 2e10,
                                                  "chol": 5e9, "bw": 1e9})
    assert bounds.bound_seconds(flops=1e10) == 1.0
    assert bounds.bound_seconds(flops=1e10, dtype="float32") == 0.5
    assert bounds.bound_seconds(flops=1e10, bytes_=3e9) == 3.0     # traffic dominates
    assert bounds.bound_seconds(flops=1e10, chol_flops=5e9) == 2.0  # factorization adds
    assert bounds.l2_bytes() > 0
