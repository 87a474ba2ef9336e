"""``repro list``: the registered experiments, their scales, cells and cost, and the library
methods of every paper.

Per experiment: its scales, the cells ``repro run`` runs at each (:func:`run_cells`, every
reading, a shared cell once), its declared cost (experiments sharing their runs share one cost
text), what the records found took (:func:`measured_cost`), whether ``--scale auto`` leaves its
cells to another machine here (:func:`repro.engine.run.planning.auto_elsewhere`) and its readings.
Then what all the current records took (:func:`measured_total`), then every paper's library
methods (``repro.<paper>.methods``) and the experiments that run each one
(:func:`list_methods`).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from repro.engine.commands.figures_run import every_reading
from repro.engine.records.records import canonical_json
from repro.engine.registry import library_methods, load_all
from repro.engine.run.planning import auto_elsewhere, auto_scale, collect, diverged


def _hours(wall: float) -> str:
    return f"{wall / 3600:.2f} h" if wall >= 3600 else f"{wall:.0f} s"


def measured_cost(exp, results: Path | None) -> str:
    """What the current records under ``results`` took, per scale: cells with a result of the
    scale's primary-reading cells and the sum of their wall seconds (stale records not counted,
    nor the time of a record copied from a run another experiment computed: ``shared``); cells
    recorded without a result (not run, failed) are counted apart, never as measured.
    """
    parts = []
    for s in exp.scales:
        recs = collect(exp, s, results, include_stale=False)
        if not recs:
            continue
        done = [r for r in recs if r.ok or diverged(r)]
        own = [r for r in done if "shared_from" not in r.timings]
        wall = sum(float(r.timings.get("wall_s", 0.0)) for r in own)
        text = f"{s}: {len(done)}/{len(exp.configs(s))} cells computed"
        if done:
            text += f", {_hours(wall)} summed over the cells' wall times"
            if len(own) < len(done):
                text += f" ({len(done) - len(own)} shared with another experiment, not summed)"
        if len(recs) > len(done):
            text += f"; {len(recs) - len(done)} recorded without a result (not run or failed)"
        parts.append(text)
    return "; ".join(parts)


def status_here(exp, results: Path | None) -> str:
    """One phrase: at ``--scale auto``, how many of the cells ``repro run`` runs (every reading)
    have a result here, and their time.
    """
    scale = auto_scale(exp, "auto", results)
    if scale not in exp.scales:
        return "-"
    # the records of every reading's cells: what run_cells counts, so "k of n" is like with like
    recs = every_reading(exp, scale, results, collect(exp, scale, results, include_stale=False),
                         include_stale=False)
    total = run_cells(exp, scale)
    if not recs:
        away = auto_elsewhere(exp, "auto", scale)
        return f"{scale}: no records" + ("; auto leaves it to a GPU" if away else "")
    done = [r for r in recs if r.ok or diverged(r)]
    wall = sum(float(r.timings.get("wall_s", 0.0)) for r in done
               if "shared_from" not in r.timings)
    text = f"{scale}: {len(done)} of {total} computed"
    text += f" ({_hours(wall)})" if done else ""
    if len(recs) > len(done):
        text += f", {len(recs) - len(done)} not run or failed"
    return text


def list_summary(results: Path | None = None) -> int:
    """``repro list``: one line per experiment (scales, cells per scale, what is recorded here
    at ``--scale auto``), then the measured total; ``--details`` for the rest.
    """
    exps = load_all()
    rows = [("experiment", "scales", "cells `run` runs", "recorded here (--scale auto)")]
    rows += [(name, "/".join(exp.scales),
              "/".join(str(run_cells(exp, s)) for s in exp.scales), status_here(exp, results))
             for name, exp in exps.items()]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r[:3], widths, strict=True)) + "  " + r[3])
    total = measured_total(exps, results)
    if total:
        print(textwrap.fill(f"all at --scale auto, measured here: {total}", width=100,
                            subsequent_indent="    "))
    print("repro list --details: titles, declared costs, readings, what auto leaves to another "
          "machine, and every paper's library methods")
    return 0


def measured_total(exps, results: Path | None) -> str:
    """The whole of ``repro run all --scale auto`` as the current records here measured it:
    records with a result or a named divergence (computed, shared; those whose config names an
    accelerator device were made elsewhere and are only counted), their wall seconds summed,
    and the span from the first
    cell's start to the last one's finish (the run's wall time when one sitting made them all).
    ``""`` without records.
    """
    from datetime import datetime

    own = shared = elsewhere = 0
    wall, starts, ends = 0.0, [], []
    for exp in exps.values():
        scale = auto_scale(exp, "auto", results)
        if scale not in exp.scales:  # e.g. a smoke-only plugin experiment: nothing at auto
            continue
        for r in collect(exp, scale, results, include_stale=False):
            if not (r.ok or diverged(r)):  # not_run: nothing computed
                continue
            if str(r.config.get("device", "cpu")) != "cpu":  # made on an accelerator elsewhere
                elsewhere += 1
                continue
            if "shared_from" in r.timings:
                shared += 1
                continue
            own += 1
            w = float(r.timings.get("wall_s", 0.0))
            wall += w
            if r.timings.get("finished"):
                end = datetime.fromisoformat(str(r.timings["finished"])).timestamp()
                starts.append(end - w)
                ends.append(end)
    if not own:
        return ""
    text = (f"{own} records computed ({shared} more shared between experiments), "
            f"{wall / 3600:.2f} h summed over the cells' wall times")
    if elsewhere:
        text += f" ({elsewhere} records made on an accelerator not counted)"
    if ends:
        first, last = min(starts), max(ends)
        when = datetime.fromtimestamp(first).astimezone().strftime("%Y-%m-%d %H:%M")
        text += (f"; first cell started {when}, last finished {(last - first) / 3600:.2f} h "
                 "later (the run's wall time when one sitting made them all)")
    return text


def run_cells(exp, scale: str) -> int:
    """The cells ``repro run NAME --scale SCALE`` runs (every reading, the default): a cell
    two readings share counts once, as the runner computes it once.
    """
    return len({canonical_json(config) for reading in exp.select_readings("all")
                for _, config in exp.reading_configs(scale, reading)})


def list_experiments(results: Path | None = None, details: bool = False) -> int:
    """Print the listing: the summary (:func:`list_summary`), or with ``details`` every
    experiment's title, costs, readings and the library methods; the exit status (0).
    """
    if not details:
        return list_summary(results)
    exps = load_all()
    rows = [("experiment", "scales", "cells `run` runs")]
    for name, exp in exps.items():
        rows.append((name, "/".join(exp.scales),
                     "/".join(str(run_cells(exp, s)) for s in exp.scales)))
    widths = [max(len(r[i]) for r in rows) for i in range(2)]
    print(f"{rows[0][0]:<{widths[0]}}  {rows[0][1]:<{widths[1]}}  {rows[0][2]} (per scale, "
          "every reading); cost on 2 cores below each")
    wrap = textwrap.TextWrapper(width=100, initial_indent="    cost: ",
                                subsequent_indent="          ", break_on_hyphens=False)
    seen_cost: dict[str, str] = {}
    seen_away: dict[str, str] = {}
    for (name, scales, cells), exp in zip(rows[1:], exps.values(), strict=True):
        print(f"{name:<{widths[0]}}  {scales:<{widths[1]}}  {cells}")
        print(f"    {exp.title}")
        cost = ", ".join(f"{s}: {exp.cost.get(s, '?')}" for s in exp.scales)
        if cost in seen_cost:  # experiments sharing their runs share one cost text
            print(f"    cost: as {seen_cost[cost]} (the same runs)")
        else:
            seen_cost[cost] = name
            print(wrap.fill(cost))
        measured = measured_cost(exp, results)
        if measured:
            print(f"    measured by the records here: {measured}")
        resolved = auto_scale(exp, "auto", results)
        away = auto_elsewhere(exp, "auto", resolved)
        if away in seen_away:  # experiments sharing their runs share one reason
            print(f"    not run by --scale auto on this machine: as {seen_away[away]}")
        elif away:
            seen_away[away] = name
            print(textwrap.fill(f"not run by --scale auto on this machine ({resolved}; recorded "
                                f"not_run, nothing computed): {away}", width=100,
                                initial_indent="    ", subsequent_indent="          ",
                                break_on_hyphens=False, break_long_words=False))
        if exp.readings:
            print("    readings: " + ", ".join(r.id + (" (primary)" if r.primary else "")
                                            for r in exp.select_readings("all")))
    total = measured_total(exps, results)
    if total:
        print(textwrap.fill("every experiment at --scale auto, measured by the current records "
                            f"here: {total}", width=100, subsequent_indent="    "))
    list_methods(exps)
    return 0


def list_methods(exps) -> None:
    """The library methods of every paper (``repro.<paper>.methods``) and the experiments
    that run each one; a method no experiment names says so.
    """
    print("\nlibrary methods (repro.<paper>.methods; a table runs the methods it names)")
    for paper, methods in library_methods().items():
        print(f"{paper}")
        for name, method in methods.items():
            users = [n for n, e in exps.items()
                     if n.split(".")[0] == paper and name in e.methods]
            where = ", ".join(users) if users else "in no table (library only)"
            print(textwrap.fill(f"{name}: {method.summary} [{where}]", width=100,
                                initial_indent="    ", subsequent_indent="        ",
                                break_on_hyphens=False, break_long_words=False))
