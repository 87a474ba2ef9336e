"""Where fedrepro reads and writes: the one module that decides.

Four places, each chosen in this order (the first that applies wins):

- **results** (run records): ``--results`` flag > ``$FEDREPRO_RESULTS`` >
  ``<checkout>/results`` inside a source checkout > ``./results``;
- **figures** (tables, figures, reports): ``--out`` flag > ``$FEDREPRO_FIGURES`` >
  ``<checkout>/figures`` > ``./figures``;
- **data** (read-only mirrors laid out ``<dataset>/<file>``, looked in before the cache):
  ``$FEDREPRO_DATA`` when set, then ``<checkout>/../shared/data`` when that folder exists;
- **cache** (downloads): ``$FEDREPRO_CACHE`` > ``<checkout>/data/cache`` > the user's cache
  folder (``platformdirs.user_cache_dir("fedrepro")`` when platformdirs is installed, else
  ``$XDG_CACHE_HOME/fedrepro`` or ``~/.cache/fedrepro``).

A *source checkout* is the first folder at or above the working folder that holds both a
``Makefile`` and a ``pyproject.toml`` declaring ``name = "fedrepro"``; inside one, ``make
paper-figures`` writes where it always has. Installed from a wheel and run anywhere else, nothing
is written next to the installed package (``site-packages`` may be read-only, is shared by every
project of the environment and is emptied by ``pip uninstall``).

**Scales never share an output folder.** The figures place is where the outputs of a complete
run go; without ``--out`` or ``$FEDREPRO_FIGURES`` (a folder you name is written as named), smoke
outputs go to its ``smoke/`` subfolder and the outputs of a run that is not the full protocol of
what it renders (some cells without a record, or failed) to its ``partial/`` subfolder,
and the outputs of a partial run (``repro figures NAME``, ``repro compare NAME``, ``python -m
theory --only``) to its ``partial/`` subfolder too (:func:`outputs_place`): the committed
``figures/`` of a checkout is written only by a complete run of a scale (``make paper-figures``;
``make theory`` for ``theory.*``).

Nothing else in the package computes a place from ``__file__``; the package's own data (the
reported CSVs, the data manifest) is read relative to the package, which is fine installed too.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ENV_RESULTS = "FEDREPRO_RESULTS"
ENV_FIGURES = "FEDREPRO_FIGURES"
ENV_DATA = "FEDREPRO_DATA"
ENV_CACHE = "FEDREPRO_CACHE"

_NAME_LINE = re.compile(r'^\s*name\s*=\s*["\']fedrepro["\']\s*$', re.MULTILINE)


def probe_writable(folder: Path) -> None:
    """Create ``folder`` if needed, then write and remove a file in it; an ``OSError`` says it
    cannot be written (the callers turn it into their one-line error naming the remedy).
    """
    Path(folder).mkdir(parents=True, exist_ok=True)
    fd, probe = tempfile.mkstemp(dir=folder, prefix=".write-test-")
    os.close(fd)
    os.unlink(probe)


def is_checkout(folder: Path) -> bool:
    """Whether ``folder`` is a fedrepro source checkout (its Makefile and pyproject.toml)."""
    pyproject = folder / "pyproject.toml"
    if not (pyproject.is_file() and (folder / "Makefile").is_file()):
        return False
    try:
        return _NAME_LINE.search(pyproject.read_text(errors="replace")) is not None
    except OSError:
        return False


def find_checkout(start: Path | None = None) -> Path | None:
    """The fedrepro checkout at or above ``start`` (default: the working folder), or None."""
    here = Path(start if start is not None else os.getcwd()).resolve()
    for folder in (here, *here.parents):
        if is_checkout(folder):
            return folder
    return None


@dataclass(frozen=True)
class Place:
    """One place in use: its name, its path (None when there is none) and why it was chosen."""

    name: str
    path: Path | None
    why: str


def user_cache_dir() -> tuple[Path, str]:
    """The user's cache folder for fedrepro and how it was found."""
    try:
        import platformdirs
    except ImportError:
        platformdirs = None
    if platformdirs is not None:
        return Path(platformdirs.user_cache_dir("fedrepro")), "platformdirs user cache folder"
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg) / "fedrepro", "$XDG_CACHE_HOME/fedrepro"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "fedrepro", "user cache folder (macOS)"
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        return (Path(os.environ["LOCALAPPDATA"]) / "fedrepro" / "Cache",
                "user cache folder (%LOCALAPPDATA%)")
    return Path.home() / ".cache" / "fedrepro", "~/.cache/fedrepro (XDG default)"


