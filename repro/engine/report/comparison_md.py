"""``comparison.md`` and ``comparison.csv``: the comparison rows written for a reader.

The verdicts themselves are :mod:`repro.engine.compare.verdict`'s and the causes
:mod:`repro.engine.compare.causes`'; this module only writes them: the rule first, then the counts
(verdicts per paper, then per table beside the causes of the deviating rows, and the previous
comparison's where one is given), the fitted readings, the deviating rows with their causes
and evidence, then every table in full under its noise model. Numbers are shown to the paper's
printed precision plus one digit (the CSV keeps every digit).
"""

from __future__ import annotations

import csv
import math
import re
from collections import Counter, defaultdict
from pathlib import Path

from repro.engine.compare.causes import assign_causes
from repro.engine.compare.deviations import heading_anchor  # noqa: F401 (re-exported)
from repro.engine.compare.rejudge import REJUDGED, is_current
from repro.engine.compare.verdict import (
    NEEDS_RERUN,
    RULE,
    RULE_ID,
    is_primary,
    printed_exponent,
    shown_verdicts,
)
from repro.engine.records.kept import provenance_lines
from repro.engine.report.causes_md import fitted_lines, noise_line, table_counts_lines
from repro.engine.report.measured import four_digits as _fmt
from repro.engine.report.report import paper_name, smoke_banner

COLUMNS = ("experiment", "paper_file", "table", "place", "key", "metric", "reported",
           "reported_std", "reproduced", "reproduced_std", "n_seeds", "n_paper", "sigma_diff",
           "tolerance", "paper_std", "verdict", "cause", "evidence", "reason", "paper_note",
           "scale", "reading", "primary", "diagnostic", "made_by", "rule")
JUDGED = ("match", "within_noise", "deviates")
_HEAD = ("| key | metric | reported | reproduced | n ours/paper | width | 2σ_diff | verdict | "
         "cause | reason |")
_RULE_LINE = "|---|---|---|---|---|---|---|---|---|---|"


def write_comparison(rows: list[dict], out_dir: Path) -> list[Path]:
    """``comparison.csv`` (one row per reported row) and ``comparison.md`` (rule and summary
    first). The ``comparison.csv`` already in ``out_dir`` (the previous comparison) gives the
    counts shown beside the new ones and the rows whose verdict changed. The causes are
    (re)assigned first: kept rows re-judged by the current rule get theirs.
    """
    assign_causes(rows)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path = out_dir / "comparison.csv"
    before: list[dict] = []
    if csv_path.is_file():
        with open(csv_path, newline="") as f:
            before = list(csv.DictReader(f))
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n", extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    md_path = out_dir / "comparison.md"
    md_path.write_text(_markdown(rows, before))
    return [md_path, csv_path]


def summary(rows: list[dict]) -> dict[str, Counter]:
    """Verdict counts per paper under the primary readings (the headline)."""
    per_paper: dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        if not is_primary(r):
            continue
        per_paper[r["paper_file"]][r["verdict"]] += 1
    return dict(sorted(per_paper.items()))


def _num(x: object) -> float:
    try:
        return float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan


def at_precision(x: object, printed: str) -> str:
    """``x`` to the printed number's precision plus one digit: ``0.2973`` beside a printed
    ``"0.27"`` -> ``"0.297"``; beside ``"1.52e-04"`` -> four significant digits. Without a
    usable printed number, four significant digits.
    """
    v, exp = _num(x), printed_exponent(printed)
    if math.isnan(v) or exp is None:
        return _fmt(x) if x != "" else ""
    if "e" in printed.lower():
        digits = len(printed.lower().split("e")[0].replace("-", "").replace(".", "").lstrip("0"))
        return f"{v:.{max(digits, 1)}e}"
    return f"{v:.{max(0, -exp) + 1}f}"


def _spread(x: object) -> str:
    v = _num(x)
    return "" if math.isnan(v) else f"{v:.2g}"


_DEVIATION_LINK = re.compile(r"(?<![\[(/])docs/deviations\.md(#[\w-]+)?")


def linked(reason: str) -> str:
    """A reason for a Markdown table in ``figures/``: its ``docs/deviations.md#anchor``
    references become links (relative to ``figures/``), pipes are escaped.
    """
    text = reason.replace("|", "\\|")
    return _DEVIATION_LINK.sub(lambda m: f"[{m.group(0)}](../{m.group(0)})", text)


