"""Where a command's outputs (tables, figures, comparison) are written, checked before use.

:func:`outputs_folder` picks the folder (:func:`repro.core.paths.outputs_place`: ``figures/``
for a complete run, ``figures/smoke/`` at smoke scale, ``figures/partial/`` for a run of some
experiments only or where cells lack a result), says so when it is not the base folder, and
checks, once per folder, that a file can be written in it (:func:`writable_outputs`), before
anything is rendered.
"""

from __future__ import annotations

from pathlib import Path

from repro.core import paths


class OutputsNotWritable(RuntimeError):
    """The output folder cannot be written: said before anything is rendered."""


def writable_outputs(folder: Path) -> Path:
    """Create ``folder`` if needed and check a file can be written in it, else a one-line
    error naming it (a read-only ``--out`` used to end in a 22-line traceback).
    """
    try:
        paths.probe_writable(folder)
    except OSError as exc:
        raise OutputsNotWritable(
            f"output folder {folder} is not writable ({type(exc).__name__}: "
            f"{exc.strerror or exc}); nothing was written. Choose another with --out DIR or "
            "$FEDREPRO_FIGURES (`repro where` shows the places in use)") from None
    return folder


def outputs_folder(out: Path | None, smoke: bool, complete: bool, used: dict,
                   part: str = "") -> Path:
    """The folder for outputs of this kind under ``out`` (default: the figures folder), checked
    writable the first time ``used`` (folder -> folder) meets it; ``part``: what a partial run
    covers (its outputs never go to the committed folder).
    """
    place = paths.outputs_place(out, smoke=smoke, complete=complete, part=part)
    if place.path not in used:
        used[place.path] = writable_outputs(place.path)
        base = paths.figures_dir(out)
        if place.path != base:
            print(f"outputs in {place.path} ({place.why})")
    return place.path
