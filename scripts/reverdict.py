"""Apply the verdict rule of issue #28 (repro/engine/verdict.py) to the rows of a committed
``comparison.csv``, without rerunning anything, where its columns suffice.

Usage: ``python scripts/reverdict.py [figures/comparison.csv] [--out NOTES.md]``

What the committed columns give: our mean, our std and its n (``n_seeds``), the printed value
and std, the tolerance the old rule used. What this script adds from the code: the number of
runs behind each printed number (each paper package's ``PAPER_RUNS``), which printed stds pool
trials x clients (constrfl Tables 1-2 objective and rel. diff) and the misprint corrections
(from the row's reason). Rows whose committed std pools trials x clients (constrfl Tables 1-2
objective and relative difference with n > 1 clients: ``n_seeds`` = 10 n) are ``match`` where
the mean is within the tolerance (the mean needs no std); otherwise the rule refuses their
pooled std, but it bounds the std of the trial means (the between-trial sum of squares is at
most the total one: s_T <= s_pool sqrt((Tn - 1) / (n (T - 1)))), so a row beyond even that
largest band ``deviates``, and the others are flagged ``needs_rerun`` (the per-trial std needs
the records).
Convergence flags (k of N) are not in the committed columns; they need a rerun too.

Prints the per-paper counts (primary readings) before and after, every row whose verdict
changed (old, new, ours, paper, n ours/paper, sigma_diff) and the flagged rows.
"""

from __future__ import annotations

import argparse
import csv
import math
import re
from collections import Counter, defaultdict
from pathlib import Path
from types import SimpleNamespace

from repro.constrfl.experiments.reproduce import PAPER_RUNS as CONSTRFL_RUNS
from repro.engine.report import paper_name
from repro.engine.verdict import VERDICTS, is_primary, judge
from repro.fairvfl.experiments.reproduce import PAPER_RUNS as FAIRVFL_RUNS
from repro.fedmm.experiments.reproduce import PAPER_RUNS as FEDMM_RUNS
from repro.relfair.experiments.reproduce import PAPER_RUNS as RELFAIR_RUNS

RUNS = {"constrfl": CONSTRFL_RUNS, "fairvfl": FAIRVFL_RUNS, "fedmm": FEDMM_RUNS,
        "relfair": RELFAIR_RUNS}
POOLED_METRICS = ("objective", "relative_difference")
CORRECTED = re.compile(r"judged against the corrected value (\S+) ")


def _float(x: str) -> float | None:
    try:
        return float(x)
    except ValueError:
        return None


def _key(text: str) -> dict[str, str]:
    return dict(kv.split("=", 1) for kv in text.split(";") if "=" in kv)


def reverdict(row: dict) -> tuple[str, dict]:
    """``(new verdict, details)`` of one committed row under the new rule."""
    if row["verdict"] in ("not_run", "substitute_data"):
        return row["verdict"], {}
    exp = row["experiment"]
    group = exp.split(".")[0]
    pooled_paper = exp in ("constrfl.table1", "constrfl.table2") \
        and row["metric"] in POOLED_METRICS
    n = int(row["n_seeds"])
    clients = int(_key(row["key"]).get("n", "1") or 1) if pooled_paper else 1
    runs = n // clients   # a pooled list holds 10 trials x n clients
    std = _float(row["reproduced_std"])
    printed_std = _float(row["reported_std"])
    old_one_sided = "one-sided" in row["reason"]
    corrected = CORRECTED.search(row["reason"])
    # the committed tolerance is the experiment's stated one where no std is printed (the
    # one-sided rows' 5e-2 was no tolerance of the printed number: the rule recomputes it)
    stated = None if printed_std or old_one_sided else _float(row["tolerance"])
    rep = SimpleNamespace(
        n=runs, n_runs=runs, n_planned=None, mean=float(row["reproduced"]),
        std=math.nan if std is None or runs < 2 else std, corrected=(
            corrected.group(1) if corrected else None),
        printed_units=1.0 if exp == "constrfl.table4" else 0.5,
        tolerance=stated, rel_tolerance=None, over="trials" if group == "constrfl" else "seeds",
        n_paper=1 if exp == "constrfl.table3" else RUNS.get(group),
        paper_std_over="trials x clients" if pooled_paper else "")
    got = judge(row["reported"], printed_std, rep)
    details = {"n": runs, "n_paper": rep.n_paper, "sigma_diff": got["sigma_diff"],
               "tolerance": got["tolerance"], "notes": got["notes"]}
    if clients > 1 and got["verdict"] != "match":
        # the rule refuses the pooled std; the std of the T trial means is bounded by it
        # (between-trial sum of squares <= total): s_T <= s_pool sqrt((Tn - 1) / (n (T - 1)))
        s_max = std * math.sqrt((n - 1) / (clients * (runs - 1)))
        sd_max = math.sqrt(s_max ** 2 / runs + s_max ** 2 / rep.n_paper)
        d = abs(rep.mean - float(rep.corrected or row["reported"]))
        if d > 2 * sd_max:
            return "deviates", {**details, "sigma_diff": sd_max, "notes": [
                f"std pooled over {runs} trials x {clients} clients refused; even the largest "
                f"per-trial std it allows ({s_max:.3g}) gives 2σ_diff <= {2 * sd_max:.3g} < "
                f"|d| {d:.3g}"]}
        return "needs_rerun", {**details, "sigma_diff": math.nan,
                               "notes": [f"std pooled over {runs} trials x {clients} clients: "
                                         f"refused; |d| {d:.3g} is within the largest band it "
                                         f"allows ({2 * sd_max:.3g}): needs the per-trial std"]}
    return got["verdict"], details


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
    kinds = (*VERDICTS, "needs_rerun")
    lines = [f"# Reverdict of {args.csv} (primary readings) under repro/engine/verdict.py", "",
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
