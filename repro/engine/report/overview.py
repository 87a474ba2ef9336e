"""``figures/REPORT.md``: one page per run of the whole mission.

It opens with a front page (:mod:`repro.engine.report.front_page`): one row per paper table and
figure
with its answer under the primary reading, one plain sentence of why linked to the section that
holds the evidence, the scale and which code made it; then one plain sentence per paper. The
pipeline demo (``core``) is not a paper: it gets a line of its own below. Then, per paper: the
tables and figures it produced (linked), each experiment with an anchor of its own and, for a
figure, the claims that judge it; the other readings' results, marked secondary; the
comparison verdict counts, the claims that hold, fail and are inconclusive, the theory checks
passed, failed and findings (from ``theory.json`` when ``python -m theory`` has written it) and
the compute time its records took (records made on an accelerator counted apart). A glossary of
every term the page uses closes it (:mod:`repro.engine.report.glossary`).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

from repro.engine.compare.verdict import NEEDS_RERUN, shown_verdicts
from repro.engine.experiment import Experiment
from repro.engine.records.records import RunRecord
from repro.engine.report.causes_md import cause_words, table_counts_lines
from repro.engine.report.front_page import (
    KEPT_PREFIX,
    NOT_PAPERS,
    _commit_words,
    _group,
    _rejudged_words,
    claim_words,
    declared_cells,
    front_page,
    made_by_words,
    paper_sentence,
    verdict_words,
)
from repro.engine.report.glossary import glossary_lines
from repro.engine.report.report import package_papers, smoke_banner
from repro.engine.report.why import first_sentence, html_anchor, shorten
from repro.engine.run.planning import diverged

# the front page's words, re-exported (tests and callers import them here)
__all__ = ["_rejudged_words", "claim_words", "front_page", "made_by_words", "paper_sentence",
           "verdict_words", "write_overview"]

OUTPUT_SUFFIXES = (".md", ".csv", ".tex", ".png", ".pdf")
NOT_OUTPUTS = {"comparison", "claims", "theory", "bench", "REPORT", "README"}


def _theory_by_group(out_dir: Path, groups: list[str]) -> dict[str, Counter]:
    """Theory check counts per paper; checks of shared pieces (``projections.*``) are core's."""
    path = out_dir / "theory.json"
    if not path.is_file() and out_dir.name == "partial":  # a partial comparison: the committed
        path = out_dir.parent / "theory.json"               # checks beside it
    counts: dict[str, Counter] = defaultdict(Counter)
    if not path.is_file():
        return counts
    data = json.loads(path.read_text())
    for check in data.get("checks", []):
        g = _group(check["name"])
        # a check whose theorem does not apply reports a finding: neither pass nor fail
        verdict = check.get("verdict") or ("pass" if check["passed"] else "fail")
        key = {"pass": "passed", "fail": "failed"}.get(verdict, "findings")
        counts[g if g in groups else "core"][key] += 1
    return counts


def _outputs(out_dir: Path, group: str) -> dict[str, list[str]]:
    """Output files of a group, by stem, e.g. ``constrfl_table1 -> [md, csv, tex]``."""
    stems: dict[str, list[str]] = defaultdict(list)
    for p in sorted(out_dir.glob(f"{group}_*")):
        if p.suffix in OUTPUT_SUFFIXES and p.stem not in NOT_OUTPUTS:
            stems[p.stem].append(p.suffix[1:])
    return stems


