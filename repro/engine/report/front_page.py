"""``figures/REPORT.md``'s front page: each paper table and figure's verdict in words.

One row per table and figure (:func:`front_page`) with its verdict in words
(:func:`verdict_words` from its rows' verdict counts: ``reproduced`` / ``partly: k of N rows``
/ ``not reproduced`` / ``not run: why``; a figure by its claims, :func:`claim_words`), the
scale, the reading, and which code made it (:func:`made_by_words`); then one plain sentence per
paper (:func:`paper_sentence`). The rest of the page is :mod:`repro.engine.report.overview`.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict

from repro.engine.compare.rejudge import REJUDGED
from repro.engine.compare.verdict import NEEDS_RERUN, is_primary
from repro.engine.experiment import Experiment
from repro.engine.report.report import package_papers, papers_of

NOT_PAPERS = ("core",)  # the pipeline demo: listed apart, never as a paper
GOOD = ("match", "within_noise")
KEPT_PREFIX = "kept: "


def _group(name: str) -> str:
    return name.split(".", 1)[0]


def _first_clause(reason: str) -> str:
    """A reason's first sentence, without its links (``"; see docs/..."``) or the list of
    places looked in, whole (never cut mid-word).
    """
    from repro.engine.report.why import first_sentence

    text = re.split(r";\s*docs/", first_sentence(reason))[0].strip().rstrip(";.")
    return text.removeprefix("not run: ").strip() or "no records"


def verdict_words(counts: Counter, why_not_run: str = "") -> str:
    """A table's verdict in words from its rows' verdict counts (primary reading).

    ``reproduced: all N rows`` when every compared row matches or is within noise,
    ``partly: k of N rows`` when some do, ``not reproduced: 0 of N rows`` when none does,
    ``not run: why`` when no row was run; rows on substitute data (the paper's data cannot be
    obtained), rows not run and kept rows that need a rerun (``needs_rerun``: their committed
    columns cannot decide them) are not among the N compared and are named after it
    (``undecided: k rows need a rerun`` when no other row is compared).
    """
    good = sum(counts[v] for v in GOOD)
    dev, sub, nr = counts["deviates"], counts["substitute_data"], counts["not_run"]
    rerun = counts[NEEDS_RERUN]
    compared, total = good + dev, sum(counts.values())
    if total == 0:
        return "no rows to compare"
    if nr == total:
        return f"not run: {why_not_run or 'no records'}"
    if compared == 0 and rerun:
        text = f"undecided: {rerun} row{'s' if rerun > 1 else ''} need a rerun"
    elif compared == 0:
        text = f"not comparable: all {sub} rows on substitute data (the paper's is unobtainable)"
    elif dev == 0:
        text = f"reproduced: all {compared} row{'s' if compared > 1 else ''}"
    elif good == 0:
        text = f"not reproduced: 0 of {compared} rows"
    else:
        text = f"partly: {good} of {compared} rows"
    extras = ([f"{rerun} undecided: kept rows the committed columns cannot decide, need a "
               "rerun"] if rerun and compared else []) + (
        [f"{sub} more on substitute data, not compared"] if sub and (compared or rerun)
        else []) + ([f"{nr} not run"] if nr else [])
    return text + (f" ({'; '.join(extras)})" if extras else "")


def claim_words(counts: Counter, why_not_run: str = "") -> str:
    """A figure's verdict in words from its claims' verdicts (what the figure is checked by)."""
    total = sum(counts.values())
    held, judged = counts["pass"], counts["pass"] + counts["fail"]
    if total == 0:
        return "drawn; nothing to compare (the paper prints no values for it)"
    if judged == 0:
        if counts["not_run"] == total:
            return f"not run: {why_not_run or 'no records'}"
        return ("undecided: " + ", ".join(f"{counts[k]} {w}" for k, w in (
            ("inconclusive", "inconclusive"), ("not_run", "not run")) if counts[k])
            + f" (of {total} claims)")
    if counts["fail"] == 0:
        text = ("reproduced: its one claim holds" if judged == 1
                else f"reproduced: all {judged} claims hold")
    elif held == 0:
        text = f"not reproduced: 0 of {judged} claims hold"
    else:
        text = f"partly: {held} of {judged} claims hold"
    rest = total - judged
    return text + (f" ({rest} inconclusive or not run)" if rest else "")


def made_by_words(made: set[str], stale: str = "") -> str:
    """Which code made a row: ``this code`` (records of this checkout's code, with their
    commits), or the earlier run it was copied from (a partial comparison keeps rows).
    """
    kept = sorted(_commit_words(m.removeprefix(KEPT_PREFIX)) for m in made
                  if m.startswith("kept"))
    fresh = sorted(m for m in made if m and not m.startswith("kept"))
    parts = []
    if fresh:
        commits = ", ".join(fresh)
        parts.append(f"older code ({stale}), records of {commits}" if stale
                     else f"this code (records of {commits})")
    if kept:
        parts.append("an earlier run, not remade here: " + "; ".join(kept))
    return "; ".join(parts) or "—"


def _rejudged_words(rows: list[dict]) -> str:
    """How many of a table's rows were re-judged by the current rule from their committed
    columns (kept rows of an older rule: :mod:`repro.engine.compare.rejudge`), else ``""``.
    """
    n = sum(str(r.get("rule", "")) == REJUDGED for r in rows)
    return (f"; {n} row{'s' if n > 1 else ''} re-judged by the current rule from the committed "
            "columns" if n else "")


def _commit_words(text: str) -> str:
    """``a876b2c0803e`` -> ``commit a876b2c0803e``; other provenance text as written."""
    return ", ".join(f"commit {t}" if re.fullmatch(r"[0-9a-f]{7,40}(\+dirty)?", t) else t
                     for t in (x.strip() for x in text.split(",")))


_ITEM = re.compile(r"(?:(conf|journal)_)?(fig|table)(\d+)$")


def _label(exp: Experiment | None, name: str, table: str, several: bool) -> str:
    """``Table 1``, ``[C] Fig. 1``: the paper's name for the item, from the experiment title
    where it starts with it, else from the experiment's name (``fedmm.fig4`` -> ``Fig. 4``).
    """
    if several:
        return f"Table {table}" if str(table)[:1].isdigit() else str(table) or name
    head = exp.title.split(":", 1)[0].strip() if exp is not None else ""
    if re.match(r"(\[[CJ]\] )?(Fig|Table|Ablation)", head):
        return head
    m = _ITEM.search(name.split(".", 1)[-1])
    if m is None:
        return head or name
    version = {"conf": "[C] ", "journal": "[J] "}.get(m.group(1) or "", "")
    return f"{version}{'Fig.' if m.group(2) == 'fig' else 'Table'} {m.group(3)}"


def declared_cells(exp: Experiment, scale: str) -> int | None:
    """How many cells ``exp`` declares at ``scale`` (None where it cannot say)."""
    try:
        return len(exp.configs(scale))
    except Exception:  # noqa: BLE001 - an undeclared scale or a data-dependent grid
        return None


def _table_link(anchors: dict[str, str], name: str, table: str) -> str:
    """``comparison.md#<the section of this table, primary reading>`` (the page when absent)."""
    for heading, slug in anchors.items():
        if (heading.startswith(f"{name} — ") and "(reading " not in heading
                and heading.rsplit(", ", 1)[-1] == str(table)):
            return f"comparison.md#{slug}"
    return "comparison.md"


