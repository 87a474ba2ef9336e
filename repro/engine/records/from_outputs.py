"""Claims judged on a committed output when no run records exist here.

Some runs cannot be repeated on every machine (fedmm's figures need a GPU for hours), yet their
rendered per-seed tables are committed. An experiment may register how to read such a table back
as records (its ``Experiment.from_outputs`` field); when ``repro compare`` finds no record of the
experiment, its claims are judged on those records instead of being ``not_run``. The claim's
``measured`` text then starts with the file, the commit that last wrote it and how it was made
(as registered, e.g. "GPU-made per figures/README.md"), and its ``made_by`` says ``kept:`` and
names them (:func:`repro.engine.compare.claimcheck.check_claims`): such a verdict is never shown as
computed from run records, nor as made by this code. A claim that needs more than the table
holds (a curve) raises ``RecordsMissing`` and stays ``not_run``.
"""

from __future__ import annotations

from pathlib import Path

from repro.engine.experiment import Experiment
from repro.engine.records.kept import file_commit
from repro.engine.records.records import RunRecord


def output_records(exp: Experiment, figures_dir: Path) -> tuple[list[RunRecord], str] | None:
    """``(records, source)`` read back from the experiment's committed output
    (``exp.from_outputs``), or ``None`` when it declares none or the file is absent.
    ``source``: ``figures/<file> at <commit>``, then how it was made where declared.
    """
    if exp.from_outputs is None:
        return None
    filename, loader, made = exp.from_outputs
    path = Path(figures_dir) / filename
    if not path.is_file():
        return None
    commit = file_commit(path)
    return loader(path), (f"{path.parent.name}/{filename}" + (f" at {commit}" if commit else "")
                          + (f", {made}" if made else ""))


__all__ = ["output_records"]
