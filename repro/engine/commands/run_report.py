"""What ``repro run`` says after a sweep, and ``repro run --list-stale``.

:func:`report_sweep` prints one line per experiment (computed, cached, in progress elsewhere,
not run, stale) and the reasons of the cells without a result, and gives the exit status: 1
when a cell failed (other than by a named divergence: final, said, exit 0) or when every
cell's data is missing, else 0. :func:`list_stale` prints the
records made by other code, whose cells the next run recomputes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from repro.engine.run.planning import auto_scale, diverged, stale_records
from repro.engine.run.runner import BUSY_REASON, SweepSummary


def report_sweep(summaries: list[SweepSummary]) -> int:
    """Print what the sweep did, per experiment; the command's exit status."""
    failed = missing_data = cells = n_diverged = 0
    for s in summaries:
        stale = f" ({s.stale} stale: made by other code, recomputed)" if s.stale else ""
        # a cell that ended not_run or failed was attempted, not computed: count it once
        # (a named divergence is counted apart: final, computed now or loaded)
        done = s.computed - (s.not_run - s.busy) - s.diverged_now
        # a cell another live run holds (its lock) is in progress there, not "not run" here
        busy = f", {s.busy} in progress in another run" if s.busy else ""
        div = f", {s.diverged} diverged (final)" if s.diverged else ""
        print(f"{s.experiment} [{s.scale}]: {done} computed, "
              f"{s.cached - (s.diverged - s.diverged_now)} cached{busy}, "
              f"{s.not_run - s.busy} not run{div}{stale}")
        for reason in sorted({r.reason for r in s.records if not r.ok}):
            text = (reason if reason.startswith("failed") else f"in progress: {reason}"
                    if reason.startswith(BUSY_REASON) else f"not run: {reason}")
            print("    " + text.replace("\n", "\n    "))
        failed += sum(r.status == "failed" and not diverged(r) for r in s.records)
        n_diverged += sum(diverged(r) for r in s.records)
        missing_data += sum(r.reason.startswith("data unavailable") for r in s.records)
        cells += len(s.records)
    if n_diverged:
        print(f"{n_diverged} cell(s) diverged (a named DivergenceError above: the algorithm as "
              "written at that cell; final, as the same code diverges again, so no rerun "
              "retries them and `repro run --force` does); their tables show the cells without "
              "a value and with the reason (docs/deviations.md#failed-cells)")
    if failed:
        print(f"{failed} cell(s) failed; their errors are in the log above and in their "
              "records; rerun to retry them", file=sys.stderr)
        return 1
    if cells and missing_data == cells:
        print("nothing ran: every cell's data is missing (see above for where it was looked "
              "for and how to get it)", file=sys.stderr)
        return 1
    return 0


def list_stale(experiments, scale: str, results: Path | None) -> int:
    """Print the stale records of ``experiments`` at ``scale`` (``auto`` resolved per
    experiment) and their count; the exit status (0).
    """
    total = 0
    for exp in experiments:
        stale = stale_records(exp, auto_scale(exp, scale, results), results)
        for rec in stale.values():
            print(f"{exp.name} {json.dumps(rec.config, sort_keys=True)}: {rec.stale_note}, "
                  f"commit {rec.commit or 'unknown'}, finished "
                  f"{rec.timings.get('finished', '?')}")
        if stale:
            print(f"{len(stale)} stale record(s) of {exp.name}: `repro run {exp.name}` "
                  "recomputes them")
        total += len(stale)
    print(f"{total} stale record(s) in all")
    return 0