def _coverage(exp: Experiment | None, scale_recs: tuple, src: list[dict]) -> str:
    """``; from k of N cells`` where cells lack a result; a figure judged from a committed
    per-seed table (no run records here) says that instead of ``0 of N cells``.
    """
    if exp is None or not scale_recs[0]:
        return ""
    ok = sum(r.ok for r in scale_recs[1])
    n = declared_cells(exp, scale_recs[0])
    if n is None or ok >= n:
        return ""
    made = {str(r.get("made_by", "")) for r in src if r.get("verdict") != "not_run"}
    if ok == 0 and made and all(m.startswith(KEPT_PREFIX + "figures/") for m in made):
        return "; judged from the committed per-seed table (no run records here)"
    return f"; from {ok} of {n} cells"


def front_page(experiments: dict[str, Experiment], records: dict[str, tuple[str, list]],
               comparison: list[dict], claims: list[dict], out_dir=None) -> list[str]:
    """The front table (one row per paper table and figure: its answer under the primary
    reading and one sentence of why, linked to its section) and one sentence per paper.
    """
    from pathlib import Path

    from repro.engine.report.why import figure_why, heading_anchors, html_anchor, table_why

    anchors = heading_anchors(Path(out_dir) / "comparison.md") if out_dir else {}
    rows = [r for r in comparison if is_primary(r)]
    cls = [c for c in claims if is_primary(c)]
    by_table: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in rows:
        by_table[(r["experiment"], str(r.get("table", "")))].append(r)
    claims_of: dict[str, list[dict]] = defaultdict(list)
    for c in cls:
        claims_of[c["experiment"]].append(c)
    names = sorted({n for n in experiments} | {e for e, _ in by_table}
                   | set(claims_of))
    lines = ["| paper | table / figure | answer (primary reading) | why | claims that hold "
             "| scale | made by |", "|---|---|---|---|---|---|---|"]
    per_paper: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for name in names:
        g = _group(name)
        if g in NOT_PAPERS:
            continue
        exp = experiments.get(name)
        tables = sorted(t for e, t in by_table if e == name)
        cl = claims_of.get(name, [])
        ccount = Counter(c["verdict"] for c in cl)
        cwhy = next((_first_clause(c.get("measured", "") or c.get("reason", ""))
                     for c in cl if c["verdict"] == "not_run"), "")
        judged = ccount["pass"] + ccount["fail"]
        undecided = sum(ccount.values()) - judged
        claim_text = ("—" if not cl else
                      f"none decided ({undecided} inconclusive or not run)" if not judged else
                      f"{ccount['pass']} of {judged}"
                      + (f" ({undecided} more inconclusive or not run)" if undecided else ""))
        scale_recs = records.get(name, ("", []))
        stale = "; ".join(sorted({r.stale_note for r in scale_recs[1]
                                  if getattr(r, "ok", False) and getattr(r, "stale_note", "")}))
        items = [(t, by_table[(name, t)]) for t in tables] or [("", [])]
        for table, trs in items:
            if trs:
                counts = Counter(r["verdict"] for r in trs)
                why = next((_first_clause(r.get("reason", "")) for r in trs
                            if r["verdict"] == "not_run"), "")
                verdict = verdict_words(counts, why)
                because = (f"{table_why(trs, why)} "
                           f"[rows]({_table_link(anchors, name, table)})")
                per_paper[g]["rows"].update(counts)
                per_paper[g]["tables"][_kind(counts)] += 1
                src = trs
            elif (not cl and _coverage(exp, scale_recs, cl)
                  and not any(r.ok for r in scale_recs[1])):
                verdict = "not run: none of its cells has a result"  # nothing drawn
                because = "none of its cells has a record here"
                per_paper[g]["figures"]["not run"] += 1
                src = cl
            else:
                verdict = claim_words(ccount, cwhy)
                because = f"{figure_why(cl, cwhy)} [claims](#{html_anchor(name)})"
                per_paper[g]["figures"][_claim_kind(ccount)] += 1
                src = cl
            scales = sorted({str(r.get("scale", "")) for r in src if r.get("scale")})
            # records of older code stand for the cells: said even where no claim was judged
            made = {str(r.get("made_by", "")) for r in src
                    if r.get("verdict") != "not_run" or stale}
            lines.append("| " + " | ".join(_cell(x) for x in (
                _paper_short(g), _label(exp, name, table, len(items) > 1),
                verdict + _coverage(exp, scale_recs, src), because, claim_text,
                ", ".join(scales) or "—",
                made_by_words(made - {""}, stale) + _rejudged_words(src))) + " |")
        per_paper[g]["claims"].update(ccount)
    sentences = [paper_sentence(g, per_paper[g]) for g in sorted(per_paper)]
    return lines + [""] + sentences