def _summary_table(rows: list[dict]) -> list[str]:
    shown = shown_verdicts(rows)
    lines = ["| paper | " + " | ".join(shown) + " | total |",
             "|---|" + "---|" * (len(shown) + 1)]
    total: Counter = Counter()
    for paper, c in summary(rows).items():
        total.update(c)
        lines.append(f"| {paper_name(paper)} | " + " | ".join(str(c[v]) for v in shown)
                     + f" | {sum(c.values())} |")
    lines.append("| **all** | " + " | ".join(str(total[v]) for v in shown)
                 + f" | {sum(total.values())} |")
    return lines


def _ours(r: dict) -> str:
    if r["reproduced"] == "":
        return ""
    std = _spread(r["reproduced_std"])
    return at_precision(r["reproduced"], r["reported"]) + (f" ± {std}" if std else "")


def _theirs(r: dict) -> str:
    return r["reported"] + (f" ± {_fmt(r['reported_std'])}" if r["reported_std"] != "" else "")


def _n(r: dict) -> str:
    """Runs on both sides: ours / the paper's (``?`` where the paper does not say)."""
    if r["reproduced"] == "":
        return ""
    return f"{r['n_seeds']}/{r.get('n_paper') or '?'}"


def _band(r: dict) -> str:
    v = _num(r.get("sigma_diff", ""))
    return "" if math.isnan(v) else f"{2 * v:.2g}"


def _tol(r: dict) -> str:
    v = _num(r["tolerance"])
    return "" if math.isnan(v) else f"{v:.2g}"


def _before_after(rows: list[dict], before: list[dict]) -> list[str]:
    """Per paper, the counts of the previous comparison and of this one side by side."""
    old, new = summary(before), summary(rows)
    shown = shown_verdicts(rows, before)
    head = " | ".join(f"{v} before/now" for v in shown)
    lines = [f"| paper | {head} |", "|---|" + "---|" * len(shown)]
    for paper in sorted(set(old) | set(new)):
        o, n = old.get(paper, Counter()), new.get(paper, Counter())
        lines.append(f"| {paper_name(paper)} | "
                     + " | ".join(f"{o[v]}/{n[v]}" for v in shown) + " |")
    return lines


def changed_rows(rows: list[dict], before: list[dict]) -> list[tuple[dict, dict]]:
    """``(old, new)`` for every primary row whose verdict differs from the previous one."""
    ident = lambda r: (r["experiment"], r["table"], r["key"], r["metric"])  # noqa: E731
    old = {ident(r): r for r in before if is_primary(r)}
    return [(old[ident(r)], r) for r in rows
            if is_primary(r) and ident(r) in old and old[ident(r)]["verdict"] != r["verdict"]]


def _changes(rows: list[dict], before: list[dict]) -> list[str]:
    if not before:
        return []
    made = {r.get("made_by", "") for r in before} - {""}
    older = sum(r["verdict"] in JUDGED and not is_current(r) for r in before
                if is_primary(r))
    lines = [f"Against the previous comparison as it was written ("
             f"{'; '.join(sorted(made)) or 'no provenance'}"
             + (f"; {older} of its judged rows by a rule older than `{RULE_ID}`" if older else "")
             + "), counts per paper, previous/now:", "", *_before_after(rows, before), ""]
    moved = changed_rows(rows, before)
    if moved:
        lines += [f"{len(moved)} rows changed verdict "
                  "([the list](#rows-whose-verdict-changed)).", ""]
    return lines


def _older_rule(rows: list[dict]) -> list[str]:
    """What the kept rows' rule is: a line for the rows re-judged from their committed columns
    (:mod:`repro.engine.compare.rejudge`), with those the columns cannot decide, and a warning for
    any
    row still judged by a rule older than :data:`RULE_ID`.
    """
    lines = []
    again = Counter(r["experiment"] for r in rows if r.get("rule", "") == REJUDGED)
    if again:
        rerun = Counter(r["experiment"] for r in rows if r["verdict"] == NEEDS_RERUN)
        lines += [f"**{sum(again.values())} kept rows were re-judged by the rule above from "
                  "their committed columns** (mean, std, n, printed value and std; their "
                  "numbers are those of the commit in `made_by`, their records are not on this "
                  "machine): " + ", ".join(f"{e} {n}" for e, n in sorted(again.items()))
                  + ". " + (f"**{sum(rerun.values())} of them are `{NEEDS_RERUN}`**: their "
                            "committed std pools clients, the rule refuses it, and the largest "
                            "band it allows does not decide them ("
                            + ", ".join(f"{e} {n}" for e, n in sorted(rerun.items()))
                            + "; [the list](#rows-that-need-a-rerun)); they are counted apart, "
                            "never as reproduced." if rerun else
                            "The committed columns decide every one of them."), ""]
    old = Counter(r["experiment"] for r in rows
                  if r["verdict"] in JUDGED and not is_current(r))
    if old:
        lines += [f"**{sum(old.values())} rows keep the verdicts of an earlier rule** (kept "
                  f"from a comparison written before `{RULE_ID}`: "
                  + ", ".join(f"{e} {n}" for e, n in sorted(old.items()))
                  + "): run `repro compare` on those experiments to judge them by the rule "
                    "above.", ""]
    return lines


