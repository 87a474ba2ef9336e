"""Apply the verdict rule (repro/engine/compare/verdict.py) to the rows of a committed
``comparison.csv``, without rerunning anything, where its columns suffice.

Usage: ``python scripts/reverdict.py [figures/comparison.csv] [--out NOTES.md]``

A thin command line over :func:`repro.engine.compare.rejudge.reverdict` (the one implementation; a
partial ``repro compare NAME`` re-judges the rows it keeps with it): see that module for what
the committed columns give and how a std pooled over clients is bounded or flagged
``needs_rerun``.

Prints the per-paper counts (primary readings) before and after, every row whose verdict
changed (old, new, ours, paper, n ours/paper, sigma_diff) and the flagged rows.
"""

from __future__ import annotations

import argparse
import csv
import math
from collections import Counter, defaultdict
from pathlib import Path

from repro.engine.compare.rejudge import reverdict
from repro.engine.compare.verdict import NEEDS_RERUN, VERDICTS, is_primary
from repro.engine.report.report import paper_name


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="?", default="figures/comparison.csv")
    ap.add_argument("--out", help="also write the report to this Markdown file")
    args = ap.parse_args(argv)
    with open(args.csv, newline="") as f:
        rows = [r for r in csv.DictReader(f) if is_primary(r)]
    before: dict[str, Counter] = defaultdict(Counter)
    after: dict[str, Counter] = defaultdict(Counter)
    changed, flagged = [], []
    for r in rows:
        new, d = reverdict(r)
        before[r["paper_file"]][r["verdict"]] += 1
        after[r["paper_file"]][new] += 1
        if new != r["verdict"]:
            (flagged if new == "needs_rerun" else changed).append((r, new, d))
    kinds = (*VERDICTS, NEEDS_RERUN)
    lines = [f"# Reverdict of {args.csv} (primary readings) under "
             "repro/engine/compare/verdict.py", "",
             "| paper | " + " | ".join(f"{v} before/after" for v in kinds) + " |",
             "|---|" + "---|" * len(kinds)]
    for p in sorted(before):
        lines.append(f"| {paper_name(p)} | "
                     + " | ".join(f"{before[p][v]}/{after[p][v]}" for v in kinds) + " |")
    for title, items in (("Rows whose verdict changed", changed),
                         ("Rows flagged: pooled std, need a rerun for the band", flagged)):
        lines += ["", f"## {title} ({len(items)})", "",
                  "| experiment | key | metric | old | new | ours | paper | n ours/paper | "
                  "σ_diff | note |", "|---|---|---|---|---|---|---|---|---|---|"]
        for r, new, d in items:
            sd = d["sigma_diff"]
            theirs = r["reported"] + (f" ± {r['reported_std']}" if r["reported_std"] else "")
            ours = f"{float(r['reproduced']):.4g}" + (
                f" ± {float(r['reproduced_std']):.3g}" if r["reproduced_std"] else "")
            lines.append(f"| {r['experiment']} | {r['key']} | {r['metric']} | {r['verdict']} | "
                         f"{new} | {ours} | {theirs} | {d['n']}/{d['n_paper']} | "
                         f"{'' if sd == '' or math.isnan(sd) else f'{sd:.3g}'} | "
                         f"{'; '.join(d['notes'])} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
