"""Palmer penguins (Gorman, Williams & Fraser 2014), ``penguins.csv`` of palmerpenguins.

Format: CSV with header ``species,island,bill_length_mm,bill_depth_mm,flipper_length_mm,
body_mass_g,sex,year``, 344 rows; ``NA`` marks a missing value (R's convention).

Counts: species Adelie 152, Gentoo 124, Chinstrap 68; island Biscoe 168, Dream 124,
Torgersen 52; ``NA`` in 2 rows of each of the four measurements (the same two penguins) and in
11 rows of ``sex`` (male 168, female 165).
"""

from __future__ import annotations

import csv

import numpy as np

from .base import Dataset
from .store import fetch, record

_DATASET, _FILE = "penguins", "penguins.csv"
NUMERIC_FEATURES = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g", "year"]


def load_penguins() -> Dataset:
    """Load the 344 penguins with all seven non-species columns.

    Returns
    -------
    Dataset
        ``X`` : object array (344, 7), columns ``island, bill_length_mm, bill_depth_mm,
        flipper_length_mm, body_mass_g, sex, year``. Numeric columns hold Python floats with
        NaN for ``NA``; the categorical ``island`` and ``sex`` hold the strings as written, so
        a missing sex stays visible as the string ``"NA"`` (as ``"?"`` does in Adult).
        ``y`` : int64, index into ``meta["label_names"]`` = the sorted species names
        ``["Adelie", "Chinstrap", "Gentoo"]`` (counts 152, 68, 124).
        ``groups`` : ``{"sex": ..., "island": ...}``, object arrays of the raw strings.
        ``meta`` : ``label_names``, ``numeric_features``, ``missing_value`` (``"NA"``),
        ``files`` (relative path -> sha256).
    """
    with open(fetch(_DATASET, _FILE), newline="") as f:
        header, *rows = list(csv.reader(f))
    table = np.array(rows, dtype=object)
    if table.ndim != 2 or table.shape[1] != len(header):
        raise ValueError(f"{_DATASET}/{_FILE}: rows do not all have {len(header)} fields")

    species = table[:, header.index("species")].astype(str)
    label_names, y = np.unique(species, return_inverse=True)

    feature_names = [h for h in header if h != "species"]
    X = table[:, [header.index(h) for h in feature_names]]
    for name in NUMERIC_FEATURES:
        j = feature_names.index(name)
        col = X[:, j].astype(str)
        X[:, j] = np.where(col == "NA", "nan", col).astype(np.float64).tolist()

    return Dataset(
        X=X,
        y=y.astype(np.int64),
        feature_names=feature_names,
        name="penguins/all",
        groups={
            "sex": X[:, feature_names.index("sex")].copy(),
            "island": X[:, feature_names.index("island")].copy(),
        },
        meta={
            "label_names": label_names.tolist(),
            "numeric_features": list(NUMERIC_FEATURES),
            "missing_value": "NA",
            "files": {f"{_DATASET}/{_FILE}": record(_DATASET, _FILE).sha256},
        },
    )
