"""LIBSVM / svmlight sparse text format, and the a8a data set (Platt's Adult encoding).

Format: one example per line, ``<label> <index>:<value> <index>:<value> ...``, indices
1-based and increasing, absent indices meaning 0. A ``#`` starts a comment (svmlight).

a8a (https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary.html#a8a): UCI Adult with
the 14 attributes binarised into 123 indicator features (continuous ones quantised), labels
-1 (<=50K) / +1 (>50K). ``a8a``: 22,696 rows (-1: 17,190 / +1: 5,506); ``a8a.t``: 9,865 rows
(-1: 7,530 / +1: 2,335). The largest index used in ``a8a.t`` is 122, so the width must be
given (123) rather than inferred, or the two splits would not line up.
"""

from __future__ import annotations

import numpy as np

from .base import Dataset
from .store import fetch, record

A8A_FEATURES = 123


def parse_libsvm(text: str, n_features: int | None = None,
                 source: str = "<text>") -> tuple[np.ndarray, np.ndarray]:
    """Parse LIBSVM text into a dense ``(X, y)``, both float64.

    One Python pass over the lines splits off the label and counts ``:``; all index/value
    tokens are then converted in a single numpy call and scattered into ``X``.

    Parameters
    ----------
    text : str
        File contents.
    n_features : int, optional
        Number of columns; default the largest index present.
    source : str
        Name used in error messages.

    Returns
    -------
    X : float64 (n, n_features)
    y : float64 (n,), labels as written.
    """
    lines = text.splitlines()
    if "#" in text:
        lines = [ln.split("#", 1)[0] for ln in lines]
    parts = [ln.split(None, 1) for ln in lines]
    parts = [p for p in parts if p]
    try:
        y = np.array([p[0] for p in parts], dtype=np.float64)
    except ValueError as exc:
        raise ValueError(f"{source}: a label is not a number ({exc})") from None
    bodies = [p[1] if len(p) == 2 else "" for p in parts]
    counts = np.fromiter((b.count(":") for b in bodies), dtype=np.int64, count=len(bodies))
    tokens = " ".join(bodies).replace(":", " ").split()
    if len(tokens) != 2 * counts.sum():
        raise ValueError(f"{source}: some feature is not written as <index>:<value>")
    try:
        pairs = np.array(tokens, dtype=np.float64).reshape(-1, 2)
    except ValueError as exc:
        raise ValueError(f"{source}: bad index or value ({exc})") from None
    index = pairs[:, 0].astype(np.int64)
    if not np.array_equal(index, pairs[:, 0]) or (index.size and index.min() < 1):
        raise ValueError(f"{source}: feature indices must be integers >= 1 (1-based)")
    largest = int(index.max()) if index.size else 0
    if n_features is None:
        n_features = largest
    elif largest > n_features:
        raise ValueError(f"{source}: index {largest} exceeds n_features={n_features}")
    X = np.zeros((len(parts), n_features))
    X[np.repeat(np.arange(len(parts)), counts), index - 1] = pairs[:, 1]
    return X, y


def load_libsvm(dataset: str = "libsvm_a8a", file: str = "a8a",
                n_features: int | None = A8A_FEATURES) -> Dataset:
    """Load a LIBSVM-format manifest file ``<dataset>/<file>`` as a dense Dataset.

    Parameters
    ----------
    dataset, file : str
        Manifest entry (see :func:`repro.core.data.store.fetch`).
    n_features : int or None
        Width of ``X``; None infers it from the largest index in this file only.

    Returns
    -------
    Dataset
        ``X`` float64 (n, n_features), ``y`` float64 labels as written, ``feature_names``
        ``"f1"``..``"f<n_features>"`` (the 1-based LIBSVM indices), ``meta["files"]``.
    """
    X, y = parse_libsvm(fetch(dataset, file).read_text(), n_features, f"{dataset}/{file}")
    return Dataset(
        X=X,
        y=y,
        feature_names=[f"f{i}" for i in range(1, X.shape[1] + 1)],
        name=f"{dataset}/{file}",
        meta={"files": {f"{dataset}/{file}": record(dataset, file).sha256}},
    )


def load_a8a(split: str = "train") -> Dataset:
    """Load a8a (``"train"``: file ``a8a``, 22,696 rows) or a8a.t (``"test"``, 9,865 rows).

    Returns
    -------
    Dataset
        ``X`` float64 (n, 123) of 0/1 indicators; ``y`` int64 in {-1, +1} (+1 = >50K);
        ``meta["label_names"]`` = {-1: "<=50K", 1: ">50K"}.
    """
    files = {"train": "a8a", "test": "a8a.t"}
    if split not in files:
        raise ValueError(f"split must be one of {sorted(files)}, got {split!r}")
    raw = load_libsvm("libsvm_a8a", files[split], A8A_FEATURES)
    return Dataset(
        X=raw.X,
        y=raw.y.astype(np.int64),
        feature_names=raw.feature_names,
        name=f"a8a/{split}",
        meta={**raw.meta, "label_names": {-1: "<=50K", 1: ">50K"}},
    )
