"""``python -m repro.bench``: the benchmark entry point (registry and harness in
:mod:`repro.core.bench`)."""

from __future__ import annotations

import sys

from repro.core.bench import benchmark, best_time, compare_timings, machine, main

__all__ = ["benchmark", "best_time", "compare_timings", "machine", "main"]

if __name__ == "__main__":
    sys.exit(main())
