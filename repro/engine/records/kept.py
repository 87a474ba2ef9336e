"""A partial comparison: recompare some experiments, keep the other experiments' rows as written.

``repro compare NAME ...`` recomputes the comparison rows and claims of the named experiments from
their records and keeps every other experiment's rows and claims exactly as the previous
``comparison.csv`` and ``claims.csv`` (or, written before that file existed, ``claims.md``) in the
output folder hold them. A whole run (``make paper-figures``, ``repro compare`` without names)
recompares everything and keeps nothing.

Kept rows are never shown as current: each row of either file carries ``made_by``, the commits of
the records it was computed from, and a kept row's ``made_by`` says ``kept: ...`` with the commit
that last wrote the file it came from. ``comparison.md`` lists, per experiment, where its rows come
from (:func:`provenance_lines`).

Kept rows are judged by the current rule: a kept row judged by an older one (its ``rule`` is not
:data:`repro.engine.compare.verdict.RULE_ID`) is re-judged from its committed columns
(:func:`repro.engine.compare.rejudge.rejudge_row`); its ``made_by`` still names the commit its
numbers
come from, its ``rule`` says it was re-judged, and a row those columns cannot decide is
``needs_rerun``, counted apart.
"""

from __future__ import annotations

import csv
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

from repro.engine.compare.rejudge import rejudge_row

KEPT = "kept"
_ROW_ID = ("experiment", "paper_file", "table", "key", "metric")


def made_by(records) -> str:
    """The commits (12 hex digits, ``+dirty`` kept) of the records a row was computed from."""
    commits = sorted({(r.commit[:12] + ("+dirty" if r.commit.endswith("+dirty") else ""))
                      for r in records if getattr(r, "commit", "")})
    return ", ".join(commits) if commits else "no commit recorded"


def file_commit(path: Path) -> str:
    """The commit that last changed ``path`` in its git checkout, else ``""``."""
    try:
        out = subprocess.run(["git", "-C", str(path.parent), "log", "-1", "--format=%h",
                              "--", path.name], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def _origin(path: Path, row_made_by: str, commit: str) -> str:
    if row_made_by.startswith(KEPT):
        return row_made_by
    src = row_made_by or (f"{path.name} at {commit}" if commit else f"an earlier {path.name}")
    return f"{KEPT}: {src}"


def previous_comparison(out_dir: Path) -> list[dict]:
    """The rows of ``out_dir/comparison.csv`` (empty when there is none), each marked kept and
    judged by the current rule (re-judged from its committed columns where an older rule
    judged it: :func:`repro.engine.compare.rejudge.rejudge_row`).

    A file written before readings existed has no ``reading``/``primary`` columns: its rows are
    the one reading that code ran, recorded as reading ``"(before readings)"``, primary.
    """
    path = Path(out_dir) / "comparison.csv"
    if not path.is_file():
        return []
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    commit = file_commit(path)
    for r in rows:
        r.setdefault("reading", "(before readings)")
        r.setdefault("primary", "True")
        r["made_by"] = _origin(path, r.get("made_by", ""), commit)
    return [rejudge_row(r) for r in rows]


def _markdown_table(text: str) -> list[dict]:
    lines = [ln for ln in text.splitlines() if ln.startswith("|")]
    if len(lines) < 2:
        return []
    split = re.compile(r"(?<!\\)\|")

    def cells(line: str) -> list[str]:
        return [c.strip().replace("\\|", "|") for c in split.split(line.strip())[1:-1]]

    header = cells(lines[0])
    return [dict(zip(header, cells(ln), strict=False)) for ln in lines[2:]]


def previous_claims(out_dir: Path, link: Callable[[str], str] = lambda experiment: ""
                    ) -> list[dict]:
    """The claims of ``out_dir/claims.csv``, else of the table in ``claims.md``, marked kept.
    A failing or inconclusive claim written without a reason gets ``link(experiment)``.
    """
    csv_path, md_path = Path(out_dir) / "claims.csv", Path(out_dir) / "claims.md"
    if csv_path.is_file():
        with open(csv_path, newline="") as fh:
            rows, path = list(csv.DictReader(fh)), csv_path
    elif md_path.is_file():
        rows, path = _markdown_table(md_path.read_text()), md_path
    else:
        return []
    out, commit = [], file_commit(path)
    for r in rows:
        reason = _strip_link(r.get("reason", ""))
        if r.get("verdict") in ("fail", "inconclusive") and not reason:  # written before links
            reason = link(r.get("experiment", ""))
        reading = r.get("reading", "(before readings)")
        primary = r.get("primary", "False" if reading.endswith("(alt.)") else "True")
        out.append({"experiment": r.get("experiment", ""), "claim": r.get("claim", ""),
                    "source": r.get("source", ""), "measured": r.get("measured", ""),
                    "verdict": r.get("verdict", ""), "scale": r.get("scale", ""),
                    "reading": reading.removesuffix(" (alt.)"), "primary": primary,
                    "reason": reason,
                    "made_by": _origin(path, r.get("made_by", ""), commit)})
    return out


def _strip_link(text: str) -> str:
    """``[x](../x)`` (how claims.md links a reason) back to ``x``."""
    return re.sub(r"\[([^\]]+)\]\(\.\./[^)]+\)", r"\1", text)


def _row_id(r: dict) -> tuple:
    """A comparison row is one reported number; a claim is one claim text (under the primary
    reading or not: reading ids of a file written before readings are unknown).
    """
    primary = str(r.get("primary", True)) in ("True", "true", "1")
    if "metric" in r:
        return ("row", r["paper_file"], r["table"], r["key"], r["metric"], primary)
    return ("claim", r["experiment"], r["claim"], primary)


def merge(new: list[dict], old: list[dict], recompared: set[str]) -> list[dict]:
    """``new``'s rows of the recompared experiments, ``old``'s rows of every other experiment,
    in ``new``'s order of experiments. A row ``old`` lacks keeps ``new``'s version (then
    ``not_run`` with its reason), unless ``old`` holds the same reported number under another
    experiment name (an experiment renamed or split since): it is never counted twice.
    """
    kept = [r for r in old if r["experiment"] not in recompared]
    kept_exps = {r["experiment"] for r in kept}
    kept_ids = {_row_id(r) for r in kept}
    fresh = [r for r in new if r["experiment"] in recompared
             or (r["experiment"] not in kept_exps and _row_id(r) not in kept_ids)]
    order: dict[str, int] = {}
    for r in new + old:
        order.setdefault(r["experiment"], len(order))
    return sorted(fresh + kept, key=lambda r: order[r["experiment"]])  # stable per experiment


def provenance_lines(rows: list[dict]) -> list[str]:
    """Per experiment: its rows and where they come from (this comparison or kept)."""
    by: dict[str, dict[str, int]] = {}
    for r in rows:
        m = r.get("made_by") or "recompared: no result"
        by.setdefault(r["experiment"], {}).setdefault(m, 0)
        by[r["experiment"]][m] += 1
    if not any(m.startswith(KEPT) for per in by.values() for m in per):
        return []
    lines = ["Where the rows come from (`kept`: not recompared by this run of `repro compare`, "
             "copied from the previous comparison, its numbers as they were written):", "",
             "| experiment | rows | made by |", "|---|---|---|"]
    for exp, per in by.items():
        for m, n in per.items():
            lines.append(f"| {exp} | {n} | {m} |")
    return lines + [""]


__all__ = ["KEPT", "file_commit", "made_by", "merge", "previous_claims", "previous_comparison",
           "provenance_lines"]
