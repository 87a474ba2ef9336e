"""``make bench``: speed of the vectorized paths as ratios to their loop oracles.

Each benchmark times a vectorized implementation against the plain loop that the tests use as
its equality oracle, in the same process, and reports best-of-``repeat`` wall times and the
ratio loop / vectorized. Papers add benchmarks in ``repro/<paper>/bench.py`` with
:func:`benchmark`; ``python -m repro.bench [--only GLOB]`` runs them and writes
``figures/bench.md``.

The registry lives here, in ``repro.core.bench``, not in the ``python -m repro.bench`` entry
module: run as ``__main__`` that module is a second copy, and benchmarks registered through
``repro.bench`` would land in a registry ``main`` never reads.
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
from pathlib import Path

import numpy as np

from repro.core.registry import PAPER_PACKAGES

_BENCHMARKS: dict[str, Callable[[], list[dict]]] = {}


def benchmark(name: str):
    """Register ``fn() -> list of rows`` (dicts with ``case``, ``baseline_s``, ``fast_s``)."""

    def deco(fn):
        _BENCHMARKS[name] = fn
        return fn

    return deco


def best_time(fn: Callable[[], object], repeat: int = 5) -> float:
    """Best wall time of ``repeat`` calls (after one warm-up call)."""
    fn()
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def compare_timings(case: str, baseline: Callable[[], object], fast: Callable[[], object],
                    repeat: int = 5) -> dict:
    return {"case": case, "baseline_s": best_time(baseline, repeat),
            "fast_s": best_time(fast, repeat)}


@benchmark("core.projections")
def _projections() -> list[dict]:
    from repro.core.projections import capped_simplex_projection, simplex_projection

    rng = np.random.default_rng(0)
    rows = []
    for batch, d in ((1000, 10), (1000, 100), (200, 1000)):
        x = rng.normal(size=(batch, d))
        rows.append(compare_timings(
            f"simplex, batch {batch} x d {d}",
            lambda x=x: [simplex_projection(r) for r in x], lambda x=x: simplex_projection(x)))
        cap = 2.0 / d
        rows.append(compare_timings(
            f"capped simplex (cap 2/d), batch {batch} x d {d}",
            lambda x=x, cap=cap: [capped_simplex_projection(r, cap) for r in x],
            lambda x=x, cap=cap: capped_simplex_projection(x, cap)))
    return rows


@benchmark("core.demo")
def _demo_gradient() -> list[dict]:
    from repro.core.data.libsvm import load_a8a
    from repro.core.demo import logistic_loss_grad

    data = load_a8a("train")
    X, y = data.X, data.y.astype(float)
    w = np.random.default_rng(0).normal(scale=0.1, size=X.shape[1] + 1)

    def per_sample():
        g = np.zeros_like(w)
        for xi, yi in zip(X, y, strict=True):
            m = yi * (xi @ w[:-1] + w[-1])
            c = -yi / (1 + np.exp(m)) / len(y)
            g[:-1] += c * xi
            g[-1] += c
        g[:-1] += 1e-4 * w[:-1]
        return g

    return [compare_timings(f"logistic gradient, a8a n={len(y)} d={X.shape[1]}", per_sample,
                            lambda: logistic_loss_grad(w, X, y, 1e-4), repeat=3)]


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
    for pkg in PAPER_PACKAGES:
        mod = f"repro.{pkg}.bench"
        if importlib.util.find_spec(f"repro.{pkg}") and importlib.util.find_spec(mod):
            importlib.import_module(mod)
    return dict(sorted(_BENCHMARKS.items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m repro.bench", description=__doc__)
    parser.add_argument("--only", default="*", help="glob over benchmark names")
    parser.add_argument("--out", type=Path,
                        default=Path(os.environ.get("FEDREPRO_FIGURES", "figures")))
    args = parser.parse_args(argv)
    chosen = {n: f for n, f in load_benchmarks().items() if fnmatch.fnmatchcase(n, args.only)}
    print(f"Machine: {machine()}")
    if not chosen:
        print(f"no benchmark matches {args.only!r}", file=sys.stderr)
        return 2
    lines = ["# Benchmarks", "",
             "Best-of-N wall time; ratio = baseline (loop oracle) / fast (vectorized), both "
             "timed in one process.", "", f"Machine: {machine()}", "",
             "| benchmark | case | baseline s | fast s | ratio |", "|---|---|---|---|---|"]
    for name, fn in chosen.items():
        for row in fn():
            ratio = row["baseline_s"] / row["fast_s"]
            line = (f"| {name} | {row['case']} | {row['baseline_s']:.4g} | "
                    f"{row['fast_s']:.4g} | {ratio:.1f}x |")
            print(line, flush=True)
            lines.append(line)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out / 'bench.md'}")
    return 0
