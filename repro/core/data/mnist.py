"""MNIST (LeCun & Cortes), the four gzipped IDX files.

Format (http://yann.lecun.com/exdb/mnist/): an IDX file is a big-endian header followed by the
raw array in C order. The header is a 4-byte magic number ``0x00 0x00 TYPE NDIM`` (TYPE
``0x08`` = unsigned byte) and then NDIM 4-byte sizes. Images are ``0x00000803`` (n, 28, 28),
labels ``0x00000801`` (n,). Pixels are 0 (background) to 255 (ink).

Counts: train 60,000 images + 60,000 labels, test 10,000 + 10,000; labels 0-9.
"""

from __future__ import annotations

import gzip

import numpy as np

from .base import Dataset
from .store import fetch, record

_DATASET = "mnist"
_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}
IMAGES_MAGIC = 0x00000803
LABELS_MAGIC = 0x00000801


def parse_idx_ubyte(raw: bytes, magic: int, source: str = "<bytes>") -> np.ndarray:
    """Decode an uncompressed IDX file of unsigned bytes whose magic number must be ``magic``.

    Raises
    ------
    ValueError
        If the magic number differs (e.g. a labels file given for images, or a file that is
        not IDX at all), or if the payload length disagrees with the header's sizes.
    """
    if len(raw) < 4:
        raise ValueError(f"{source}: {len(raw)} bytes, too short for an IDX header")
    found = int.from_bytes(raw[:4], "big")
    if found != magic:
        raise ValueError(f"{source}: bad IDX magic number 0x{found:08x}, expected 0x{magic:08x}")
    ndim = magic & 0xFF
    header = 4 + 4 * ndim
    shape = tuple(int(s) for s in np.frombuffer(raw, dtype=">u4", count=ndim, offset=4))
    data = np.frombuffer(raw, dtype=np.uint8, offset=header)
    if data.size != int(np.prod(shape)):
        raise ValueError(f"{source}: header says shape {shape} ({int(np.prod(shape))} bytes) "
                         f"but {data.size} bytes follow it")
    # frombuffer returns a read-only view of `raw`; copy so callers own a writable array.
    return data.reshape(shape).copy()


def load_mnist(split: str = "train") -> Dataset:
    """Load one MNIST split.

    Parameters
    ----------
    split : {"train", "test"}
        60,000 or 10,000 images.

    Returns
    -------
    Dataset
        ``X`` : uint8 (n, 28, 28); ``y`` : uint8 (n,), digits 0-9; ``feature_names`` empty;
        ``meta`` : ``label_names`` (``"0"``..``"9"``), ``files`` (relative path -> sha256).
    """
    if split not in _FILES:
        raise ValueError(f"split must be one of {sorted(_FILES)}, got {split!r}")
    images_file, labels_file = _FILES[split]
    with gzip.open(fetch(_DATASET, images_file)) as f:
        X = parse_idx_ubyte(f.read(), IMAGES_MAGIC, f"{_DATASET}/{images_file}")
    with gzip.open(fetch(_DATASET, labels_file)) as f:
        y = parse_idx_ubyte(f.read(), LABELS_MAGIC, f"{_DATASET}/{labels_file}")
    return Dataset(
        X=X,
        y=y,
        feature_names=[],
        name=f"mnist/{split}",
        meta={
            "label_names": [str(d) for d in range(10)],
            "files": {f"{_DATASET}/{f}": record(_DATASET, f).sha256
                      for f in (images_file, labels_file)},
        },
    )
