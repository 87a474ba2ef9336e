"""``figures/REPORT.md``: one page per run of the whole mission.

Per paper: the tables and figures it produced (linked), the comparison verdict counts, the
claims passed, failed and inconclusive, the theory checks passed, failed and findings (from
``theory.json`` when ``python -m theory`` has written it) and the compute time its records took.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

from repro.engine.compare import VERDICTS
from repro.engine.experiment import Experiment
from repro.engine.records import RunRecord
from repro.engine.report import package_papers, smoke_banner

OUTPUT_SUFFIXES = (".md", ".csv", ".tex", ".png", ".pdf")
NOT_OUTPUTS = {"comparison", "claims", "theory", "bench", "REPORT", "README"}


def _group(name: str) -> str:
    return name.split(".", 1)[0]


def _theory_by_group(out_dir: Path, groups: list[str]) -> dict[str, Counter]:
    """Theory check counts per paper; checks of shared pieces (``projections.*``) are core's."""
    path = out_dir / "theory.json"
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
    from repro.engine.compare import is_primary, reading_findings

    findings = reading_findings(comparison)  # per paper: which reading fits which table best
    kept_by: dict[str, set[str]] = defaultdict(set)  # experiment -> where its kept rows are from
    for r in comparison + claims:
        if r["experiment"] not in records and r.get("made_by"):
            kept_by[r["experiment"]].add(r["made_by"])
    comparison = [r for r in comparison if is_primary(r)]  # the headline: primary readings
    verdicts: dict[str, Counter] = defaultdict(Counter)
    for r in comparison:
        verdicts[_group(r["experiment"])][r["verdict"]] += 1
    claim_counts: dict[str, Counter] = defaultdict(Counter)
    for c in (c for c in claims if is_primary(c)):
        claim_counts[_group(c["experiment"])][c["verdict"]] += 1
    theory = _theory_by_group(out_dir, groups)
    banner = smoke_banner(comparison)
    lines = ["# fedrepro report", "", *([banner, ""] if banner else []),
             "Every paper's outputs, its reported-vs-reproduced verdicts "
             "([comparison.md](comparison.md)), its qualitative claims ([claims.md](claims.md)) "
             "and its theory checks ([theory.md](theory.md))."
             + (" Speed of the vectorized paths against their loop oracles: "
                "[bench.md](bench.md)." if (out_dir / "bench.md").is_file() else ""), "",
             "| paper | experiments | " + " | ".join(VERDICTS) + " | claims pass/fail/inconclusive "
             "| theory pass/fail/finding | compute time |", "|---|---|" + "---|" * len(VERDICTS)
             + "---|---|---|"]
    sections = []
    for g in groups:
        exps = [e for n, e in experiments.items() if _group(n) == g]
        recs = [r for e in exps for r in records.get(e.name, ("", []))[1]]
        wall = sum(float(r.timings.get("wall_s", 0.0)) for r in recs)
        n_kept = sum(e.name not in records for e in exps)
        time = ("kept" if exps and n_kept == len(exps) else
                _hms(wall) + (f" (+ {n_kept} kept)" if n_kept else ""))
        v, c, t = verdicts[g], claim_counts[g], theory.get(g, Counter())
        lines.append(f"| {g} | {len(exps)} | " + " | ".join(str(v[k]) for k in VERDICTS)
                     + f" | {c['pass']}/{c['fail']}/{c['inconclusive']} | "
                     f"{t['passed']}/{t['failed']}/{t['findings']} | "
                     f"{time} |")
        papers = package_papers(g)  # by title and year (#14 item 6)
        sec = [f"## {g}", "", *([f"Reproduces: {papers}.", ""] if papers else [])]
        if not exps:
            sec.append("No experiment registered yet.")
        for e in exps:
            if e.name not in records:  # a partial `repro compare`: this one was not recompared
                sec.append(f"- **{e.name}**: {e.title}; not recompared, its rows and claims "
                           f"kept ({'; '.join(sorted(kept_by[e.name])) or 'none'})")
                continue
            scale, rs = records.get(e.name, ("", []))
            ok = sum(r.ok for r in rs)
            sec.append(f"- **{e.name}** ({scale}): {e.title}; {ok} cells recorded"
                       + (f", {len(rs) - ok} not run" if len(rs) > ok else ""))
        for finding in sorted({f for e in exps for f in findings.get(e.paper, [])}):
            sec.append(f"- Readings: {finding}")
        outputs = _outputs(out_dir, g)
        if outputs:
            sec += ["", "Outputs: " + "; ".join(
                f"{stem} (" + ", ".join(f"[{ext}]({stem}.{ext})" for ext in exts) + ")"
                for stem, exts in outputs.items())]
        sections += sec + [""]
    from repro.engine.claimcheck import counts_line

    lines += ["", f"Claims ([claims.md](claims.md)): {counts_line(claims)}."]
    path = out_dir / "REPORT.md"
    out_dir.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines + [""] + sections))
    return path
