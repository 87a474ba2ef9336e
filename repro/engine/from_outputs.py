"""Claims judged on a committed output when no run records exist here.

Some runs cannot be repeated on every machine (fedmm's figures need a GPU for hours), yet their
rendered per-seed tables are committed. An experiment may register how to read such a table back
as records (:func:`register_output_records`); when ``repro compare`` finds no record of the
experiment, its claims are judged on those records instead of being ``not_run``. The claim's
``measured`` text then starts with the file and the commit that last wrote it, and its
``made_by`` names them: such a verdict is never shown as computed from run records. A claim that
needs more than the table holds (a curve) raises ``RecordsMissing`` and stays ``not_run``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from repro.engine.kept import file_commit
from repro.engine.records import RunRecord

_LOADERS: dict[str, tuple[str, Callable[[Path], list[RunRecord]]]] = {}


def register_output_records(experiment: str, filename: str,
                            loader: Callable[[Path], list[RunRecord]]) -> None:
    """``loader(path)`` turns the committed output ``<figures>/<filename>`` into records."""
    _LOADERS[experiment] = (filename, loader)


def output_records(experiment: str, figures_dir: Path) -> tuple[list[RunRecord], str] | None:
    """``(records, source)`` read back from the experiment's committed output, or ``None`` when
    it registered none or the file is absent. ``source``: ``figures/<file> at <commit>``.
    """
    if experiment not in _LOADERS:
        return None
    filename, loader = _LOADERS[experiment]
    path = Path(figures_dir) / filename
    if not path.is_file():
        return None
    commit = file_commit(path)
    return loader(path), f"{path.parent.name}/{filename}" + (f" at {commit}" if commit else "")


__all__ = ["output_records", "register_output_records"]
