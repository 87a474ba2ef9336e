"""Reported vs reproduced, cell by cell, and the papers' qualitative claims.

Every row of every reported CSV (``repro/reported/*.csv`` and a paper package's own
``repro/<paper>/reported/*.csv``: :mod:`repro.engine.reported`) becomes one comparison row.
An experiment claims the CSVs named in its ``reported`` field and maps its records to rows
through ``reproduce``.

Verdicts
--------
``match``        |reproduced − reported| <= the paper's std (at least half a unit in the last
                 digit it printed: ``-0.23 ± 4.65e-6`` is only known to ±0.005; one unit where
                 the experiment says the paper rounded twice), or, when the paper gives no
                 std, the stated tolerance (the experiment's, else that printing precision);
                 a documented misprint is judged against its corrected value, and the row's
                 reason says so;
``within_noise`` not a match, but |difference| <= 2 × our std over seeds;
``deviates``     neither; the reason links its ``docs/deviations.md`` entry;
``substitute_data`` our number on substitute data, counted apart: the paper's data cannot be
                 obtained and the row links the ``docs/deviations.md`` entry that shows it (a
                 link to no existing entry is an error, :func:`check_substitute_link`);
``not_run``      nothing reproduced yet; the reason says why and links the entry.

One-sided rows (``Reproduced.at_most``): ``match`` when our mean is at most the bound, whatever
the printed value (an agreement measure, smaller is better), else ``deviates``.
"""

from __future__ import annotations

import csv
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from repro.engine.experiment import Experiment, RecordsMissing, Reproduced
from repro.engine.kept import made_by, provenance_lines
from repro.engine.records import RunRecord
from repro.engine.report import paper_name, smoke_banner
from repro.engine.reported import reported_files

DEVIATIONS = "docs/deviations.md"
NON_KEY = ("paper_file", "table", "metric", "value", "std")
VERDICTS = ("match", "within_noise", "deviates", "substitute_data", "not_run")
# The deviations file lives in the source tree, not in the package: an installed wheel has none,
# and then the links cannot be verified (the checkout's tests verify them).
DEVIATIONS_FILE = Path(__file__).resolve().parents[2] / DEVIATIONS
COLUMNS = ("experiment", "paper_file", "table", "key", "metric", "reported", "reported_std",
           "reproduced", "reproduced_std", "n_seeds", "tolerance", "verdict", "reason", "scale",
           "reading", "primary", "made_by")
CLAIM_COLUMNS = ("experiment", "reading", "primary", "claim", "source", "measured", "verdict",
                 "reason", "scale", "made_by")


@dataclass(frozen=True)
class ReportedRow:
    stem: str
    paper_file: str
    table: str
    key: tuple[tuple[str, str], ...]
    metric: str
    text: str
    std: float | None

    @property
    def value(self) -> float:
        try:
            return float(self.text)
        except ValueError:
            return math.nan

    @property
    def key_text(self) -> str:
        return ";".join(f"{k}={v}" for k, v in self.key if v != "")


def default_experiment_name(stem: str) -> str:
    """``constrfl_table1`` -> ``constrfl.table1``; ``fairvfl_conf_table1`` ->
    ``fairvfl.conf_table1``.
    """
    paper, _, item = stem.partition("_")
    return f"{paper}.{item}"


def load_reported(directory: Path | None = None) -> list[ReportedRow]:
    """Every row of the reported CSVs, by stem then file order: all of them
    (:func:`repro.engine.reported.reported_files`), or those of one ``directory``.
    """
    rows = []
    for path in reported_files(None if directory is None else [Path(directory)]).values():
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                std = r.get("std", "") or ""
                rows.append(ReportedRow(
                    stem=path.stem, paper_file=r["paper_file"], table=r["table"],
                    key=tuple((k, (v or "").strip()) for k, v in r.items() if k not in NON_KEY),
                    metric=r["metric"], text=r["value"].strip(),
                    std=float(std) if std.strip() else None))
    return rows


def half_last_digit(text: str) -> float:
    """Half a unit in the last printed digit: ``"0.27"`` -> 0.005, ``"455"`` -> 0.5."""
    try:
        exp = Decimal(text).as_tuple().exponent
    except InvalidOperation:
        return math.nan
    return 0.5 * 10.0 ** int(exp)


