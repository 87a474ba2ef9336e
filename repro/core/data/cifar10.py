"""CIFAR-10 (Krizhevsky 2009), the "python version" batches.

CIFAR-10 is not in the data manifest (it does not fit the data budget and no reachable copy
exists, see ``shared/data/MANIFEST.md``), so it is read from a folder the user provides, in the
layout of the upstream archive https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz once
extracted: ``cifar-10-batches-py/{data_batch_1..5, test_batch, batches.meta}``.

Format: each batch is a pickle (written by Python 2) of a dict with ``bytes`` keys:
``b"data"`` a uint8 array (10000, 3072) whose rows are one image as three 1024-byte planes
(R, G, B), each plane 32x32 row-major; ``b"labels"`` a list of 10,000 ints in 0-9;
``b"filenames"`` and ``b"batch_label"``. ``batches.meta`` holds ``b"label_names"`` (10 bytes
strings: airplane, automobile, bird, cat, deer, dog, frog, horse, ship, truck).

Counts: train 50,000 images (5 batches, 5,000 per class), test 10,000 (1,000 per class).

No sha256 check is possible: the files are not in the manifest and upstream publishes only the
md5 of the archive (c58f30108f718f92721af3b95e74349a), not of the extracted batches. The
pickles are read with an unpickler that only admits the numpy globals an array needs, so a
foreign pickle cannot run code.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np

from .base import Dataset
from .store import DataFileMissing, cache_dir

UPSTREAM_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
ENV_VAR = "FEDREPRO_CIFAR10"
FOLDER = "cifar-10-batches-py"
_BATCHES = {
    "train": [f"data_batch_{i}" for i in range(1, 6)],
    "test": ["test_batch"],
}
# Globals a pickled numpy array refers to (numpy 2 renamed ``numpy.core`` to ``numpy._core``;
# protocol 5 uses ``_frombuffer``), plus ``_codecs.encode``, which Python 3 uses for ``bytes``
# at protocols < 3, so that batches re-pickled at the upstream protocol 2 also load.
_ALLOWED_GLOBALS = {
    *((f"numpy.{core}.multiarray", name)
      for core in ("core", "_core") for name in ("_reconstruct", "scalar")),
    ("numpy.core.numeric", "_frombuffer"),
    ("numpy._core.numeric", "_frombuffer"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("_codecs", "encode"),
}


class _ArrayOnlyUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) not in _ALLOWED_GLOBALS:
            raise pickle.UnpicklingError(f"refusing global {module}.{name} in a CIFAR-10 batch")
        if module.startswith("numpy.core.") and hasattr(np, "_core"):
            module = "numpy._core." + module.removeprefix("numpy.core.")
        return super().find_class(module, name)


def read_batch(path: Path) -> dict:
    """Unpickle one batch file with ``bytes`` keys, as written by Python 2."""
    with open(path, "rb") as f:
        return _ArrayOnlyUnpickler(f, encoding="bytes").load()


def candidate_roots(root: Path | str | None = None) -> list[tuple[str, Path]]:
    """The places looked for the ``cifar-10-batches-py`` folder, as ``(label, path)``.

    With ``root`` given only ``root`` is looked at (as the batches folder itself or as its
    parent); otherwise ``$FEDREPRO_CIFAR10`` (same rule) and then
    ``<cache_dir()>/cifar10/cifar-10-batches-py``.
    """
    places: list[tuple[str, Path]] = []
    if root is not None:
        places += [("root", Path(root)), ("root", Path(root) / FOLDER)]
    else:
        if os.environ.get(ENV_VAR):
            env = Path(os.environ[ENV_VAR])
            places += [(f"${ENV_VAR}", env), (f"${ENV_VAR}", env / FOLDER)]
        places.append(("cache", cache_dir() / "cifar10" / FOLDER))
    return places


def find_cifar10(root: Path | str | None = None, split: str = "train") -> Path:
    """The first candidate folder holding ``batches.meta`` and the split's batches.

    Raises
    ------
    DataFileMissing
        Naming every place looked and the upstream address.
    """
    needed = ["batches.meta", *_BATCHES[split]]
    places = candidate_roots(root)
    for _, folder in places:
        if all((folder / name).is_file() for name in needed):
            return folder
    looked = "\n".join(f"  - {label}: {folder}" for label, folder in places)
    if root is None and not os.environ.get(ENV_VAR):
        looked += f"\n  - ${ENV_VAR}: not set"
    raise DataFileMissing(
        f"CIFAR-10 ({split}: {', '.join(needed)}) not found. Looked in:\n{looked}\n"
        f"CIFAR-10 is not in the data manifest and is never downloaded automatically. "
        f"Download {UPSTREAM_URL} (md5 c58f30108f718f92721af3b95e74349a), extract it, and "
        f"either set {ENV_VAR}=<folder containing {FOLDER}> or extract it into "
        f"{cache_dir() / 'cifar10'}."
    )


def load_cifar10(root: Path | str | None = None, split: str = "train") -> Dataset:
    """Load one CIFAR-10 split from the upstream python batches.

    Parameters
    ----------
    root : path, optional
        The ``cifar-10-batches-py`` folder or its parent. Default: ``$FEDREPRO_CIFAR10``, then
        ``<cache_dir()>/cifar10/cifar-10-batches-py``.
    split : {"train", "test"}
        ``data_batch_1``..``data_batch_5`` in that order (50,000 images) or ``test_batch``
        (10,000).

    Returns
    -------
    Dataset
        ``X`` : uint8 (n, 32, 32, 3), HWC RGB; ``y`` : uint8 (n,) in 0-9, in file order;
        ``meta`` : ``label_names`` (from ``batches.meta``), ``filenames``, ``folder``,
        ``checksum`` (``"none"``, see the module docstring).

    Raises
    ------
    DataFileMissing
        If no candidate folder holds the files (the message lists every place looked).
    """
    if split not in _BATCHES:
        raise ValueError(f"split must be one of {sorted(_BATCHES)}, got {split!r}")
    folder = find_cifar10(root, split)
    images, labels, filenames = [], [], []
    for name in _BATCHES[split]:
        batch = read_batch(folder / name)
        data = np.asarray(batch[b"data"], dtype=np.uint8)
        if data.ndim != 2 or data.shape[1] != 3 * 32 * 32 or len(batch[b"labels"]) != len(data):
            raise ValueError(f"{folder / name}: expected b'data' (n, 3072) and n labels, got "
                             f"{data.shape} and {len(batch[b'labels'])}")
        # Rows are (channel, row, col) planes; move channels last for the HWC convention.
        images.append(data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
        labels.append(np.asarray(batch[b"labels"], dtype=np.uint8))
        filenames += [f.decode() if isinstance(f, bytes) else f
                      for f in batch.get(b"filenames", [])]
    label_names = [n.decode() if isinstance(n, bytes) else n
                   for n in read_batch(folder / "batches.meta")[b"label_names"]]
    return Dataset(
        X=np.ascontiguousarray(np.concatenate(images)),
        y=np.concatenate(labels),
        feature_names=[],
        name=f"cifar10/{split}",
        meta={
            "label_names": label_names,
            "filenames": filenames,
            "folder": str(folder),
            "checksum": "none",
        },
    )