def _hms(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s"


def write_overview(experiments: dict[str, Experiment],
                   records: dict[str, tuple[str, list[RunRecord]]],
                   comparison: list[dict], claims: list[dict], out_dir: Path) -> Path:
    out_dir = Path(out_dir)
    groups = sorted({_group(n) for n in experiments} | {_group(r["experiment"])
                                                         for r in comparison})
    from repro.engine.compare.compare import is_primary, reading_findings

    front = front_page(experiments, records, comparison, claims, out_dir)
    findings = reading_findings(comparison)  # per paper: which reading fits which table best
    copied_from: dict[str, set[str]] = defaultdict(set)  # experiment -> earlier runs of its rows
    for r in comparison + claims:
        if r["experiment"] not in records and r.get("made_by"):
            copied_from[r["experiment"]].add(
                _commit_words(str(r["made_by"]).removeprefix(KEPT_PREFIX)))
    comparison = [r for r in comparison if is_primary(r)]  # the headline: primary readings
    verdicts: dict[str, Counter] = defaultdict(Counter)
    causes: dict[str, Counter] = defaultdict(Counter)
    for r in comparison:
        verdicts[_group(r["experiment"])][r["verdict"]] += 1
        if r["verdict"] == "deviates":
            causes[_group(r["experiment"])][r.get("cause") or "(none)"] += 1
    claim_counts: dict[str, Counter] = defaultdict(Counter)
    for c in (c for c in claims if is_primary(c)):
        claim_counts[_group(c["experiment"])][c["verdict"]] += 1
    theory = _theory_by_group(out_dir, groups)
    banner = smoke_banner(comparison)
    shown = shown_verdicts(comparison)
    lines = ["# fedrepro report", "", *([banner, ""] if banner else []),
             "Did each table and figure of the papers reproduce? One row each: the answer "
             "under the primary reading (the interpretation of the paper's text chosen before "
             "any run; other readings are secondary information, listed per paper below) and "
             "one plain sentence of why, linked to its evidence. A table's number is "
             "reproduced when it matches the printed one or lies within noise of it "
             "([comparison.md](comparison.md) has every number); a figure is judged by the "
             "paper's claims about it ([claims.md](claims.md)). Terms: "
             "[glossary](#glossary).", "", *front, "",
             "## Counts per paper", "",
             "Verdicts of the reported numbers ([comparison.md](comparison.md)), the paper's "
             "qualitative claims ([claims.md](claims.md)) and the theory checks "
             "([theory.md](theory.md))."
             + (" Speed of the vectorized paths against their loop oracles: "
                "[bench.md](bench.md)." if (out_dir / "bench.md").is_file() else ""), "",
             "| paper | experiments | " + " | ".join(VERDICT_WORDS[v] for v in shown)
             + " | causes of the deviating rows | claims hold / fail / inconclusive "
             "| theory checks pass / fail / finding | compute time of the records shown |",
             "|---|---|" + "---|" * len(shown) + "---|---|---|---|"]
    sections = []
    for g in groups:
        exps = [e for n, e in experiments.items() if _group(n) == g]
        recs = [r for e in exps for r in records.get(e.name, ("", []))[1]]
        time = _compute_time(exps, recs, sum(e.name not in records for e in exps))
        v, c, t = verdicts[g], claim_counts[g], theory.get(g, Counter())
        demo = g in NOT_PAPERS
        row = (f"| {g}{' (pipeline demo, not a paper)' if demo else ''} | {len(exps)} | "
               + " | ".join(str(v[k]) for k in shown)
               + f" | {cause_words(causes[g])} | {c['pass']} / {c['fail']} / {c['inconclusive']} | "
               f"{t['passed']} / {t['failed']} / {t['findings']} | {time} |")
        lines.append(row)
        sections += _section(g, exps, records, copied_from, claims, findings, out_dir)
    from repro.engine.compare.claimcheck import counts_line

    lines += ["", f"Claims ([claims.md](claims.md)): {counts_line(claims)}.", "",
              "Per table, the verdicts and the cause of every deviating row "
              "([comparison.md](comparison.md) shows each row's evidence):", "",
              *table_counts_lines(comparison)]
    path = out_dir / "REPORT.md"
    out_dir.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines + [""] + sections + glossary_lines()))
    return path


