"""UCI Communities and Crime (Redmond 2009), ``communities.data`` + ``communities.names``.

Format: ``communities.data`` is comma separated with CRLF line endings (as upstream), 1,994
rows x 128 attributes, no header; ``?`` marks a missing value. The attribute names and types
come from the 128 ``@attribute NAME TYPE`` lines of ``communities.names``: 127 are
``numeric`` (already scaled to [0, 1] upstream, except the identifiers ``state``, ``county``,
``community`` and ``fold``) and one, ``communityname``, is ``string``. The last attribute,
``ViolentCrimesPerPop``, is the regression target.

Counts of ``?``: 1 in ``OtherPerCap``, 1,675 in each of 22 LEMAS police columns, 1,174 in
``county``, 1,177 in ``community``; none elsewhere.
"""

from __future__ import annotations

import numpy as np

from .base import Dataset
from .store import fetch, record

_DATASET = "communities_crime"
TARGET = "ViolentCrimesPerPop"


def parse_attributes(names_text: str) -> list[tuple[str, str]]:
    """``(name, type)`` of every ``@attribute NAME TYPE`` line, in order."""
    attributes = []
    for line in names_text.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0].lower() == "@attribute":
            attributes.append((parts[1], parts[2].lower()))
    return attributes


def load_crime() -> Dataset:
    """Load Communities and Crime with every attribute, missing values as NaN.

    Returns
    -------
    Dataset
        ``X`` : float64 array (1994, 126), the 127 numeric attributes minus the target, in
        file order (identifiers ``state``, ``county``, ``community``, ``fold`` included; NaN
        where the file has ``?``).
        ``y`` : float64 (1994,), ``ViolentCrimesPerPop`` (the last column).
        ``feature_names`` : the 126 names of ``X``'s columns, from ``communities.names``.
        ``groups`` : ``{"racepctblack": ...}``, float64, the fraction of the population that
        is African American (a copy of that column of ``X``).
        ``meta`` : ``communityname`` (object array of the 1,994 strings, the one non-numeric
        attribute, kept out of ``X`` so that ``X`` stays a float array), ``attributes`` (all
        128 ``(name, type)`` pairs), ``missing_counts`` (column name -> number of ``?``, only
        columns that have some), ``files`` (relative path -> sha256).
    """
    attributes = parse_attributes(fetch(_DATASET, "communities.names").read_text())
    names = [a for a, _ in attributes]
    if len(attributes) != 128 or names[-1] != TARGET:
        raise ValueError(f"{_DATASET}/communities.names: expected 128 @attribute lines ending "
                         f"with {TARGET}, found {len(attributes)} ending with {names[-1:]}")

    # splitlines() also eats the CR of the CRLF endings.
    lines = [ln for ln in fetch(_DATASET, "communities.data").read_text().splitlines() if ln]
    table = np.array([ln.split(",") for ln in lines], dtype=object)
    if table.ndim != 2 or table.shape[1] != len(attributes):
        raise ValueError(f"{_DATASET}/communities.data: rows do not all have "
                         f"{len(attributes)} fields")

    missing = table == "?"
    numeric = [j for j, (_, kind) in enumerate(attributes) if kind == "numeric"]
    values = np.where(missing[:, numeric], "nan", table[:, numeric]).astype(np.float64)
    target = numeric.index(len(attributes) - 1)
    X = np.delete(values, target, axis=1)
    feature_names = [names[j] for j in numeric if j != len(attributes) - 1]

    missing_counts = {names[j]: int(c) for j, c in enumerate(missing.sum(axis=0)) if c}
    string_columns = [j for j, (_, kind) in enumerate(attributes) if kind != "numeric"]
    return Dataset(
        X=X,
        y=values[:, target],
        feature_names=feature_names,
        name="communities_crime/all",
        groups={"racepctblack": X[:, feature_names.index("racepctblack")].copy()},
        meta={
            "communityname": table[:, names.index("communityname")].copy(),
            "string_columns": [names[j] for j in string_columns],
            "attributes": attributes,
            "missing_counts": missing_counts,
            "files": {f"{_DATASET}/{f}": record(_DATASET, f).sha256
                      for f in ("communities.data", "communities.names")},
        },
    )
