"""``python -m bench``: the benchmark entry point (registry and harness in
:mod:`bench.harness`).
"""

from __future__ import annotations

import sys

from bench.harness import benchmark, best_time, compare_timings, machine, main

__all__ = ["benchmark", "best_time", "compare_timings", "machine", "main"]

if __name__ == "__main__":
    sys.exit(main())
