"""``repro figures``: render every chosen experiment's tables and figures from its records.

Per experiment, at its resolved scale (:func:`repro.engine.run.planning.auto_scale`): nothing is
rendered where no cell has a result (it says why: every cell not run or failed, or no records at
all); else the outputs go to the folder :func:`repro.engine.commands.outputs.outputs_folder` picks
(complete, smoke or partial: a run of some experiments only is partial too), marked stale where
records of other code are shown and partial where cells lack a result, with the cells ledger
(``cells/<experiment>.csv``) of every reading.
"""

from __future__ import annotations

from pathlib import Path

from repro.engine.commands.outputs import outputs_folder
from repro.engine.records.ledger import write_ledger
from repro.engine.report.plotting import rendering_smoke
from repro.engine.report.report import coverage_of, rendering_coverage
from repro.engine.report.why import first_sentence, shorten
from repro.engine.run.code_identity import rendering_stale
from repro.engine.run.planning import auto_scale, collect, is_complete


def every_reading(exp, scale: str, results: Path | None, primary: list, *,
                  include_stale: bool = True) -> list:
    """The records of every reading of ``exp`` (each cell once): the ledger's rows; without
    ``include_stale`` only current records (``primary`` collected the same way).
    """
    recs = {r.key: r for r in primary}
    for reading in exp.select_readings("all"):
        if not reading.primary:
            recs.update((r.key, r) for r in collect(exp, scale, results, reading=reading,
                                                    include_stale=include_stale)
                        if r.key not in recs)
    return list(recs.values())


def partial_run(experiments) -> str:
    """What a run of ``experiments`` covers when it is not every discovered one, else ``""``
    (a partial run's outputs never go to the committed folder). Extra experiments registered
    in the same process (a plugin a test loaded) do not make a run over all of them partial.
    """
    from repro.engine.registry import load_all

    chosen = sorted({e.name for e in experiments})
    if set(load_all()) <= set(chosen):
        return ""
    return (", ".join(chosen) if len(chosen) <= 3 else
            f"{len(chosen)} experiments") + " only"


def render_figures(experiments, scale: str, results: Path | None, out: Path | None) -> int:
    """Render ``experiments`` (``--scale`` ``scale``) into ``out`` and print one line each;
    the exit status (0). A run of some experiments only writes to the partial folder.
    """
    used: dict = {}
    experiments = list(experiments)
    part = partial_run(experiments)
    for exp in experiments:
        try:
            s = auto_scale(exp, scale, results)
            if s not in exp.scales:  # `auto` falls back to paper, which a plugin may lack
                raise ValueError(f"{exp.name} has no scale {s!r}; it declares "
                                 f"{', '.join(exp.scales)}")
        except ValueError as e:  # over every experiment, one without that scale is skipped
            if part:
                raise
            print(f"{exp.name}: skipped ({e})")
            continue
        recs = collect(exp, s, results)
        if exp.render is None:
            continue
        if not any(r.ok for r in recs):
            if recs:  # every cell ran and ended not_run or failed: say why, not "run it"
                why = sorted({shorten(first_sentence(r.reason), 160) for r in recs})
                print(f"{exp.name} [{s}]: {len(recs)} cells, none with a result "
                      f"({'; '.join(why[:2])}); nothing rendered")
            else:
                print(f"{exp.name} [{s}]: no records (run `repro run {exp.name} --scale "
                      f"{s}`); nothing rendered")
            continue
        complete = is_complete(exp, s, recs)
        folder = outputs_folder(out, s == "smoke", complete, used, part)
        note = "; ".join(sorted({r.stale_note for r in recs if r.ok and r.stale_note}))
        with rendering_stale(note), rendering_coverage(coverage_of(exp, s, recs)), \
                rendering_smoke(s == "smoke"):
            written = exp.render(recs, folder, s)
        ledger = write_ledger(exp, s, every_reading(exp, s, results, recs), folder)
        written += [ledger] if ledger is not None else []
        marked = f" [{note}: run `repro run {exp.name}` to make them current]" if note else ""
        if not complete:  # e.g. a quarantined record: 2 of 3 seeds, said, not passed over
            total = len(exp.configs(s))
            marked += (f" [INCOMPLETE: {sum(r.ok for r in recs)} of {total} cells have a "
                       f"result; `repro run {exp.name} --scale {s}` fills in the rest]")
        print(f"{exp.name} [{s}]: " + ", ".join(p.name for p in written) + marked)
    return 0
