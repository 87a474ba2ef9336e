"""Find, verify and (if needed) download the raw data files listed in ``manifest.json``.

Lookup order for ``<dataset>/<file>``:

1. ``$FEDREPRO_DATA`` (a mirror directory laid out as ``<dataset>/<file>``), if set;
2. ``shared/data`` beside a source checkout (``<checkout>/../shared/data``), if present;
3. the download cache (``$FEDREPRO_CACHE``, else ``<checkout>/data/cache`` inside a checkout,
   else the user's cache folder);
4. otherwise download from the manifest's address into the cache, with a progress bar.

Both places are decided by :mod:`repro.core.paths` (``repro where`` prints them).

Every file's sha256 is checked the first time it is used in a process; a file whose hash differs
from the manifest is refused (never used), with both hashes in the error. Downloads are disabled
by ``FEDREPRO_OFFLINE=1``.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tqdm.auto import tqdm

from repro.core import paths

# package data: shipped in the wheel beside this module
_MANIFEST_PATH = Path(__file__).with_name("manifest.json")
_VERIFIED: dict[tuple[str, int, int], str] = {}


class DataError(RuntimeError):
    """Base class of the data layer's errors."""


class DataFileMissing(DataError, FileNotFoundError):
    """A manifest file is in none of the places looked and could not be downloaded."""


class DataFileCorrupt(DataError):
    """A file exists but its sha256 differs from the manifest's."""


@dataclass(frozen=True)
class FileRecord:
    """One manifest entry: where a file belongs, what it must hash to, where it comes from."""

    dataset: str
    file: str
    bytes: int
    sha256: str
    url: str | None
    how_to_get: str
    upstream: str
    pristine: bool

    @property
    def relpath(self) -> str:
        return f"{self.dataset}/{self.file}"


@cache
def manifest() -> dict[tuple[str, str], FileRecord]:
    """The project's manifest, keyed by ``(dataset, file)``."""
    records = json.loads(_MANIFEST_PATH.read_text())
    return {(r["dataset"], r["file"]): FileRecord(**r) for r in records}


def record(dataset: str, file: str) -> FileRecord:
    try:
        return manifest()[(dataset, file)]
    except KeyError:
        known = sorted({d for d, _ in manifest()})
        raise KeyError(f"{dataset}/{file} is not in the data manifest; datasets: {known}") from None


def cache_dir() -> Path:
    return paths.data_cache_dir()


def search_roots() -> list[tuple[str, Path]]:
    """The places looked, in order, as ``(label, directory)``."""
    roots: list[tuple[str, Path]] = []
    if os.environ.get(paths.ENV_DATA):
        roots.append(("$FEDREPRO_DATA", Path(os.environ[paths.ENV_DATA])))
    shared = paths.shared_mirror_dir()
    if shared is not None:
        roots.append(("shared mirror", shared))
    roots.append(("cache", cache_dir()))
    return roots


def sha256_of(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def verify(path: Path, rec: FileRecord) -> Path:
    """Return ``path`` if its sha256 is the manifest's, else raise :class:`DataFileCorrupt`.

    The result is remembered for the process, keyed by path, size and mtime.
    """
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if _VERIFIED.get(key) == rec.sha256:
        return path
    found = sha256_of(path)
    if found != rec.sha256:
        raise DataFileCorrupt(
            f"{rec.relpath}: sha256 mismatch at {path}\n"
            f"  expected {rec.sha256}\n  found    {found}\n"
            f"The file is not used. Replace it ({rec.how_to_get}) or delete it to fall back "
            f"to the next location."
        )
    _VERIFIED[key] = rec.sha256
    return path


def locate(rec: FileRecord) -> Path | None:
    """First existing copy of ``rec`` in the search roots (not verified), or None."""
    for _, root in search_roots():
        candidate = root / rec.dataset / rec.file
        if candidate.is_file():
            return candidate
    return None


def _download(rec: FileRecord, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".part-")
    try:
        with urllib.request.urlopen(rec.url, timeout=60) as resp, os.fdopen(fd, "wb") as out:
            total = int(resp.headers.get("Content-Length") or rec.bytes)
            with tqdm(total=total, unit="B", unit_scale=True, desc=rec.relpath,
                      leave=False) as bar:
                while block := resp.read(1 << 16):
                    out.write(block)
                    bar.update(len(block))
        verify(Path(tmp), rec)
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return dest


def _missing_message(rec: FileRecord, reason: str) -> str:
    looked = "\n".join(f"  - {label}: {root / rec.dataset / rec.file}"
                       for label, root in search_roots())
    return (
        f"data file {rec.relpath} not found. Looked in:\n{looked}\n{reason}\n"
        f"To get it: {rec.how_to_get}, and place it at <mirror>/{rec.relpath} with "
        f"FEDREPRO_DATA=<mirror>, or in {cache_dir() / rec.relpath}.\n"
        f"Upstream: {rec.upstream}"
    )


def fetch(dataset: str, file: str) -> Path:
    """Path to a verified local copy of ``<dataset>/<file>``, downloading it if necessary."""
    rec = record(dataset, file)
    path = locate(rec)
    if path is not None:
        return verify(path, rec)
    if os.environ.get("FEDREPRO_OFFLINE"):
        raise DataFileMissing(_missing_message(rec, "Downloads are off (FEDREPRO_OFFLINE)."))
    if rec.url is None:
        raise DataFileMissing(_missing_message(rec, "There is no direct download address."))
    try:
        return _download(rec, cache_dir() / rec.dataset / rec.file)
    except DataFileCorrupt:
        raise
    except OSError as exc:  # URLError is an OSError
        raise DataFileMissing(
            _missing_message(rec, f"Download from {rec.url} failed: {exc}")) from exc


def verify_all(datasets: list[str] | None = None) -> Iterator[tuple[FileRecord, str, str]]:
    """Yield ``(record, status, detail)`` for every manifest file; status is ok/corrupt/missing.

    Nothing is downloaded.
    """
    for (dataset, _), rec in sorted(manifest().items()):
        if datasets and dataset not in datasets:
            continue
        path = locate(rec)
        if path is None:
            yield rec, "missing", "not in " + ", ".join(str(r) for _, r in search_roots())
            continue
        try:
            verify(path, rec)
            yield rec, "ok", str(path)
        except DataFileCorrupt as exc:
            yield rec, "corrupt", str(exc)