def _needs_rerun(rows: list[dict]) -> list[str]:
    todo = [r for r in rows if r["verdict"] == NEEDS_RERUN]
    if not todo:
        return []
    lines = ["", "## Rows that need a rerun", "",
             f"{len(todo)} kept rows the committed columns cannot decide under the rule "
             "(counted apart, never as reproduced); `repro run` and `repro compare` on their "
             "experiment judge them from the records:", "",
             "| experiment " + _HEAD, "|---" + _RULE_LINE]
    lines += [f"| {r['experiment']} | {r['key']} | {r['metric']} | {_theirs(r)} | "
              f"{_ours(r)} | {_n(r)} | {_tol(r)} | | {NEEDS_RERUN} | {linked(r['reason'])} |"
              for r in todo]
    return lines


def _changes_table(rows: list[dict], before: list[dict]) -> list[str]:
    moved = changed_rows(rows, before)
    if not moved:
        return []
    lines = ["", "## Rows whose verdict changed", "",
             "| experiment | key | metric | before | now | reported | reproduced | n | 2σ_diff |",
             "|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {n['experiment']} | {n['key']} | {n['metric']} | {o['verdict']} | "
              f"{n['verdict']} | {_theirs(n)} | {_ours(n)} | {_n(n)} | {_band(n)} |"
              for o, n in moved]
    return lines


def reading_counts(rows: list[dict]) -> dict[str, dict[tuple[str, str, bool], Counter]]:
    """Paper -> (experiment, reading, primary) -> verdict counts."""
    out: dict[str, dict[tuple[str, str, bool], Counter]] = defaultdict(dict)
    for r in rows:
        key = (r["experiment"], str(r.get("reading", "as-written")), is_primary(r))
        out[r["paper_file"]].setdefault(key, Counter())[r["verdict"]] += 1
    return dict(sorted(out.items()))


def _row_id(r: dict) -> tuple:
    return (r["experiment"], r["table"], r["key"], r["metric"])