def _section(g: str, exps: list, records: dict, copied_from: dict, claims: list[dict],
             findings: dict, out_dir: Path) -> list[str]:
    """A paper's section: its experiments (anchored, a figure's claims beneath), its other
    readings (secondary) and its outputs.
    """
    papers = package_papers(g)  # by title and year
    title = f"{g}: the pipeline demo (not a paper)" if g in NOT_PAPERS else g
    sec = [f"## {title}", "", *([f"Reproduces: {papers}.", ""] if papers else [])]
    if not exps:
        sec.append("No experiment registered yet.")
    for e in exps:
        sec.append(f'<a id="{html_anchor(e.name)}"></a>')
        sec.append(_experiment_line(e, records, copied_from))
        sec += _claim_lines(e.name, claims)
    alts = sorted({f for e in exps for f in findings.get(e.paper, [])})
    if alts:
        sec += ["", "Other readings (secondary: the answers above are the primary reading's; "
                "these say how the other interpretations of the text fare):"]
        sec += [f"- {finding}" for finding in alts]
    outputs = _outputs(out_dir, g)
    if outputs:
        sec += ["", "Outputs: " + "; ".join(
            f"{stem} (" + ", ".join(f"[{ext}]({stem}.{ext})" for ext in exts) + ")"
            for stem, exts in outputs.items())]
    return sec + [""]


def _compute_time(exps: list, recs: list[RunRecord], n_copied: int) -> str:
    """The summed wall time of the records shown; records made on an accelerator apart (a
    paper whose CPU cells are all not run does not show a GPU's hours as its own), counted only
    where they hold a result or a named divergence.
    """
    if exps and n_copied == len(exps):
        return "none (not re-run: every row from an earlier run)"
    # an accelerator cell recorded not_run here ("needs an accelerator") was made nowhere
    away = [r for r in recs if str(r.config.get("device", "cpu")) != "cpu"
            and (r.ok or diverged(r))]
    here = [r for r in recs if str(r.config.get("device", "cpu")) == "cpu"]
    wall = sum(float(r.timings.get("wall_s", 0.0)) for r in here)
    text = _hms(wall) if any(r.ok for r in here) or not away else "none on the CPU"
    if here and not any(r.ok for r in here):
        text = "none on the CPU (its cells here are not run)"
    if away:
        text += (f"; {_hms(sum(float(r.timings.get('wall_s', 0.0)) for r in away))} on an "
                 f"accelerator ({len(away)} records made elsewhere)")
    if n_copied:
        text += f" (+ {n_copied} experiment{'s' if n_copied > 1 else ''} not re-run)"
    return text


def _experiment_line(e: Experiment, records: dict, copied_from: dict) -> str:
    """One experiment's line: its cells recorded, and why the others have no result."""
    if e.name not in records:  # a partial `repro compare`: this one was not recompared
        return (f"- **{e.name}**: {e.title}; not re-run by this comparison: its rows and claims "
                "are copied from an earlier run ("
                + ("; ".join(sorted(copied_from[e.name])) or "it had none") + ")")
    scale, rs = records.get(e.name, ("", []))
    ok = sum(r.ok for r in rs)
    declared = declared_cells(e, scale) if scale in e.scales else None
    total = declared if declared is not None else len(rs)
    # why, as `repro figures` says it: each reason's first sentence, whole words only
    why = sorted({shorten(first_sentence(r.reason), 160) for r in rs if not r.ok and r.reason})
    more = (f"; {len(why) - 2} more reason{'s' * (len(why) > 3)}" if len(why) > 2 else "")
    return (f"- **{e.name}** (scale: {scale}): {e.title}; {ok} of {total} cells recorded"
            + (f", {len(rs) - ok} not run" if len(rs) > ok else "")
            + (f" ({'; '.join(why[:2])}{more})" if why else "")
            + (f", {total - len(rs)} without a record" if total > len(rs) else ""))


def _claim_lines(name: str, claims: list[dict]) -> list[str]:
    """The primary reading's claims of an experiment, one sub-item each, in full."""
    from repro.engine.compare.compare import is_primary

    return [f"  - claim ({c.get('source', '')}): {c.get('claim', '')} — **{c['verdict']}**"
            + (f": {c['measured']}" if c.get("measured") else "")
            for c in claims if c["experiment"] == name and is_primary(c)]


VERDICT_WORDS = {"match": "match", "within_noise": "within noise", "deviates": "deviate",
                 "substitute_data": "on substitute data", "not_run": "not run",
                 NEEDS_RERUN: "undecided (needs a rerun)"}
