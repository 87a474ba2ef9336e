"""UCI Adult (census income), the raw ``adult.data`` / ``adult.test`` files.

Format: comma-plus-space separated text, 15 columns per row (the 14 attributes of
``adult.names`` and the income label), no header. ``adult.test`` starts with one line
``|1x3 Cross validator`` and writes its labels with a trailing dot (``<=50K.``); both files end
with one blank line. Missing values are ``?`` and occur only in the categorical columns
``workclass``, ``occupation`` and ``native-country``.

Counts (``shared/data/MANIFEST.md``): train 32,561 rows (24,720 ``<=50K`` / 7,841 ``>50K``;
2,399 rows contain ``?``), test 16,281 rows (12,435 / 3,846; 1,221 rows contain ``?``).
"""

from __future__ import annotations

import numpy as np

from .base import Dataset
from .store import fetch, record

FEATURE_NAMES = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country",
]
NUMERIC_FEATURES = [
    "age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week",
]
_FILES = {"train": "adult.data", "test": "adult.test"}


def load_adult(split: str = "train") -> Dataset:
    """Load one split of UCI Adult as raw column values.

    Parameters
    ----------
    split : {"train", "test"}
        ``"train"`` reads ``adult/adult.data`` (32,561 rows), ``"test"`` reads
        ``adult/adult.test`` (16,281 rows).

    Returns
    -------
    Dataset
        ``X`` : object array (n, 14), columns in the order of ``FEATURE_NAMES``; the six
        ``NUMERIC_FEATURES`` hold Python floats, the others the stripped strings as written.
        Missing values stay visible as the string ``"?"`` (they are all in categorical
        columns; a ``"?"`` in a numeric column would become NaN).
        ``y`` : int64, 1 for ``>50K`` and 0 for ``<=50K`` (test labels lose their trailing dot).
        ``groups`` : ``{"sex": ..., "race": ...}``, object arrays of the raw strings.
        ``meta`` : ``label_names`` (``["<=50K", ">50K"]``), ``numeric_features``,
        ``missing_value`` (``"?"``), ``files`` (relative path -> sha256).
    """
    if split not in _FILES:
        raise ValueError(f"split must be one of {sorted(_FILES)}, got {split!r}")
    file = _FILES[split]
    lines = fetch("adult", file).read_text().splitlines()
    if split == "test":
        if not lines[0].startswith("|"):
            raise ValueError(f"adult/{file}: expected a '|1x3 Cross validator' first line")
        lines = lines[1:]
    # Only the trailing blank line is dropped; any other malformed row is an error below.
    # Fields are separated by ", " throughout, so splitting on it leaves nothing to strip.
    rows = [line.split(", ") for line in lines if line.strip()]
    bad = [i for i, r in enumerate(rows) if len(r) != 15]
    if bad:
        raise ValueError(f"adult/{file}: row {bad[0]} has {len(rows[bad[0]])} fields, not 15")
    table = np.array(rows, dtype=str)

    labels = np.char.rstrip(table[:, 14], ".")
    unknown = set(np.unique(labels)) - {"<=50K", ">50K"}
    if unknown:
        raise ValueError(f"adult/{file}: unexpected labels {sorted(unknown)}")
    y = (labels == ">50K").astype(np.int64)

    X = table[:, :14].astype(object)
    for name in NUMERIC_FEATURES:
        j = FEATURE_NAMES.index(name)
        col = table[:, j]
        values = np.full(len(col), np.nan)
        present = col != "?"
        values[present] = col[present].astype(np.float64)
        X[:, j] = values.tolist()

    return Dataset(
        X=X,
        y=y,
        feature_names=list(FEATURE_NAMES),
        name=f"adult/{split}",
        groups={
            "sex": table[:, FEATURE_NAMES.index("sex")].astype(object),
            "race": table[:, FEATURE_NAMES.index("race")].astype(object),
        },
        meta={
            "label_names": ["<=50K", ">50K"],
            "numeric_features": list(NUMERIC_FEATURES),
            "missing_value": "?",
            "files": {f"adult/{file}": record("adult", file).sha256},
        },
    )
