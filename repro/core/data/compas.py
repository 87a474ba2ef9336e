"""ProPublica COMPAS, ``compas-scores-two-years.csv`` (propublica/compas-analysis @ bafff5da).

Format: RFC-4180 CSV with a header of 53 names and 7,214 rows. Two names occur twice
(``decile_score`` at columns 11 and 39, ``priors_count`` at 14 and 48); the duplicated
columns hold identical values and both are kept, so ``feature_names`` is the header verbatim.
Empty fields mean "not applicable / missing" (e.g. ``r_days_from_arrest`` for people who were
not re-arrested); ``violent_recid`` is empty in every row.

Counts: 7,214 rows; ``two_year_recid`` 3,963 zeros / 3,251 ones; ``sex`` 5,819 Male /
1,395 Female; ``race`` 3,696 African-American, 2,454 Caucasian, 637 Hispanic, 377 Other,
32 Asian, 18 Native American.
"""

from __future__ import annotations

import csv

import numpy as np

from .base import Dataset
from .store import fetch, record

_DATASET, _FILE = "compas", "compas-scores-two-years.csv"


def _as_float_column(values: list[str]) -> np.ndarray | None:
    """The column as float64 (empty -> NaN), or None if some value is not a number."""
    out = np.full(len(values), np.nan)
    try:
        for i, v in enumerate(values):
            if v != "":
                out[i] = float(v)
    except ValueError:
        return None
    return out


def load_compas() -> Dataset:
    """Load the two-year COMPAS file with every column, unfiltered.

    No row is dropped: ProPublica's analysis filter (``days_b_screening_arrest`` within +-30,
    ``is_recid != -1``, ``c_charge_degree != "O"``, ``score_text != "N/A"``) is paper-specific
    and belongs to the paper's preprocessing.

    Returns
    -------
    Dataset
        ``X`` : object array (7214, 53), all columns in file order. A column whose non-empty
        values all parse as numbers holds Python floats with NaN for empty fields (listed in
        ``meta["numeric_columns"]`` by index, since names repeat); any other column holds the
        strings as written, empty fields as ``""``.
        ``y`` : int64, ``two_year_recid`` (1 = re-offended within two years).
        ``feature_names`` : the 53 header names verbatim (``y``'s column included).
        ``groups`` : ``{"race": ..., "sex": ...}``, object arrays of the raw strings.
        ``meta`` : ``numeric_columns`` (indices), ``files`` (relative path -> sha256).
    """
    with open(fetch(_DATASET, _FILE), newline="") as f:
        header, *rows = list(csv.reader(f))
    bad = [i for i, r in enumerate(rows) if len(r) != len(header)]
    if bad:
        raise ValueError(f"{_DATASET}/{_FILE}: data row {bad[0]} has {len(rows[bad[0]])} "
                         f"fields, header has {len(header)}")

    X = np.array(rows, dtype=object)
    numeric_columns = []
    for j in range(len(header)):
        col = _as_float_column(X[:, j].tolist())
        if col is not None:
            X[:, j] = col.tolist()
            numeric_columns.append(j)

    target = header.index("two_year_recid")
    y = X[:, target].astype(np.int64)
    return Dataset(
        X=X,
        y=y,
        feature_names=list(header),
        name="compas/two_years",
        groups={
            "race": X[:, header.index("race")].copy(),
            "sex": X[:, header.index("sex")].copy(),
        },
        meta={
            "numeric_columns": numeric_columns,
            "target_column": target,
            "files": {f"{_DATASET}/{_FILE}": record(_DATASET, _FILE).sha256},
        },
    )
