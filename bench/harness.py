"""``make bench``: speed of the vectorized paths as ratios to their loop oracles.

Each benchmark times a vectorized implementation against the plain loop that the tests use as
its equality oracle, in the same process, and reports best-of-``repeat`` wall times and the
ratio loop / vectorized. Papers add benchmarks in ``bench/<paper>.py`` with
:func:`benchmark`; ``python -m bench [--only GLOB]`` runs them and writes
``figures/bench.md``: the machine (cores, BLAS, torch threads), then per benchmark what one
timed call is, the target from the paper's issue next to each measured ratio, and the times.
``--quick`` times every call once without warm-up (a fast pass that checks every benchmark
still runs; its ratios are noisy).

The registry lives here, in ``bench.harness``, not in the ``python -m bench`` entry
module: run as ``__main__`` that module is a second copy, and benchmarks registered through
``bench.harness`` would land in a registry ``main`` never reads.
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib
import importlib.util
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

_BENCHMARKS: dict[str, Callable[[], list[dict]]] = {}


def benchmark(name: str, target: Target | None = None):
    """Register ``fn() -> list of rows`` (dicts with ``case``, ``baseline_s``, ``fast_s``);
    ``target``: what one call is and the target the paper's issue states (kept in
    :data:`TARGETS`, so a new paper's module declares its own and edits no list here).
    """

    def deco(fn):
        _BENCHMARKS[name] = fn
        if target is not None:
            TARGETS[name] = target
        return fn

    return deco


_QUICK = False


def best_time(fn: Callable[[], object], repeat: int = 5) -> float:
    """Best time of ``repeat`` calls (after one warm-up call); one call, no warm-up, under
    ``--quick``. At one torch thread the time is the process's CPU time, else wall time.
    """
    import torch

    # one thread: the process's CPU time (what the call costs, whatever else shares the
    # machine); several: wall time (CPU time would add the threads up)
    clock = time.process_time if torch.get_num_threads() == 1 else time.perf_counter
    if not _QUICK:
        fn()
    best = np.inf
    for _ in range(1 if _QUICK else repeat):
        t0 = clock()
        fn()
        best = min(best, clock() - t0)
    return best


def compare_timings(case: str, baseline: Callable[[], object], fast: Callable[[], object],
                    repeat: int = 5) -> dict:
    return {"case": case, "baseline_s": best_time(baseline, repeat),
            "fast_s": best_time(fast, repeat)}


def machine() -> str:
    """Cores, BLAS library and threads, torch threads: what the timings depend on."""
    import platform

    import torch
    from threadpoolctl import threadpool_info

    blas = ", ".join(f"{i.get('internal_api')} {i.get('version')} ({i.get('num_threads')} "
                     f"threads)" for i in threadpool_info() if i.get("user_api") == "blas")
    return (f"{os.cpu_count()} cores ({platform.processor() or platform.machine()}), "
            f"numpy {np.__version__} with BLAS {blas or 'unknown'}, torch {torch.__version__} "
            f"with {torch.get_num_threads()} threads, Python {platform.python_version()}")


def load_benchmarks() -> dict[str, Callable[[], list[dict]]]:
    """Import every module of this package (on every entry of ``bench.__path__``) but the
    harness (discovery: one module per paper, none listed here); return their benchmarks.
    """
    import pkgutil

    import bench

    for mod in sorted({m.name for m in pkgutil.iter_modules(list(bench.__path__))}):
        if mod not in ("harness", "__main__"):
            importlib.import_module(f"bench.{mod}")
    return dict(sorted(_BENCHMARKS.items()))


@dataclass(frozen=True)
class Target:
    """What a benchmark measures and the target its paper's issue states.

    ``call``: what one timed call does (so ``s / call`` is a per-round or per-step time);
    ``text``: the target as stated; ``min_ratio``: the numeric target, checked on the cases
    whose name contains ``where`` (None: no numeric target).
    """

    call: str
    text: str = "no numeric target"
    min_ratio: float | None = None
    where: str = ""
    max_bound: float | None = None   # time / bound at most this (cases with ``where``)

    def verdict(self, case: str, ratio: float, bound_ratio: float | None = None) -> str:
        if self.max_bound is not None:
            if self.where not in case or bound_ratio is None:
                return f"(target at {self.where})"
            return (f"≤ {self.max_bound:g}× bound: "
                    + ("met" if bound_ratio <= self.max_bound else "NOT met"))
        if self.min_ratio is None:
            return self.text
        if self.where not in case:
            return f"(target at {self.where})"
        return f"≥ {self.min_ratio:g}×: " + ("met" if ratio >= self.min_ratio else "NOT met")


# The targets: each benchmark module passes its own to @benchmark, so a new paper edits nothing
# here.
TARGETS: dict[str, Target] = {}


def _run_one(fn: Callable[[], list[dict]]) -> tuple[list[dict], str, str]:
    """Rows, the torch threads it ran with (``"2"``, or ``"2 -> 1"`` when the benchmark pins
    its own count), and an error (empty if none). The process's thread count is restored.
    """
    import torch

    threads = torch.get_num_threads()
    rows, error = [], ""
    try:
        rows = fn()
    except Exception as exc:  # one failing benchmark must not hide the others
        error = f"{type(exc).__name__}: {exc}"
    used = torch.get_num_threads()
    torch.set_num_threads(threads)
    return rows, str(threads) if used == threads else f"{threads} -> {used}", error


def _measured(target: Target, rows: list[dict]) -> tuple[str, str]:
    """Summary cells: the ratios (those of the target's cases where it has a numeric target,
    else their range) and the verdict.
    """
    ratios = [(r["case"], r["baseline_s"] / r["fast_s"]) for r in rows]
    if not ratios:
        return "no cases", "—"
    if target.max_bound is not None:
        return _bound_measured(target, rows)
    if target.min_ratio is None:
        lo, hi = min(x for _, x in ratios), max(x for _, x in ratios)
        span = f"{lo:.1f}×" if len(ratios) == 1 else f"{lo:.1f}× to {hi:.1f}× ({len(ratios)} cases)"
        return span, "—"
    checked = [x for c, x in ratios if target.where in c]
    if not checked:
        return "; ".join(f"{x:.1f}×" for _, x in ratios), f"no case at {target.where}"
    met = sum(x >= target.min_ratio for x in checked)
    if met == len(checked):
        verdict = "met" + (f" in all {met} cases" if met > 1 else "")
    else:  # name what is not met: "NOT met in 4 of 6 cases" (it said "in 2 of 6", the met ones)
        verdict = "NOT met" + (f" in {len(checked) - met} of {len(checked)} cases"
                               if len(checked) > 1 else "")
    return ", ".join(f"{x:.1f}×" for x in checked) + f" at {target.where}", verdict


def _bound_ratio(r: dict) -> float | None:
    return r["fast_s"] / r["bound_s"] if r.get("bound_s") else None


def _bound_measured(target: Target, rows: list[dict]) -> tuple[str, str]:
    """Summary cells of a time / bound target: the ratios of its cases and the verdict."""
    checked = [b for r in rows if target.where in r["case"]
               and (b := _bound_ratio(r)) is not None]
    if not checked:
        return "no bounded case", f"no case at {target.where}"
    met = sum(b <= target.max_bound for b in checked)
    verdict = ("met" + (f" in all {met} cases" if met > 1 else "") if met == len(checked)
               else "NOT met" + (f" in {len(checked) - met} of {len(checked)} cases"
                                 if len(checked) > 1 else ""))
    return (", ".join(f"{b:.1f}×" for b in checked) + f" of the bound at {target.where}",
            verdict)


def _case_lines(target: Target, rows: list[dict]) -> list[str]:
    """A benchmark's table: with the bound columns when any row states its bound."""
    bounded = any("bound_s" in r for r in rows)
    head = "| case | oracle s / call | vectorized s / call | ratio |"
    lines = [head + (" bound s / call | time / bound |" if bounded else "") + " target |",
             "|---|---|---|---|" + ("---|---|" if bounded else "") + "---|"]
    for r in rows:
        ratio = r["baseline_s"] / r["fast_s"]
        b = _bound_ratio(r)
        tgt = ("—" if target.min_ratio is None and target.max_bound is None
               else target.verdict(r["case"], ratio, b))
        extra = ""
        if bounded:
            extra = (f" {r['bound_s']:.3g} | {b:.1f}x |" if b is not None else " — | — |")
        lines.append(f"| {r['case']} | {r['baseline_s']:.4g} | {r['fast_s']:.4g} | "
                     f"{ratio:.1f}x |{extra} {tgt} |")
    return lines