def _kind(counts: Counter) -> str:
    return verdict_words(counts).split(":", 1)[0]


def _claim_kind(counts: Counter) -> str:
    return claim_words(counts).split(":", 1)[0].split(";", 1)[0]


def _paper_short(group: str) -> str:
    papers = papers_of(group)
    return f"{group} ({', '.join(p.file_id for p in papers)})" if papers else group


def paper_sentence(group: str, c: dict[str, Counter]) -> str:
    """One plain sentence: how many of the paper's tables and figures reproduced, and how."""
    names = package_papers(group) or group
    t, f, rows, cl = c["tables"], c["figures"], c["rows"], c["claims"]
    n_t, n_f = sum(t.values()), sum(f.values())
    good = sum(rows[v] for v in GOOD)
    compared = good + rows["deviates"]
    parts = []
    if n_t:
        parts.append(f"of its {n_t} table{'s' if n_t > 1 else ''}, "
                     + ", ".join(f"{v} {_kind_phrase(v, w)}" for w, v in _in_order(t))
                     + (f" ({good} of {compared} compared numbers match or lie within noise"
                        + (f"; {rows['substitute_data']} are on substitute data"
                           if rows["substitute_data"] else "")
                        + (f"; {rows[NEEDS_RERUN]} more are undecided until rerun"
                           if rows[NEEDS_RERUN] else "") + ")" if compared else ""))
    if n_f:
        parts.append(f"of its {n_f} figure{'s' if n_f > 1 else ''}, "
                     + ", ".join(f"{v} {_kind_phrase(v, w)}" for w, v in _in_order(f)))
    judged = cl["pass"] + cl["fail"]
    if judged:
        parts.append(f"{cl['pass']} of {judged} checked claims hold")
    return f"- **{names}**: " + ("; ".join(parts) if parts else "nothing compared yet") + "."


KIND_ORDER = ("reproduced", "partly", "not reproduced", "not comparable", "undecided",
              "not run")
READING_WORDS = {"(before readings)": "as-written (rows older than the readings)"}


def _in_order(counts: Counter) -> list[tuple[str, int]]:
    rank = {k: i for i, k in enumerate(KIND_ORDER)}
    return sorted(counts.items(), key=lambda kv: rank.get(kv[0], len(rank)))


def _kind_phrase(n: int, kind: str) -> str:
    verb = "is" if n == 1 else "are"
    return {"reproduced": f"{verb} reproduced", "partly": f"{verb} partly reproduced",
            "not reproduced": f"{verb} not reproduced", "not run": f"{verb} not run",
            "not comparable": f"{verb} on substitute data only",
            "undecided": f"{verb} undecided"}.get(kind, f"{verb} drawn with nothing to compare")


def _cell(x: object) -> str:
    return str(x).replace("|", r"\|")