def heading_anchor(heading: str) -> str:
    """The GitHub anchor of a Markdown heading: lower case, punctuation dropped, spaces to
    hyphens.
    """
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def check_substitute_link(link: str, row_text: str,
                          deviations: Path = DEVIATIONS_FILE) -> None:
    """A ``substitute_data`` row must link an existing entry of ``docs/deviations.md``.

    Outside a source checkout (an installed wheel ships no ``docs/``) only the link's form is
    checked; the entry's existence is checked wherever the file is present (the tests).
    """
    where = f"{row_text}: substitute_data={link!r}"
    prefix = f"{DEVIATIONS}#"
    if not link.startswith(prefix):
        raise ValueError(f"{where} must be '{prefix}<anchor>' (the entry showing the paper's "
                         f"data cannot be obtained); give the experiment's reproduce() that link")
    if not deviations.is_file():
        return
    text = deviations.read_text()
    anchors = {heading_anchor(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}
    if link[len(prefix):] not in anchors:
        raise ValueError(f"{where} links no entry of {deviations}: add the entry (a heading "
                         f"whose anchor is {link[len(prefix):]!r}) saying why the paper's data "
                         f"cannot be obtained, or judge the row as a normal comparison")


def _one_sided_or_substitute(row: ReportedRow, rep: Reproduced, out: dict) -> dict | None:
    """The verdicts that do not compare with the printed value (module docstring)."""
    if rep.substitute_data and rep.at_most is not None:
        raise ValueError(f"{row.stem} {row.key_text} {row.metric}: a row is either one-sided "
                         f"(at_most) or on substitute data, not both")
    mean = rep.mean
    if rep.substitute_data:
        check_substitute_link(rep.substitute_data, f"{row.stem} {row.key_text} {row.metric}")
        out.update(tolerance="", verdict="substitute_data",
                   reason=f"our {mean:.4g} is on substitute data (the paper's cannot be "
                          f"obtained): {rep.substitute_data}"
                          + (f"; {rep.note}" if rep.note else ""))
        return out
    if rep.at_most is not None:
        ok = not math.isnan(mean) and mean <= rep.at_most
        rule = f"one-sided: match when <= {rep.at_most:g}, whatever the printed value"
        out.update(tolerance=rep.at_most, verdict="match" if ok else "deviates",
                   reason=f"{rule}; {rep.note}" if rep.note else rule)
        return out
    return None


def verdict_for(row: ReportedRow, rep: Reproduced | None, why_missing: str) -> dict:
    """One comparison row (a dict over :data:`COLUMNS`, minus experiment and scale)."""
    out = {"paper_file": row.paper_file, "table": row.table, "key": row.key_text,
           "metric": row.metric, "reported": row.text,
           "reported_std": "" if row.std is None else row.std,
           "reproduced": "", "reproduced_std": "", "n_seeds": 0, "tolerance": ""}
    if rep is None or not rep.values:
        out.update(verdict="not_run", reason=why_missing)
        return out
    mean, std, n = rep.mean, rep.std, len(rep.values)
    text = row.text if rep.corrected is None else rep.corrected
    # A printed mean is only known to half a unit of its last digit, however small its std.
    printed = 2.0 * rep.printed_units * half_last_digit(text)
    if row.std:
        tol = max(row.std, printed)
    elif rep.tolerance is not None:
        tol = rep.tolerance
    elif rep.rel_tolerance is not None:
        tol = rep.rel_tolerance * abs(row.value if rep.corrected is None else float(rep.corrected))
    else:
        tol = printed
    out.update(reproduced=mean, reproduced_std="" if math.isnan(std) else std, n_seeds=n,
               tolerance=tol)
    special = _one_sided_or_substitute(row, rep, out)
    if special is not None:
        return special
    value = row.value if rep.corrected is None else float(rep.corrected)
    if math.isnan(value) or math.isnan(mean):
        both_nan = math.isnan(value) and math.isnan(mean)
        out.update(verdict="match" if both_nan else "deviates",
                   reason="" if both_nan else rep.note or f"{DEVIATIONS}#{row.stem}")
        return out
    diff = abs(mean - value)
    fixed = ("" if rep.corrected is None else f"judged against the corrected value "
             f"{rep.corrected} (printed {row.text} is a misprint): {rep.note}")
    if diff <= tol:
        out.update(verdict="match", reason=fixed)
    elif n > 1 and not math.isnan(std) and diff <= 2 * std:
        out.update(verdict="within_noise", reason=fixed)
    else:
        out.update(verdict="deviates",
                   reason=fixed or rep.note or f"see {DEVIATIONS}#{row.stem}")
    return out


def compare(experiments: dict[str, Experiment],
            records: dict[str, tuple[str, list[RunRecord]]],
            reported: list[ReportedRow] | None = None) -> list[dict]:
    """Comparison rows for every reported row.

    ``records`` maps experiment name to ``(scale, records)`` for the experiments that were
    collected.
    """
    reported = load_reported() if reported is None else reported
    owner: dict[str, str] = {}
    for exp in experiments.values():
        for stem in exp.reported:
            owner[stem] = exp.name
    produced: dict[str, dict[tuple, Reproduced]] = {}
    for name, (_, recs) in records.items():
        exp = experiments[name]
        ok = [r for r in recs if r.ok]
        if exp.reproduce is None or not ok:
            continue
        produced[name] = {(p.table, tuple(sorted(p.key.items())), p.metric): p
                          for p in exp.reproduce(ok)}
    # records made by other code (shown because no current one exists) are never silent
    stale = {name: "; ".join(sorted({r.stale_note for r in recs if r.ok and r.stale_note}))
             for name, (_, recs) in records.items()}
    rows = []
    for row in reported:
        name = owner.get(row.stem, default_experiment_name(row.stem))
        scale = records.get(name, ("", []))[0]
        key = (row.stem, tuple(sorted((k, v) for k, v in row.key)), row.metric)
        rep = produced.get(name, {}).get(key)
        out = verdict_for(row, rep, _why_missing(name, experiments, records))
        if stale.get(name) and rep is not None:
            out["reason"] = "; ".join(filter(None, (stale[name], out["reason"])))
        made = made_by([r for r in records.get(name, ("", []))[1] if r.ok]) if rep else ""
        rows.append({"experiment": name, **out, "scale": scale, "made_by": made})
    return rows


def compare_readings(experiments: dict[str, Experiment],
                     records: dict[str, tuple[str, list[RunRecord]]],
                     alternatives: dict[str, dict[str, tuple[str, list[RunRecord]]]] | None = None,
                     reported: list[ReportedRow] | None = None) -> list[dict]:
    """Comparison rows under every reading run (issue #15 item 2).

    ``records``: the primary reading's records per experiment (as for :func:`compare`);
    ``alternatives``: experiment -> reading id -> ``(scale, records)`` of its other readings.
    Every reported row gets one row under its experiment's primary reading (``primary`` True)
    and one per alternative reading that has records (``primary`` False).
    """
    reported = load_reported() if reported is None else reported
    rows = compare(experiments, records, reported)
    for r in rows:
        exp = experiments.get(r["experiment"])
        r.update(reading=exp.primary_reading.id if exp else "as-written", primary=True)
    for name, per in (alternatives or {}).items():
        stems = set(experiments[name].reported)
        mine = [row for row in reported if row.stem in stems]
        for rid, (scale, recs) in per.items():
            if not mine or not any(r.ok for r in recs):
                continue
            for r in compare(experiments, {name: (scale, recs)}, mine):
                rows.append({**r, "reading": rid, "primary": False})
    return _cite_fitting_readings(rows)


def _cite_fitting_readings(rows: list[dict]) -> list[dict]:
    """A deviating row of the primary reading names the alternative readings under which the
    same reported row is reproduced (match or within noise), with their values: the evidence
    of those readings' runs, in the row's reason.
    """
    good = {}
    for r in rows:
        if not is_primary(r) and r["verdict"] in ("match", "within_noise"):
            good.setdefault((r["experiment"], r["table"], r["key"], r["metric"]), []).append(
                f"{r['reading']} {_fmt(r['reproduced'])}")
    for r in rows:
        fits = good.get((r["experiment"], r["table"], r["key"], r["metric"]))
        if is_primary(r) and r["verdict"] == "deviates" and fits:
            r["reason"] = (f"reproduced under reading{'s' if len(fits) > 1 else ''} "
                           f"{', '.join(fits)}; under the primary reading: " + r["reason"])
    return rows


def is_primary(row: dict) -> bool:
    """A row of the primary reading (rows made without readings count as primary)."""
    return row.get("primary", True) in (True, "True", "true", 1, "1")


def _why_missing(name: str, experiments: dict[str, Experiment],
                 records: dict[str, tuple[str, list[RunRecord]]]) -> str:
    if name not in experiments:
        return (f"experiment {name} is not implemented yet; "
                f"see {DEVIATIONS}#not-yet-implemented")
    scale, recs = records.get(name, ("", []))
    # a reason's first line (a data error's full text, in the record, spans several)
    reasons = sorted({r.reason.splitlines()[0] for r in recs if not r.ok and r.reason})
    failed = [r for r in reasons if r.startswith("failed")]
    if failed:
        return f"{failed[0]}; see {DEVIATIONS}#failed-cells"
    if reasons:
        return f"not run: {reasons[0]}; see {DEVIATIONS}#data-unavailable"
    if not recs:
        return (f"no records at scale {scale or '?'}: run `repro run {name}`; "
                f"see {DEVIATIONS}#not-yet-implemented")
    return (f"{name} does not produce this row (yet); see {DEVIATIONS}#not-yet-implemented "
            f"and the paper's own section there")


def write_comparison(rows: list[dict], out_dir: Path) -> list[Path]:
    """``comparison.csv`` (one row per reported row) and ``comparison.md`` (summary first)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path = out_dir / "comparison.csv"
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    md_path = out_dir / "comparison.md"
    md_path.write_text(_markdown(rows))
    return [md_path, csv_path]


def summary(rows: list[dict]) -> dict[str, Counter]:
    """Verdict counts per paper under the primary readings (the headline)."""
    per_paper: dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        if not is_primary(r):
            continue
        per_paper[r["paper_file"]][r["verdict"]] += 1
    return dict(sorted(per_paper.items()))


def _fmt(x: object) -> str:
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)


_DEVIATION_LINK = re.compile(r"(?<![\[(/])docs/deviations\.md(#[\w-]+)?")


def linked(reason: str) -> str:
    """A reason for a Markdown table in ``figures/``: its ``docs/deviations.md#anchor``
    references become links (relative to ``figures/``), pipes are escaped.
    """
    text = reason.replace("|", "\\|")
    return _DEVIATION_LINK.sub(lambda m: f"[{m.group(0)}](../{m.group(0)})", text)


def deviation_causes(rows: list[dict]) -> Counter:
    """Deviating rows per cause: the ``docs/deviations.md`` anchor their reason links (the
    whole reason where it links none).
    """
    causes: Counter = Counter()
    for r in rows:
        if r["verdict"] == "deviates" and is_primary(r):
            m = _DEVIATION_LINK.search(r["reason"])
            causes[m.group(0) if m else (r["reason"] or "(no reason given)")] += 1
    return causes


def _summary_table(rows: list[dict]) -> list[str]:
    lines = ["| paper | " + " | ".join(VERDICTS) + " | total |",
             "|---|" + "---|" * (len(VERDICTS) + 1)]
    total: Counter = Counter()
    for paper, c in summary(rows).items():
        total.update(c)
        lines.append(f"| {paper_name(paper)} | " + " | ".join(str(c[v]) for v in VERDICTS)
                     + f" | {sum(c.values())} |")
    lines.append("| **all** | " + " | ".join(str(total[v]) for v in VERDICTS)
                 + f" | {sum(total.values())} |")
    return lines


def _ours(r: dict) -> str:
    if r["reproduced"] == "":
        return ""
    return _fmt(r["reproduced"]) + (f" ± {_fmt(r['reproduced_std'])}"
                                    if r["reproduced_std"] != "" else "")


def _theirs(r: dict) -> str:
    return r["reported"] + (f" ± {_fmt(r['reported_std'])}" if r["reported_std"] != "" else "")


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
    lines = ["## Readings", "",
             "Where a paper's text supports more than one reading, each is run; the primary "
             "reading was chosen by the text before any run (`repro.engine.readings`). Verdict "
             "counts per reading:", ""]
    for paper, per in reading_counts(rows).items():
        if paper not in with_alt:
            continue
        lines += [f"### {paper_name(paper)}", "",
                  "| experiment | reading | primary | " + " | ".join(VERDICTS) + " | total |",
                  "|---|---|---|" + "---|" * (len(VERDICTS) + 1)]
        for (exp, rid, prim), c in per.items():
            lines.append(f"| {exp} | {rid} | {'yes' if prim else 'no'} | "
                         + " | ".join(str(c[v]) for v in VERDICTS) + f" | {sum(c.values())} |")
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


def _markdown(rows: list[dict]) -> str:
    alternatives = [r for r in rows if not is_primary(r)]
    rows = [r for r in rows if is_primary(r)]
    deviating = [r for r in rows if r["verdict"] == "deviates"]
    banner = smoke_banner(rows)
    lines = ["# Reported vs reproduced", "", *([banner, ""] if banner else []),
             f"{len(rows)} reported numbers; verdict counts per paper under the primary "
             "readings (the headline):", "",
             *_summary_table(rows), "", *provenance_lines(rows + alternatives),
             *_reading_lines(rows + alternatives),
             "Verdicts: `match` (within the paper's std or the stated tolerance; one-sided "
             "rows: at most their bound), `within_noise` (within 2 of our std over seeds), "
             "`deviates`, `substitute_data` (our number on substitute data, counted apart), "
             "`not_run`. Every "
             f"`deviates` and `not_run` row links its entry in `{DEVIATIONS}`. Sections: "
             "[the deviating rows](#deviating-rows), then every table in full.", "",
             "## Deviating rows", ""]
    if deviating:
        lines += [f"{len(deviating)} rows deviate. By cause:", "",
                  "| cause | rows |", "|---|---|"]
        lines += [f"| {linked(cause)} | {n} |"
                  for cause, n in deviation_causes(rows).most_common()]
        lines += ["", "| experiment | key | metric | reported | reproduced | n | tol | reason |",
                  "|---|---|---|---|---|---|---|---|"]
        lines += [f"| {r['experiment']} | {r['key']} | {r['metric']} | {_theirs(r)} | "
                  f"{_ours(r)} | {r['n_seeds']} | {_fmt(r['tolerance'])} | "
                  f"{linked(r['reason'])} |" for r in deviating]
    else:
        lines.append("No row deviates.")
    by_table: dict[tuple[str, str, str], list[dict]] = defaultdict(list)
    for r in rows + alternatives:
        reading = "" if is_primary(r) or "reading" not in r else f" (reading {r['reading']})"
        by_table[(r["experiment"], r["table"], reading)].append(r)
    for (exp, table, reading), rs in by_table.items():
        lines += ["", f"## {exp} — {paper_name(rs[0]['paper_file'])}, {table}{reading}", "",
                  "| key | metric | reported | reproduced | n | tol | verdict | reason |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in rs:
            lines.append(f"| {r['key']} | {r['metric']} | {_theirs(r)} | {_ours(r)} | "
                         f"{r['n_seeds']} | {_fmt(r['tolerance'])} | {r['verdict']} | "
                         f"{linked(r['reason'])} |")
    return "\n".join(lines) + "\n"


CLAIM_VERDICTS = ("pass", "fail", "inconclusive", "not_run")


def paper_section_anchor(experiment: str, deviations: Path = DEVIATIONS_FILE) -> str:
    """The anchor of the ``## <package>: ...`` section of ``docs/deviations.md`` (``""`` when
    there is none).
    """
    text = deviations.read_text() if deviations.is_file() else ""
    group = experiment.split(".")[0]
    for h in re.findall(r"^## (.+)$", text, flags=re.M):
        if h.split(":")[0].strip().lower() == group:
            return heading_anchor(h)
    return ""


def section_link(experiment: str) -> str:
    """``see docs/deviations.md#<the experiment's paper section>``: a claim's default reason."""
    return f"see {DEVIATIONS}#{paper_section_anchor(experiment)}"


