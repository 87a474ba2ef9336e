"""The front page's "why": one plain sentence per table or figure, and where its evidence is.

:func:`table_why` says why a table got its answer from its rows (primary reading): every
compared number agrees, or how many deviate with the first one's numbers, or why none ran;
:func:`figure_why` does the same from a figure's claims. :func:`shorten` keeps a text whole or
cuts it at a word boundary with an ellipsis, never mid-word. :func:`anchor` is the anchor a
Markdown heading gets on GitHub and in most renderers, and :func:`heading_anchors` those of a
written page, so a row links to the exact section of ``comparison.md`` it summarises.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["anchor", "figure_why", "heading_anchors", "html_anchor", "plain_numbers", "shorten",
           "table_why"]

LIMIT = 220  # characters of a why sentence before it is shortened at a word


def shorten(text: str, limit: int = LIMIT) -> str:
    """``text`` on one line, whole when it fits, else cut after the last whole word that fits
    and ended with an ellipsis (never in the middle of a word or a link).
    """
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0].rstrip(" ,;:(")
    return cut + " …"


_LONG_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+\.\d{6,}(?:[eE][-+]?\d+)?(?![\w.])")


def plain_numbers(text: str) -> str:
    """Floats printed with more than 6 decimals (a raw ``repr``) shown to 4 significant
    digits: ``9.347403948608557e+16`` -> ``9.347e+16``; integers and short numbers as written.
    """
    return _LONG_NUMBER.sub(lambda m: f"{float(m.group()):.4g}", str(text))


def first_sentence(text: str) -> str:
    """A reason's first sentence, without its "see docs/..." tail or "Looked in:" list."""
    line = str(text or "").strip().splitlines()[0] if str(text or "").strip() else ""
    line = re.split(r"\.\s+(?=[A-Z])|;\s*see |\s+see docs/|\s*Looked in:", line)[0]
    return plain_numbers(line.strip().rstrip(" .;:,"))


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def heading_anchors(path: Path) -> dict[str, str]:
    """Heading text -> its anchor on the written page ``path`` (repeats numbered ``-1``, ...)."""
    if not Path(path).is_file():
        return {}
    seen: dict[str, int] = {}
    out: dict[str, str] = {}
    for line in Path(path).read_text().splitlines():
        m = re.match(r"#{1,6}\s+(.*)", line)
        if not m:
            continue
        base = anchor(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.setdefault(m.group(1).strip(), base if n == 0 else f"{base}-{n}")
    return out


def html_anchor(name: str) -> str:
    """A stable anchor id for an experiment's entry on the report (``constrfl.fig1`` ->
    ``constrfl-fig1``).
    """
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _key_words(key: str) -> str:
    parts = [p for p in str(key).split(";") if p and not p.startswith("statistic=")]
    return ", ".join(parts)


def _num(x: object) -> str:
    try:
        return f"{float(x):.4g}"
    except (TypeError, ValueError):
        return str(x)


def table_why(rows: list[dict], why_not_run: str = "") -> str:
    """One plain sentence: why this table got its answer (its primary-reading rows)."""
    judged = [r for r in rows if r["verdict"] in ("match", "within_noise", "deviates")]
    dev = [r for r in judged if r["verdict"] == "deviates"]
    sub = sum(r["verdict"] == "substitute_data" for r in rows)
    if not judged:
        if sub:
            return ("The paper's data cannot be obtained here, so ours runs on substitute data "
                    "and is not compared.")
        if rows and all(r["verdict"] == "not_run" for r in rows):
            return shorten(f"Nothing ran: {why_not_run or 'no records'}.")
        return "No row could be decided from what is here; a rerun decides them."
    if not dev:
        return ("Every compared number matches the printed one or lies within the noise of "
                "the seeds.")
    d = dev[0]
    example = (f" (e.g. {d['metric']} at {_key_words(d.get('key', ''))}: ours "
               f"{_num(d.get('reproduced'))}, printed {d.get('reported')}"
               + (f"; cause: {d['cause']}" if d.get("cause") else "") + ")"
               if d.get("metric") else "")
    verb = "lies" if len(dev) == 1 else "lie"
    return shorten(f"{len(dev)} of the {len(judged)} compared numbers {verb} outside the "
                   f"printed precision and the noise of the seeds{example}.")


def figure_why(claims: list[dict], why_not_run: str = "") -> str:
    """One plain sentence: why this figure got its answer (the claims it is judged by)."""
    if not claims:
        return "The paper prints no values for it: drawn, nothing to compare."

    def said(c: dict) -> str:
        measured = str(c.get("measured", "") or "")
        return f"“{c.get('claim', '')}”" + (f": {measured}" if measured else "")

    failed = [c for c in claims if c["verdict"] == "fail"]
    passed = [c for c in claims if c["verdict"] == "pass"]
    if failed:
        c = failed[0]
        more = f" ({len(failed)} of {len(claims)} claims fail)" if len(claims) > 1 else ""
        return shorten(f"The paper's claim does not hold here{more}: {said(c)}.")
    if passed:
        rest = len(claims) - len(passed)
        if len(claims) == 1:
            return shorten(f"Its one claim holds: {said(passed[0])}.")
        head = (f"All {len(claims)} of its claims hold" if not rest else
                f"{len(passed)} of its {len(claims)} claims hold, {rest} undecided")
        return shorten(f"{head}, e.g. {said(passed[0])}.")
    if all(c["verdict"] == "not_run" for c in claims):
        return shorten(f"Nothing ran: {why_not_run or 'no records'}.")
    c = next(c for c in claims if c["verdict"] == "inconclusive")
    return shorten(f"Undecided: within the noise of the seeds, {said(c)}.")