def _reading_lines(rows: list[dict]) -> list[str]:
    """The per-reading verdict counts (papers with alternatives) and, for every row deviating
    under the primary reading, its verdict and value under each alternative.
    """
    alt = [r for r in rows if not is_primary(r)]
    if not alt:
        return []
    with_alt = {r["paper_file"] for r in alt}
    shown = shown_verdicts(rows)
    lines = ["## Readings", "",
             "Where a paper's text supports more than one reading, each is run; the primary "
             "reading was chosen by the text before any run (`repro.engine.readings`). Verdict "
             "counts per reading:", ""]
    for paper, per in reading_counts(rows).items():
        if paper not in with_alt:
            continue
        lines += [f"### {paper_name(paper)}", "",
                  "| experiment | reading | primary | " + " | ".join(shown) + " | total |",
                  "|---|---|---|" + "---|" * (len(shown) + 1)]
        for (exp, rid, prim), c in per.items():
            lines.append(f"| {exp} | {rid} | {'yes' if prim else 'no'} | "
                         + " | ".join(str(c[v]) for v in shown) + f" | {sum(c.values())} |")
        lines.append("")
    by_id: dict[tuple, list[dict]] = defaultdict(list)
    for r in alt:
        by_id[_row_id(r)].append(r)
    dev = [r for r in rows if is_primary(r) and r["verdict"] == "deviates" and _row_id(r) in by_id]
    if dev:
        rids = sorted({r["reading"] for r in alt})
        lines += ["Rows deviating under the primary reading, under each alternative:", "",
                  "| experiment | key | metric | reported | primary | "
                  + " | ".join(rids) + " |", "|---|---|---|---|---|" + "---|" * len(rids)]
        for r in dev:
            others = {a["reading"]: a for a in by_id[_row_id(r)]}
            cells = [f"{_ours(others[i])} ({others[i]['verdict']})" if i in others else ""
                     for i in rids]
            lines.append(f"| {r['experiment']} | {r['key']} | {r['metric']} | {_theirs(r)} | "
                         f"{_ours(r)} ({r['reading']}: deviates) | " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def reading_findings(rows: list[dict]) -> dict[str, list[str]]:
    """Paper -> one sentence per table: which reading reproduces it best (most rows
    ``match``/``within_noise``), with the counts of every reading.
    """
    good = ("match", "within_noise")
    per: dict[tuple[str, str], dict[str, list[int]]] = defaultdict(dict)
    for r in rows:
        c = per[(r.get("paper_file", ""), f"{r['experiment']} {r.get('table', '')}")].setdefault(
            str(r.get("reading", "as-written")), [0, 0])
        c[0] += r["verdict"] in good
        c[1] += 1
    out: dict[str, list[str]] = defaultdict(list)
    for (paper, table), counts in sorted(per.items()):
        if len(counts) < 2:
            continue
        best = max(counts, key=lambda k: counts[k][0])
        ties = [k for k in counts if counts[k][0] == counts[best][0]]
        text = ", ".join(f"{k} {g}/{n}" for k, (g, n) in counts.items())
        verb = (f"reading {best} reproduces it best" if len(ties) == 1
                else f"readings {' and '.join(ties)} reproduce it equally")
        out[paper].append(f"{table}: {verb} (rows match or within noise: {text}).")
    return dict(out)


def _row_line(r: dict, verdict: str) -> str:
    note = "; ".join(filter(None, (r["reason"], r.get("paper_note", ""))))
    return (f"| {r['key']} | {r['metric']} | {_theirs(r)} | {_ours(r)} | {_n(r)} | {_tol(r)} | "
            f"{_band(r)} | {verdict} | {r.get('cause', '')} | {linked(note)} |")


def _deviating(rows: list[dict]) -> list[str]:
    deviating = [r for r in rows if r["verdict"] == "deviates"]
    if not deviating:
        return ["No row deviates."]
    lines = [f"{len(deviating)} rows deviate; each has a cause and the evidence for that row "
             "(another reading's or a diagnostic's value for it, made by the same code, beside "
             "the primary's; or the paper's own numbers):", "",
             "| experiment | key | metric | reported | reproduced | n ours/paper | cause | "
             "evidence |", "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['experiment']} | {r['key']} | {r['metric']} | {_theirs(r)} | {_ours(r)} | "
              f"{_n(r)} | {r.get('cause') or '**none**'} | "
              f"{linked(r.get('evidence', '')) or '**none**'} |" for r in deviating]
    return lines


def _stems(rows: list[dict]) -> dict[tuple[str, str], str]:
    from repro.engine.compare.reported import load_reported

    return {(r.paper_file, str(r.table)): r.stem for r in load_reported()}


def _markdown(rows: list[dict], before: list[dict] | None = None) -> str:
    before = before or []
    alternatives = [r for r in rows if not is_primary(r)]
    rows = [r for r in rows if is_primary(r)]
    banner = smoke_banner(rows)
    lines = ["# Reported vs reproduced", "", *([banner, ""] if banner else []), RULE, "",
             f"{len(rows)} reported numbers; verdict counts per paper under the primary "
             "readings (the headline):", "",
             *_summary_table(rows), "",
             "Per table, the verdicts and the causes of the deviating rows:", "",
             *table_counts_lines(rows), "", *_older_rule(rows), *_changes(rows, before),
             *provenance_lines(rows + alternatives),
             *_reading_lines(rows + alternatives), *fitted_lines(rows + alternatives),
             "Numbers are shown to the paper's printed precision plus one digit "
             "(`comparison.csv` keeps every digit, each row's place in the paper's text and "
             "the test of a printed std). Sections: [the deviating rows](#deviating-rows), "
             "then every table in full under its noise model.", "",
             "## Deviating rows", "", *_deviating(rows)]
    by_table: dict[tuple[str, str, str], list[dict]] = defaultdict(list)
    for r in rows + alternatives:
        reading = "" if is_primary(r) or "reading" not in r else f" (reading {r['reading']})"
        by_table[(r["experiment"], r["table"], reading)].append(r)
    stems = _stems(rows)
    for (exp, table, reading), rs in by_table.items():
        model = noise_line(stems.get((rs[0]["paper_file"], str(table)), ""))
        tested = [r for r in rs if r.get("paper_std")]
        if model and tested:
            bad = sum(str(r["paper_std"]).startswith("inconsistent") for r in tested)
            model += (f" Printed stds tested against it: {bad} of {len(tested)} cannot come "
                      "from the stated protocol (a paper inconsistency; those rows' bands use "
                      "our std on both sides).")
        lines += ["", f"## {exp} — {paper_name(rs[0]['paper_file'])}, {table}{reading}", "",
                  *([model, ""] if model and not reading else []), _HEAD, _RULE_LINE]
        lines += [_row_line(r, "[deviates](#deviating-rows)" if r["verdict"] == "deviates"
                            and is_primary(r) else r["verdict"]) for r in rs]
    lines += _needs_rerun(rows)
    lines += _changes_table(rows, before)
    return "\n".join(lines) + "\n"
