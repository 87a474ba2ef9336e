"""Why a row deviates: one cause from a fixed vocabulary, and the runs that show it for that row.

Every deviating row of a primary reading gets a ``cause`` and its ``evidence``:

``paper inconsistency``   the paper's own numbers contradict the row (an :class:`Inconsistency`
                          declared for its table, computed from the printed numbers);
``setting identified``    a fitted reading (:mod:`repro.engine.compare.fitted`) chose an
                          unstated setting on its calibration rows, and under that choice this
                          row, held out of the fit, is reproduced;
``setting guessed``       another reading (or a diagnostic's setting) of an unstated setting
                          reproduces the row or moves it across the printed number: the printed
                          value lies between the primary's and that reading's;
``authors' code differs`` the same, for a reading that follows the authors' published code
                          where it departs from the text;
``unexplained``           none of the above; the evidence lists every reading and diagnostic
                          that changes the row, with the row's value under each (or says that
                          none does);
``bug fixed``             not a cause of a deviating row (a fixed bug leaves none): it names rows
                          a fix brought back, nowhere else.

Evidence is only ever another comparison row of the same reported number, made from records of
the same code (both rows from records of the code the package has now: none stale, none kept;
the commits in ``made_by`` may differ where a later commit left the code identity as it was),
shown beside the primary's value and the printed one; a docs entry alone is never evidence, and
nothing is linked automatically.
:func:`check_causes` is the test of that: a deviating primary row without a cause or evidence,
or whose reason or evidence quotes a printed value that is not its row's, is a problem.

Paper packages declare, in their output-only ``reproduce.py``: which setting each alternative
reading varies and the cause it stands for (:class:`Alternative`), the paper's inconsistencies
(:class:`Inconsistency`), and the diagnostics whose settings are evaluated on a table's rows
(:class:`Diagnostic`).
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from repro.engine.compare.fitted import fit_all
from repro.engine.compare.verdict import is_primary
from repro.engine.records.kept import KEPT

__all__ = ["CAUSES", "NOTHING_TRIED", "Alternative", "Diagnostic", "Inconsistency",
           "alternatives", "assign_causes", "cause_counts", "check_causes", "claim_causes",
           "declare", "diagnostics", "inconsistencies"]

CAUSES = ("bug fixed", "paper inconsistency", "setting identified", "setting guessed",
          "authors' code differs", "unexplained")
OK = ("match", "within_noise")
_PRINTED = re.compile(r"printed ([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")


@dataclass(frozen=True)
class Alternative:
    """What a non-primary reading of ``experiment`` (or a diagnostic's setting) varies:
    ``setting`` in words, and the ``cause`` it stands for where it explains a row
    (``setting guessed``, or ``authors' code differs`` for a reading of the authors' code).
    """

    experiment: str
    reading: str
    setting: str
    cause: str = "setting guessed"

    def __post_init__(self) -> None:
        if self.cause not in ("setting guessed", "authors' code differs"):
            raise ValueError(f"{self.experiment} reading {self.reading}: an alternative stands "
                             f"for 'setting guessed' or \"authors' code differs\", got "
                             f"{self.cause!r}")


@dataclass(frozen=True)
class Inconsistency:
    """An inconsistency of the paper shown from its own printed numbers. ``shown(rows)`` gets
    every reported row of ``stem`` and returns ``{(key_text, metric): sentence}`` for the rows
    it concerns (a sentence with the numbers; where it quotes the row's printed value it says
    ``printed <value>``), or ``{(key_text, metric): (sentence, value)}`` where the paper's own
    numbers give the value the row would print without the inconsistency: then it explains the
    row's deviation only where our number reaches that value (within the row's match width or
    noise band). ``explains``: whether it explains deviations at all (else it is only named in
    the row's ``paper_note``).
    """

    stem: str
    name: str
    shown: Callable[[list], dict[tuple[str, str], str]]
    explains: bool = True


@dataclass(frozen=True)
class Diagnostic:
    """A registered experiment whose runs evaluate settings on ``target``'s rows.
    ``rows(records)`` gives ``(label, Reproduced)`` pairs addressed like the target's reported
    rows, one label per setting value; each becomes a comparison row of reading ``label``.
    ``labels``: the settings searched, declared before any run; ``budget``: the search as
    declared (settings, values, runs).
    """

    name: str
    target: str
    setting: str
    rows: Callable[[list], list]
    budget: str
    labels: tuple[str, ...] = ()
    cause: str = "setting guessed"


_ALTERNATIVES: dict[tuple[str, str], Alternative] = {}
_INCONSISTENCIES: list[Inconsistency] = []
_DIAGNOSTICS: dict[str, Diagnostic] = {}


def declare(*items: Alternative | Inconsistency | Diagnostic) -> None:
    """Register alternatives, inconsistencies and diagnostics (idempotent per item)."""
    for it in items:
        if isinstance(it, Alternative):
            _ALTERNATIVES[(it.experiment, it.reading)] = it
        elif isinstance(it, Diagnostic):
            _DIAGNOSTICS[it.name] = it
        elif it not in _INCONSISTENCIES:
            _INCONSISTENCIES.append(it)


def alternatives() -> dict[tuple[str, str], Alternative]:
    return dict(_ALTERNATIVES)


def diagnostics() -> dict[str, Diagnostic]:
    return dict(_DIAGNOSTICS)


def inconsistencies() -> list[Inconsistency]:
    return list(_INCONSISTENCIES)


def _num(x) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def _row_id(r: dict) -> tuple:
    return (r["experiment"], r["table"], r["key"], r["metric"])


def _target(r: dict) -> float:
    return _num(r["reported"])


def _made_now(row: dict) -> bool:
    """Made from records of the code the package has now: none stale (a record's code hash,
    :mod:`repro.engine.run.code_identity`, differs from its experiment's current one) and none
    kept from an earlier comparison file.
    """
    made = str(row.get("made_by", ""))
    return (bool(made) and not made.startswith(KEPT)
            and not str(row.get("reason", "")).startswith("stale"))


def _current(alt: dict, r: dict) -> bool:
    """``alt`` and ``r`` made by the same code: both from records of the code the package has
    now. The commits may differ (a run resumed at a later commit whose changes leave these
    experiments' code identities as they were); the code identity is what a record is of.
    """
    return _made_now(alt) and _made_now(r)


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _shown(a: dict, r: dict, label: str) -> str:
    return (f"{label}: {_fmt(_num(a['reproduced']))} ({a['verdict']}) beside the primary's "
            f"{_fmt(_num(r['reproduced']))}, printed {r['reported']}")


def brackets(alt_value: float, primary: float, printed: float) -> bool:
    """Whether the printed value lies between the primary's and the alternative's (the
    alternative moves the row across it, at least by its gap).
    """
    return min(alt_value, primary) <= printed <= max(alt_value, primary)


def _setting_of(a: dict) -> Alternative | None:
    d = _DIAGNOSTICS.get(a.get("diagnostic", ""))
    if d is not None:
        return Alternative(d.target, a["reading"], d.setting, d.cause)
    return _ALTERNATIVES.get((a["experiment"], a["reading"]))


def _label(a: dict) -> str:
    alt = _setting_of(a)
    what = f" ({alt.setting})" if alt else ""
    src = f"diagnostic {a['diagnostic']}, " if a.get("diagnostic") else ""
    return f"{src}reading {a['reading']}{what}"


def _guessed(r: dict, alts: list[dict]) -> tuple[str, str] | None:
    """The cause and evidence from the alternative readings that reach the printed value."""
    printed, primary = _target(r), _num(r["reproduced"])
    reach = [a for a in alts if a["verdict"] in OK
             or brackets(_num(a["reproduced"]), primary, printed)]
    if not reach:
        return None
    best = min(reach, key=lambda a: (a["verdict"] not in OK,
                                     abs(_num(a["reproduced"]) - printed)))
    alt = _setting_of(best)
    cause = alt.cause if alt else "setting guessed"
    others = [a for a in reach if a is not best][:3]
    text = _shown(best, r, _label(best)) + "".join(
        f"; also {_label(a)} {_fmt(_num(a['reproduced']))} ({a['verdict']})" for a in others)
    return cause, text


NOTHING_TRIED = "no reading or diagnostic of the package changes this row"


def _tried(r: dict, alts: list[dict]) -> str:
    if not alts:
        return NOTHING_TRIED + (f" (its runs: {r['reason']})" if r.get("reason") else "")
    parts = [f"{_label(a)} {_fmt(_num(a['reproduced']))} ({a['verdict']})" for a in alts]
    return (f"tried, none reaches the printed {r['reported']} from the primary's "
            f"{_fmt(_num(r['reproduced']))}: " + "; ".join(parts))


def paper_notes(reported: list) -> dict[tuple, list[tuple[str, bool, float | None]]]:
    """The inconsistency sentences of each row id (paper_file, table, key, metric):
    ``[(sentence, explains, value the paper's numbers imply or None)]``.
    """
    by_stem: dict[str, list] = defaultdict(list)
    for rr in reported:
        by_stem[rr.stem].append(rr)
    out: dict[tuple, list[tuple[str, bool, float | None]]] = defaultdict(list)
    for inc in _INCONSISTENCIES:
        rows_of = by_stem.get(inc.stem, [])
        for (key, metric), shown in inc.shown(rows_of).items():
            sentence, value = shown if isinstance(shown, tuple) else (shown, None)
            for rr in (x for x in rows_of if x.key_text == key and x.metric == metric):
                out[(rr.paper_file, rr.table, key, metric)].append(
                    (f"{inc.name}: {sentence}", inc.explains, value))
    return out


def assign_causes(rows: list[dict], reported: list | None = None) -> list[dict]:
    """Fill ``cause``, ``evidence`` and ``paper_note`` of the rows (module docstring): every
    deviating primary row gets a cause; other rows keep empty ones. Returns ``rows``.
    """
    if reported is None:
        from repro.engine.compare.reported import load_reported

        reported = load_reported()
    notes = paper_notes(reported)
    fits = fit_all(rows)
    by_id: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        if not is_primary(r) and r.get("verdict") in (*OK, "deviates"):
            by_id[_row_id(r)].append(r)
    for r in rows:
        mine = notes.get((r["paper_file"], r["table"], r["key"], r["metric"]), [])
        r["paper_note"] = "; ".join(s for s, _, _ in mine)
        if not is_primary(r):
            continue
        r["cause"], r["evidence"] = "", ""
        if r["verdict"] != "deviates":
            continue
        # the alternatives that touch the row: made by the same code, another value
        alts = [a for a in by_id.get(_row_id(r), []) if _current(a, r)
                and not _num(a["reproduced"]) == _num(r["reproduced"])]
        r["cause"], r["evidence"] = _cause(r, alts, mine, fits)
    return rows


def _reaches(r: dict, value: float) -> tuple[bool, str]:
    """Whether our number reaches ``value`` within the row's match width or noise band."""
    d = abs(_num(r["reproduced"]) - value)
    width = max(_num(r.get("tolerance")) if r.get("tolerance") not in ("", None) else 0.0,
                2 * _num(r.get("sigma_diff")) if r.get("sigma_diff") not in ("", None) else 0.0)
    return d <= width, (f"ours {_fmt(_num(r['reproduced']))} against the implied "
                        f"{_fmt(value)}: {_fmt(d)} apart, within {_fmt(width)}")


def _cause(r: dict, alts: list[dict], notes: list[tuple[str, bool, float | None]], fits
           ) -> tuple[str, str]:
    explaining = []
    for sentence, explains, value in notes:
        if not explains:
            continue
        if value is None:
            explaining.append(sentence)
            continue
        ok, how = _reaches(r, value)
        if ok:
            explaining.append(f"{sentence}; {how}")
    if explaining:
        return "paper inconsistency", "; ".join(explaining)
    for fit in fits:
        held = fit.held_out_row(r)
        if held is not None and held["verdict"] in OK and _current(held, r):
            return "setting identified", (
                _shown(held, r, f"fitted reading {fit.reading.id} ({fit.reading.setting}: "
                                f"{fit.choice_text(r)})"))
    found = _guessed(r, alts)
    if found is not None:
        return found
    return "unexplained", _tried(r, alts)


def check_causes(rows: list[dict]) -> list[str]:
    """What is wrong with the causes of ``rows`` (empty when nothing): a deviating primary
    row without a cause of the vocabulary or without evidence, ``bug fixed`` on a deviating
    row, a reason or evidence quoting a printed value other than its row's.
    """
    bad = []
    for r in rows:
        where = f"{r['experiment']} {r['key']} {r['metric']}"
        for text in (r.get("reason", ""), r.get("evidence", "")):
            for quoted in _PRINTED.findall(text or ""):
                if not _same(quoted, r["reported"], r.get("reason", "")):
                    bad.append(f"{where}: quotes the printed {quoted}, its row prints "
                               f"{r['reported']}")
        if not is_primary(r) or r.get("verdict") != "deviates":
            continue
        cause = r.get("cause", "")
        if cause not in CAUSES or cause == "bug fixed":
            bad.append(f"{where}: deviates with cause {cause!r}")
        elif not r.get("evidence"):
            bad.append(f"{where}: deviates ({cause}) without evidence")
    return bad


def _same(quoted: str, printed: str, reason: str) -> bool:
    return _num(quoted) == _num(printed)


def claim_causes(rows: list[dict]) -> list[dict]:
    """A failing or inconclusive claim under its primary reading gets a ``cause`` of the
    vocabulary: the cause of an alternative reading under which the same claim passes (its
    setting named in the reason), else ``unexplained``. Returns ``rows``.
    """
    passes: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        if not is_primary(r) and r["verdict"] == "pass":
            passes[(r["experiment"], r.get("claim", ""))].append(r)
    for r in rows:
        r["cause"] = ""
        if not is_primary(r) or r["verdict"] not in ("fail", "inconclusive"):
            continue
        found = passes.get((r["experiment"], r.get("claim", "")), [])
        if not found:
            r["cause"] = "unexplained"
            continue
        alt = _ALTERNATIVES.get((found[0]["experiment"], found[0]["reading"]))
        r["cause"] = alt.cause if alt else "setting guessed"
        what = f" ({alt.setting})" if alt else ""
        r["reason"] = "; ".join(filter(None, (
            f"passes under reading {found[0]['reading']}{what}: {found[0]['measured']}",
            r.get("reason", ""))))
    return rows


def cause_counts(rows: list[dict]) -> dict[tuple[str, str], Counter]:
    """(paper file, table) -> count of the deviating primary rows per cause."""
    out: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for r in rows:
        if is_primary(r) and r.get("verdict") == "deviates":
            out[(r.get("paper_file", ""), str(r.get("table", "")))][r.get("cause") or "(none)"] += 1
    return dict(sorted(out.items()))
