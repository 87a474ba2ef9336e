"""Where the papers' printed numbers live: the reported CSVs, found by discovery.

A reported CSV (one row per printed number: ``paper_file, table, <key columns>, metric, value,
std``) lives either in ``repro/reported/`` (the four papers of this repository) or in a paper
package's own ``reported/`` folder (``repro/<paper>/reported/<stem>.csv``), so a new paper adds
its CSVs beside its code and edits no list. A stem is the file name without ``.csv`` and must
be unique over all those folders.
"""

from __future__ import annotations

from pathlib import Path

REPORTED_DIR = Path(__file__).resolve().parents[1] / "reported"


def reported_dirs() -> list[Path]:
    """``repro/reported`` and every paper package's existing ``reported/`` folder."""
    from repro.engine.registry import paper_packages

    own = [folder / "reported" for _, folder in paper_packages()]
    return [REPORTED_DIR, *(d for d in own if d.is_dir())]


def reported_files(directories: list[Path] | None = None) -> dict[str, Path]:
    """Stem -> path of every reported CSV, sorted by stem; a stem found twice is an error."""
    found: dict[str, Path] = {}
    for folder in reported_dirs() if directories is None else directories:
        for path in Path(folder).glob("*.csv"):
            if path.stem in found:
                raise ValueError(f"reported table {path.stem!r} is in two places: "
                                 f"{found[path.stem]} and {path}; a stem must be unique")
            found[path.stem] = path
    return dict(sorted(found.items()))
