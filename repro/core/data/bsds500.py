"""BSDS500 natural images (Arbelaez et al. 2011), the background source of MNIST-M.

Files: ``bsds500/BSR/BSDS500/data/images/<split>/<id>.jpg`` as in ``BSR_bsds500.tgz``; train
200, val 100, test 200 JPEGs, each 481x321 or 321x481 RGB. The copies in the manifest come
from Sisso16/ssn_pytorch; 63 of the 200 train images are stored rotated relative to the
upstream archive (manifest ``pristine: false``), which matters little for MNIST-M's random
crops but means those files are not the upstream bytes. No upstream per-image checksum
exists; the sha256 checked is that of the placed copy.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from .store import FileRecord, fetch, manifest

_DATASET = "bsds500"
_PREFIX = "BSR/BSDS500/data/images/"
SPLITS = ("train", "val", "test")


def _records(split: str) -> list[FileRecord]:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {list(SPLITS)}, got {split!r}")
    folder = f"{_PREFIX}{split}/"
    recs = [r for (d, f), r in manifest().items()
            if d == _DATASET and f.startswith(folder) and f.endswith(".jpg")]
    # Numeric ids sort like the upstream file listing of ``ls | sort -n``, stable across OSes.
    return sorted(recs, key=lambda r: int(Path(r.file).stem))


def list_bsds500(split: str = "train") -> list[Path]:
    """Verified local paths of the split's JPEGs, sorted by numeric image id.

    Parameters
    ----------
    split : {"train", "val", "test"}
        200, 100 or 200 images.
    """
    return [fetch(_DATASET, r.file) for r in _records(split)]


def bsds500_meta(split: str = "train") -> dict:
    """What the manifest says about the split's files.

    Returns
    -------
    dict
        ``files`` (manifest file names in :func:`list_bsds500` order), ``ids`` (image ids as
        strings), ``not_pristine`` (file names, not upstream bytes: the 63 rotated train images;
        empty for val and test), ``sha256`` (file name -> sha256), ``upstream`` (archive URL).
    """
    recs = _records(split)
    return {
        "files": [r.file for r in recs],
        "ids": [Path(r.file).stem for r in recs],
        "not_pristine": [r.file for r in recs if not r.pristine],
        "sha256": {r.file: r.sha256 for r in recs},
        "upstream": recs[0].upstream if recs else None,
    }


def load_bsds500_image(path: str | Path) -> np.ndarray:
    """Decode one JPEG to a uint8 array of shape (H, W, 3), RGB, as stored (no rotation)."""
    with Image.open(path) as img:
        return np.asarray(img.convert("RGB"), dtype=np.uint8).copy()