def _output_place(name: str, env: str, flag: str, override: Path | str | None) -> Place:
    if override is not None:
        return Place(name, Path(override), f"{flag} given")
    if os.environ.get(env):
        return Place(name, Path(os.environ[env]), f"${env}")
    root = find_checkout()
    if root is not None:
        return Place(name, root / name, f"fedrepro checkout found at {root}")
    return Place(name, Path.cwd() / name, "no checkout at or above the working folder: "
                                          f"./{name}")


def results_place(override: Path | str | None = None) -> Place:
    return _output_place("results", ENV_RESULTS, "--results", override)


def figures_place(override: Path | str | None = None) -> Place:
    return _output_place("figures", ENV_FIGURES, "--out", override)


SMOKE_SUBFOLDER = "smoke"
PARTIAL_SUBFOLDER = "partial"


def outputs_place(override: Path | str | None = None, *, smoke: bool = False,
                  complete: bool = True, part: str = "") -> Place:
    """Where one command's tables, figures or reports go: :func:`figures_place`, except that
    without ``--out`` and ``$FEDREPRO_FIGURES`` smoke outputs go to its ``smoke/`` subfolder,
    and the outputs of a partial run (``part``: what it covers, e.g. one experiment or some
    theory checks) or an incomplete one (``complete`` False: not every cell rendered has a
    result) to ``partial/``, so that none of them overwrites the outputs of a complete run (the
    committed ``figures/``).
    """
    place = figures_place(override)
    if (override is not None or os.environ.get(ENV_FIGURES)
            or not (smoke or part or not complete)):
        return place
    sub, why = ((SMOKE_SUBFOLDER, "smoke scale") if smoke else
                (PARTIAL_SUBFOLDER, f"a partial run ({part})") if part else
                (PARTIAL_SUBFOLDER, "not every cell has a result"))
    return Place("figures", place.path / sub,
                 f"{why}: kept apart from the complete runs' outputs in {place.path}")


def shared_mirror_dir() -> Path | None:
    """``<checkout>/../shared/data`` when a checkout is found and that folder exists."""
    root = find_checkout()
    if root is None:
        return None
    shared = root.parent / "shared" / "data"
    return shared if shared.is_dir() else None


def data_place() -> Place:
    """The first read-only data mirror looked in before the cache (path None when none)."""
    shared = shared_mirror_dir()
    if os.environ.get(ENV_DATA):
        then = f", then the shared mirror {shared}" if shared is not None else ""
        return Place("data", Path(os.environ[ENV_DATA]), f"${ENV_DATA}{then}")
    if shared is not None:
        return Place("data", shared, f"shared mirror beside the checkout {find_checkout()}")
    return Place("data", None, f"none: ${ENV_DATA} unset and no shared mirror beside a checkout")


def cache_place() -> Place:
    if os.environ.get(ENV_CACHE):
        return Place("cache", Path(os.environ[ENV_CACHE]), f"${ENV_CACHE}")
    root = find_checkout()
    if root is not None:
        return Place("cache", root / "data" / "cache", f"fedrepro checkout found at {root}")
    path, why = user_cache_dir()
    return Place("cache", path, why)


def results_dir(override: Path | str | None = None) -> Path:
    """Where run records go (``--results`` > ``$FEDREPRO_RESULTS`` > checkout > ``./results``)."""
    return results_place(override).path


def figures_dir(override: Path | str | None = None) -> Path:
    """Where tables, figures and reports go (``--out`` > ``$FEDREPRO_FIGURES`` > checkout >
    ``./figures``).
    """
    return figures_place(override).path


def data_cache_dir() -> Path:
    """Where downloaded data files are kept (``$FEDREPRO_CACHE`` > checkout > user cache)."""
    return cache_place().path


def where(results: Path | str | None = None, figures: Path | str | None = None
          ) -> list[tuple[str, Path | None, str]]:
    """The four places in use as ``(name, path, why)``: results, figures, data, cache."""
    return [(p.name, p.path, p.why) for p in
            (results_place(results), figures_place(figures), data_place(), cache_place())]