def check_claims(experiments: dict[str, Experiment],
                 records: dict[str, tuple[str, list[RunRecord]]],
                 alternatives: dict[str, dict[str, tuple[str, list[RunRecord]]]] | None = None,
                 figures_dir: Path | None = None) -> list[dict]:
    """Every claim under the primary reading and under each alternative reading with records;
    a failing or inconclusive claim's ``reason`` links its ``docs/deviations.md`` entry (the
    claim's own, else its paper's section). With ``figures_dir``, an experiment without records
    that registered a committed output (:mod:`repro.engine.from_outputs`) has its primary
    claims judged on that output, said in ``measured`` and ``made_by``.
    """
    from repro.engine.from_outputs import output_records

    rows = []
    for name, exp in experiments.items():
        runs = [(exp.primary_reading.id, True, records.get(name, ("", [])))]
        runs += [(rid, False, sr) for rid, sr in (alternatives or {}).get(name, {}).items()
                 if any(r.ok for r in sr[1])]
        for reading, primary, (scale, recs) in runs:
            ok = [r for r in recs if r.ok]
            source = ""
            if not ok and primary and figures_dir is not None:
                got = output_records(name, figures_dir)
                if got is not None:
                    ok, source = got
                    # the budget the committed output was made at, where it says so
                    said = {r.config.get("scale") for r in ok}
                    if len(said) == 1 and None not in said:
                        scale = said.pop()
            made = (f"{source} (committed output, no run records here)" if source
                    else made_by(ok) if ok else "")
            for claim in exp.claims:
                if not ok:
                    passed, measured, verdict = None, "no records", "not_run"
                else:
                    try:
                        passed, measured = claim.check(ok)
                    except RecordsMissing as exc:  # the records it needs are not there yet
                        passed, measured, verdict = None, f"records missing: {exc}", "not_run"
                    else:
                        # None: the margin lies within the claim's seed noise (Claim.check)
                        verdict = ("inconclusive" if passed is None else
                                   "pass" if passed else "fail")
                    if source:
                        measured = f"from {source} (no run records here): {measured}"
                reason = ""
                if verdict in ("fail", "inconclusive"):
                    anchor = claim.deviation or f"{DEVIATIONS}#{paper_section_anchor(name)}"
                    reason = f"see {anchor}"
                rows.append({"experiment": name, "claim": claim.text, "source": claim.source,
                             "measured": measured, "verdict": verdict, "scale": scale,
                             "reading": reading, "primary": primary, "reason": reason,
                             "made_by": made})
    return rows