def render(results: dict[str, tuple[list[dict], str, str]], machine_line: str,
           quick: bool = False) -> str:
    """``bench.md``: the machine, a summary of targets, then every case's times and ratio."""
    lines = ["# Benchmarks", "",
             "Every benchmark times a vectorized path (\"vectorized\") against the plain loop "
             "the tests use as its equality oracle (\"oracle\"), both in this one process; "
             "times are the best of N calls, per call (what one call is: see each section), "
             "in CPU time at one thread, wall time at two; ratio = oracle / vectorized. "
             "Where a section states a bound, it is the call's unavoidable work (flops of its "
             "products and factorizations, bytes it must read) at the rates this machine "
             "showed in this run (bench/bounds.py), and time / bound says how far the "
             "vectorized path is from it.", "", f"Machine: {machine_line}", ""]
    if quick:
        lines += ["**Quick run** (`--quick`: one call each, no warm-up): the ratios are "
                  "indicative only.", ""]
    lines += ["| benchmark | target | measured | verdict |", "|---|---|---|---|"]
    for name, (rows, _, error) in results.items():
        target = TARGETS.get(name, Target("one call"))
        if error:
            lines.append(f"| {name} | {target.text} | failed: {error} | failed |")
        else:
            measured, verdict = _measured(target, rows)
            lines.append(f"| {name} | {target.text} | {measured} | {verdict} |")
    for name, (rows, threads, error) in results.items():
        target = TARGETS.get(name, Target("one call"))
        lines += ["", f"## {name}", "",
                  f"One call: {target.call}. Target: {target.text}. Torch threads: {threads}.",
                  ""]
        if error:
            lines.append(f"Failed: {error}")
            continue
        lines += _case_lines(target, rows)
    return "\n".join(lines) + "\n"


