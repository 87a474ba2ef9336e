"""Lower bounds of the benchmarked calls from rates measured on this machine in this run.

A call's bound is the time its unavoidable work takes at the best rates this machine shows
for that kind of work, measured here at one thread, once per ``make bench``:

- ``gemm64`` / ``gemm32``: a 1000 x 1000 float64 / float32 matrix product (flop/s), the rate
  of matrix products (and of triangular solves, whose flops a GEMM does at least as fast);
- ``chol``: a 1000 x 1000 float64 Cholesky factorization (flop/s, ``n^3/3`` flops), the rate
  of factorizations;
- ``bw``: reading a float64 array of 4 x L2 or 64 MB (its dot product with itself, bytes/s;
  the faster of the two), the rate of memory-bound work on data beyond the core's L2 cache.

A benchmark row gives its work as ``flops`` (matrix products, at the GEMM rate of its
``dtype``), ``chol_flops`` (factorizations) and ``bytes`` (the data it must move at least);
the bound is ``chol_flops / chol + max(flops / gemm, bytes / bw)``: compute and traffic of
the products may overlap, a factorization's cannot be hidden behind them. time / bound >= 1
up to timing noise; a large ratio says how much a path leaves on the table.
"""

from __future__ import annotations

import time
from functools import lru_cache

import numpy as np

__all__ = ["bound_seconds", "count_torch_flops", "l2_bytes", "rates"]


def l2_bytes() -> int:
    """The size of one core's L2 cache (Linux sysfs; 2 MiB where it cannot be read): data
    larger than this streams from beyond it at :func:`rates` ``["bw"]``.
    """
    try:
        text = open("/sys/devices/system/cpu/cpu0/cache/index2/size").read().strip()
        return int(text[:-1]) * {"K": 2 ** 10, "M": 2 ** 20}[text[-1]]
    except (OSError, ValueError, KeyError):
        return 2 * 2 ** 20


def _best(fn, repeat: int = 5) -> float:
    fn()
    best = np.inf
    for _ in range(repeat):
        t0 = time.thread_time()
        fn()
        best = min(best, time.thread_time() - t0)
    return best


@lru_cache(maxsize=1)
def rates() -> dict[str, float]:
    """``{"gemm64", "gemm32", "chol": flop/s, "bw": bytes/s}`` at one thread (cached)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        g = torch.Generator().manual_seed(0)
        A = torch.rand(1000, 1000, generator=g, dtype=torch.float64)
        A32 = A.float()
        S = A @ A.T + 1000 * torch.eye(1000, dtype=torch.float64)
        big = np.random.default_rng(0).random(8 * 2 ** 20)         # 64 MB
        small = big[:4 * l2_bytes() // 8]                            # 4 x L2
        return {"gemm64": 2e9 / _best(lambda: A @ A),
                "gemm32": 2e9 / _best(lambda: A32 @ A32),
                "chol": 1e9 / 3 / _best(lambda: torch.linalg.cholesky(S)),
                "bw": max(x.nbytes / _best(lambda x=x: x @ x) for x in (small, big))}
    finally:
        torch.set_num_threads(threads)


def bound_seconds(flops: float = 0.0, bytes_: float = 0.0, chol_flops: float = 0.0,
                  dtype: str = "float64") -> float:
    """``chol_flops / chol + max(flops / gemm(dtype), bytes / bw)`` at :func:`rates`."""
    r = rates()
    gemm = r["gemm32" if dtype == "float32" else "gemm64"]
    return chol_flops / r["chol"] + max(flops / gemm, bytes_ / r["bw"])


def count_torch_flops(fn) -> int:
    """The matrix-product flops of one call of ``fn`` (torch's FlopCounterMode: mm, bmm,
    addmm, baddbmm, convolutions; elementwise work is not counted).
    """
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as fc:
        fn()
    return int(fc.get_total_flops())