def write_claims(rows: list[dict], out_dir: Path) -> Path:
    """``claims.md`` (counts, then one table row per claim and reading) and ``claims.csv`` (the
    same rows, read back by a partial ``repro compare``: :mod:`repro.engine.kept`).
    """
    path = Path(out_dir) / "claims.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=CLAIM_COLUMNS, lineterminator="\n",
                           extrasaction="ignore")
        w.writeheader()
        w.writerows({k: r.get(k, "") for k in CLAIM_COLUMNS} for r in rows)
    primary = [r for r in rows if is_primary(r)]
    counts = Counter(r["verdict"] for r in primary)
    lines = ["# Qualitative claims", "",
             "Under the primary readings: " + ", ".join(f"{counts[v]} {v}"
                                                        for v in CLAIM_VERDICTS)
             + " (`inconclusive`: the margin does not exceed twice the seed std of the paired "
               "difference; counted apart). Every failing or inconclusive claim links its "
               "reason.", "",
             "| experiment | reading | claim | source | measured | verdict | reason | scale | "
             "made by |", "|---|---|---|---|---|---|---|---|---|"]

    def cell(x: object) -> str:  # a '|' inside a measured text would split the row
        return str(x).replace("|", "\\|").replace("\n", " ")

    for r in rows:
        reading = r.get("reading", "as-written") + ("" if is_primary(r) else " (alt.)")
        lines.append("| " + " | ".join([cell(r["experiment"]), cell(reading)] + [
            cell(r[k]) for k in ("claim", "source", "measured", "verdict")]
            + [linked(cell(r.get("reason", ""))), cell(r["scale"]), cell(r.get("made_by", ""))])
            + " |")
    path.write_text("\n".join(lines) + "\n")
    return path