def _rates_line() -> str:
    """The rates the bounds use (bench/bounds.py), measured now at one thread."""
    from bench.bounds import rates

    r = rates()
    return (f"; rates at one thread: GEMM {r['gemm64'] / 1e9:.1f} GFLOP/s (float64), "
            f"{r['gemm32'] / 1e9:.1f} GFLOP/s (float32), Cholesky {r['chol'] / 1e9:.1f} "
            f"GFLOP/s (n = 1000), read {r['bw'] / 1e9:.1f} GB/s (beyond L2)")


def main(argv: list[str] | None = None) -> int:
    global _QUICK

    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="*", help="glob over benchmark names (default: all)")
    parser.add_argument("--out", type=Path, default=None,
                        help="directory of bench.md (default: $FEDREPRO_FIGURES, else the "
                             "checkout's figures/, else ./figures; see `repro where`)")
    parser.add_argument("--quick", action="store_true",
                        help="one call per timing, no warm-up: checks that every benchmark "
                             "runs; ratios are indicative only")
    args = parser.parse_args(argv)
    from repro.core.paths import figures_dir

    args.out = figures_dir(args.out)
    import torch
    from threadpoolctl import threadpool_limits

    from repro.engine.run.executors import keep_freed_memory

    keep_freed_memory()      # as in the engine's cells: freed memory stays in the process
    chosen = {n: f for n, f in load_benchmarks().items() if fnmatch.fnmatchcase(n, args.only)}
    threads = torch.get_num_threads()
    _QUICK, was = args.quick, _QUICK
    results = {}
    try:
        # one thread everywhere (BLAS and torch); a benchmark that times two threads sets
        # torch's count itself
        torch.set_num_threads(1)
        with threadpool_limits(limits=1):
            machine_line = machine() + (_rates_line() if chosen else "")
        print(f"Machine: {machine_line}")
        if not chosen:
            print(f"no benchmark matches {args.only!r}", file=sys.stderr)
            return 2
        for name, fn in chosen.items():
            with threadpool_limits(limits=1):
                results[name] = _run_one(fn)
            rows, _, error = results[name]
            print(f"{name}: " + (f"failed: {error}" if error else "; ".join(
                f"{r['case']}: {r['baseline_s'] / r['fast_s']:.1f}x" for r in rows)),
                flush=True)
    finally:
        _QUICK = was
        torch.set_num_threads(threads)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench.md").write_text(render(results, machine_line, args.quick))
    print(f"wrote {args.out / 'bench.md'}")
    return 1 if any(error for _, _, error in results.values()) else 0
