"""Office-31 (Saenko et al. 2010), three domains of office-object photos.

Office-31 is not in the data manifest (no public copy could be placed, see
``shared/data/MANIFEST.md``), so it is read from a folder the user provides, in the layout of
the upstream archive (https://faculty.cc.gatech.edu/~judy/domainadapt/, ``domain_adaptation_
images.tar.gz``) once extracted: ``<root>/<domain>/images/<class>/*.jpg`` for the domains
``amazon`` (2,817 images), ``dslr`` (498) and ``webcam`` (795), each with the same 31 class
folders (``back_pack``, ``bike``, ..., ``trash_can``). Images differ in size (amazon 300x300,
dslr 1000x1000, webcam 423x423 to 640x480), so :func:`load_office31` returns paths and
:func:`load_office31_images` decodes and resizes them on demand.

No sha256 check is possible (no upstream checksums exist, and the files are not in the
manifest).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from PIL import Image

from .base import Dataset
from .store import DataFileMissing, cache_dir

UPSTREAM_URL = "https://faculty.cc.gatech.edu/~judy/domainadapt/"
ENV_VAR = "FEDREPRO_OFFICE31"
DOMAINS = ("amazon", "dslr", "webcam")
_IMAGE_SUFFIXES = {".jpg", ".jpeg"}


def candidate_roots(root: Path | str | None = None) -> list[tuple[str, Path]]:
    """The places looked for the Office-31 root, as ``(label, path)``.

    With ``root`` given only it is looked at; otherwise ``$FEDREPRO_OFFICE31`` (if set) and then
    ``<cache_dir()>/office31``.
    """
    if root is not None:
        return [("root", Path(root))]
    places = []
    if os.environ.get(ENV_VAR):
        places.append((f"${ENV_VAR}", Path(os.environ[ENV_VAR])))
    places.append(("cache", cache_dir() / "office31"))
    return places


def find_office31(domain: str, root: Path | str | None = None) -> Path:
    """The first candidate root that has ``<domain>/images``.

    Raises
    ------
    DataFileMissing
        Naming every place looked and the upstream address.
    """
    places = candidate_roots(root)
    for _, place in places:
        if (place / domain / "images").is_dir():
            return place
    looked = "\n".join(f"  - {label}: {place / domain / 'images'}" for label, place in places)
    if root is None and not os.environ.get(ENV_VAR):
        looked += f"\n  - ${ENV_VAR}: not set"
    raise DataFileMissing(
        f"Office-31 domain {domain!r} not found. Looked in:\n{looked}\n"
        f"Office-31 is not in the data manifest and is never downloaded automatically. "
        f"Get domain_adaptation_images.tar.gz from {UPSTREAM_URL}, extract it, and either set "
        f"{ENV_VAR}=<folder containing amazon/, dslr/, webcam/> or extract it into "
        f"{cache_dir() / 'office31'}."
    )


def _class_names(root: Path) -> list[str]:
    # The union over all domains present, so that a label id means the same class in every
    # domain even if one domain lacked a class folder.
    names = set()
    for domain in DOMAINS:
        images = root / domain / "images"
        if images.is_dir():
            names |= {p.name for p in images.iterdir() if p.is_dir()}
    return sorted(names)


def load_office31(domain: str = "amazon", root: Path | str | None = None) -> Dataset:
    """List one Office-31 domain: image paths and class labels.

    Parameters
    ----------
    domain : {"amazon", "dslr", "webcam"}
    root : path, optional
        The folder holding the domain folders. Default: ``$FEDREPRO_OFFICE31``, then
        ``<cache_dir()>/office31``.

    Returns
    -------
    Dataset
        ``X`` : object array (n,) of :class:`pathlib.Path`, sorted by class then file name;
        ``y`` : int64 label ids, the index of the class folder in ``meta["class_names"]``
        (sorted names of the class folders found in any domain under the root: 31 for the
        real data set); ``meta`` : ``class_names``, ``domain``, ``root``, ``checksum``
        (``"none"``).

    Raises
    ------
    DataFileMissing
        If no candidate root has ``<domain>/images`` (the message lists every place looked).
    """
    if domain not in DOMAINS:
        raise ValueError(f"domain must be one of {list(DOMAINS)}, got {domain!r}")
    found = find_office31(domain, root)
    class_names = _class_names(found)
    paths: list[Path] = []
    labels: list[int] = []
    for label, name in enumerate(class_names):
        folder = found / domain / "images" / name
        if not folder.is_dir():
            continue
        files = sorted(p for p in folder.iterdir()
                       if p.is_file() and p.suffix.lower() in _IMAGE_SUFFIXES)
        paths += files
        labels += [label] * len(files)
    X = np.empty(len(paths), dtype=object)
    X[:] = paths
    return Dataset(
        X=X,
        y=np.array(labels, dtype=np.int64),
        feature_names=[],
        name=f"office31/{domain}",
        meta={"class_names": class_names, "domain": domain, "root": str(found),
              "checksum": "none"},
    )


def load_office31_images(paths, size: int = 224) -> np.ndarray:
    """Decode images to RGB and resize each to ``size`` x ``size`` (bilinear, no crop).

    Parameters
    ----------
    paths : sequence of path
        E.g. ``load_office31(...).X`` or a slice of it.
    size : int
        Output height and width in pixels; an image already of that size is not resampled.

    Returns
    -------
    uint8 array (len(paths), size, size, 3)
    """
    if size < 1:
        raise ValueError(f"size must be >= 1, got {size}")
    out = np.empty((len(paths), size, size, 3), dtype=np.uint8)
    for i, path in enumerate(paths):
        with Image.open(path) as img:
            rgb = img.convert("RGB")
        if rgb.size != (size, size):
            rgb = rgb.resize((size, size), Image.Resampling.BILINEAR)
        out[i] = np.asarray(rgb)
    return out
