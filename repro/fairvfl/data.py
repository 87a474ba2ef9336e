"""Datasets of the Fair VFL papers: preprocessing, splits and the K = 6 party assignment.

docs/decisions.md#fairvfl-data. Every table is built from the raw upstream files through the core
loaders, then:

- labels ``y in {-1, +1}`` with ``y = +1`` the papers' *protected class*
  (docs/decisions.md#fairvfl-positive-class), so that ``N^s = {i : s_i = s, y_i = +1}`` of
  Definition 1 are the positives of each group;
- group ``s`` as a boolean array, ``True`` = group ``a`` (the first term of ``D = l^a - l^b``);
- numeric columns z-scored with *training* statistics (docs/decisions.md#fairvfl-scaling); one-hot
  columns stay 0/1;
- split of run ``r``: ``perm = Generator(PCG64(r)).permutation(n)``, the first ``n_train``
  rows train (docs/decisions.md#fairvfl-data, "identical random seeds" for every method of a run).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from repro.core.data.adult import load_adult
from repro.core.data.compas import load_compas
from repro.core.data.crime import load_crime
from repro.core.partition import vertical_split

DATASETS = ("adult", "compas", "crime")

# docs/decisions.md#fairvfl-partition: party 1 first, contiguous blocks. [C] and [J] differ for
# COMPAS and C&C (docs/decisions.md#fairvfl-compas-partition).
PARTY_SIZES = {
    "conf": {"adult": (19, 17, 17, 17, 17, 17), "compas": (6, 4, 4, 4, 4, 4),
             "crime": (19, 16, 16, 16, 16, 16)},
    "journal": {"adult": (19, 17, 17, 17, 17, 17), "compas": (16, 2, 2, 2, 2, 2),
                "crime": (49, 10, 10, 10, 10, 10)},
}
N_TRAIN = {"adult": 40_000, "compas": 4_800, "crime": 1_200}
# docs/decisions.md#fairvfl-cost: a uniform subsample of 5,000 rows, 4,000 train
SMOKE_ADULT = (5_000, 4_000)

_ADULT_CATEGORICAL = ("workclass", "education", "marital-status", "occupation",
                      "relationship", "race", "sex", "native-country")
_COMPAS_NUMERIC = ("age", "juv_fel_count", "juv_misd_count", "juv_other_count",
                   "priors_count", "days_b_screening_arrest", "c_days_from_compas",
                   "decile_score", "v_decile_score")
_COMPAS_ONE_HOT = {
    "sex": ("Female", "Male"),
    "age_cat": ("Less than 25", "25 - 45", "Greater than 45"),
    "race": ("African-American", "Caucasian"),
    "c_charge_degree": ("F", "M"),
    "score_text": ("Low", "Medium", "High"),
    "v_score_text": ("Low", "Medium", "High"),
}
_CRIME_DROP = ("state", "county", "community", "fold")  # communityname is not in X


@dataclass(frozen=True)
class Table:
    """A preprocessed (not yet scaled) table: float features, ``y in {-1,+1}``, ``s`` bool."""

    name: str
    X: np.ndarray
    y: np.ndarray
    s: np.ndarray
    feature_names: tuple[str, ...]
    numeric: tuple[int, ...]  # columns z-scored with training statistics
    files: dict


@dataclass(frozen=True)
class Split:
    """One run's train/test split, scaled, with the party blocks of
    docs/decisions.md#fairvfl-partition.
    """

    name: str
    X_train: np.ndarray
    y_train: np.ndarray
    s_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    s_test: np.ndarray
    blocks: tuple[np.ndarray, ...]
    feature_names: tuple[str, ...]

    @property
    def n_train(self) -> int:
        return len(self.y_train)


def _one_hot(column: np.ndarray, categories) -> np.ndarray:
    return (column[:, None] == np.asarray(categories, dtype=object)[None, :]).astype(np.float64)


@cache
def adult_table() -> Table:
    """UCI Adult, 45,222 x 104 (docs/decisions.md#fairvfl-adult): 6 numeric columns, then 98 one-hot
    columns with the categories of each attribute in sorted order (sex_Female = column 61, sex_Male
    = 62).
    """
    parts = [load_adult("train"), load_adult("test")]
    X = np.concatenate([p.X for p in parts])
    y01 = np.concatenate([p.y for p in parts])
    names = parts[0].feature_names
    keep = ~np.any(X == "?", axis=1)
    X, y01 = X[keep], y01[keep]
    numeric = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss",
               "hours-per-week"]
    cols = [X[:, [names.index(c) for c in numeric]].astype(np.float64)]
    feature_names = list(numeric)
    for attr in _ADULT_CATEGORICAL:
        col = X[:, names.index(attr)]
        cats = sorted(set(col.tolist()))
        cols.append(_one_hot(col, cats))
        feature_names += [f"{attr}_{c}" for c in cats]
    sex = X[:, names.index("sex")]
    files = {**parts[0].meta["files"], **parts[1].meta["files"]}
    return Table("adult", np.concatenate(cols, axis=1), np.where(y01 == 1, 1, -1),
                 sex == "Female", tuple(feature_names), tuple(range(6)), files)


def _days(end: np.ndarray, start: np.ndarray) -> np.ndarray:
    to_dt = np.vectorize(lambda v: np.datetime64(str(v).replace(" ", "T"), "s"))
    return (to_dt(end) - to_dt(start)).astype(np.float64) / 86_400.0


@cache
def compas_table() -> Table:
    """ProPublica COMPAS after the ProPublica filters and race in {AA, Caucasian}: 5,278 x 26
    (the feature list is a reconstruction, docs/decisions.md#fairvfl-compas-features). ``y = +1``
    iff no two-year recidivism; group a = African-American.
    """
    d = load_compas()
    h = d.feature_names
    X = d.X

    def col(name):
        return X[:, h.index(name)]

    dbsa = col("days_b_screening_arrest").astype(np.float64)
    with np.errstate(invalid="ignore"):
        keep = ((dbsa >= -30) & (dbsa <= 30) & (col("is_recid").astype(np.float64) != -1)
                & (col("c_charge_degree") != "O") & (col("score_text") != "N/A")
                & np.isin(col("race"), ["African-American", "Caucasian"]))
    X = X[keep]

    def colk(name):
        return X[:, h.index(name)]

    numeric = [colk(c).astype(np.float64) for c in _COMPAS_NUMERIC]
    numeric.append(_days(colk("c_jail_out"), colk("c_jail_in")))
    numeric.append(_days(colk("out_custody"), colk("in_custody")))
    names = [*_COMPAS_NUMERIC, "jail_days", "custody_days"]
    blocks = [np.stack(numeric, axis=1)]
    for attr, cats in _COMPAS_ONE_HOT.items():
        blocks.append(_one_hot(colk(attr), cats))
        names += [f"{attr}_{c}" for c in cats]
    features = np.concatenate(blocks, axis=1)
    if not np.all(np.isfinite(features)):
        raise ValueError("compas: a feature is missing after the ProPublica filters")
    recid = colk("two_year_recid").astype(np.float64)
    return Table("compas", features, np.where(recid == 0, 1, -1),
                 colk("race") == "African-American", tuple(names), tuple(range(11)),
                 dict(d.meta["files"]))


@cache
def crime_table() -> Table:
    """UCI Communities & Crime: 1,994 x 99 (docs/decisions.md#fairvfl-crime), features as given in
    [0, 1] (no scaling). ``y = +1`` iff ViolentCrimesPerPop <= 0.375 (low crime, the protected
    class); group a = racepctblack > 0.06.
    """
    d = load_crime()
    names = list(d.feature_names)
    drop = [names.index(c) for c in _CRIME_DROP]
    drop += [j for j in range(len(names)) if np.isnan(d.X[:, j]).any() and j not in drop]
    keep = [j for j in range(len(names)) if j not in drop]
    X = d.X[:, keep]
    s = d.groups["racepctblack"] > 0.06
    return Table("crime", X, np.where(d.y <= 0.375, 1, -1), s,
                 tuple(names[j] for j in keep), (), dict(d.meta["files"]))


TABLES = {"adult": adult_table, "compas": compas_table, "crime": crime_table}


def make_split(dataset: str, run: int, *, version: str = "conf", smoke: bool = False) -> Split:
    """Run ``run``'s split of ``dataset`` with training-statistics z-scoring and party blocks.

    ``smoke`` (ADULT only, docs/decisions.md#fairvfl-cost): the first 5,000 entries of the run's
    permutation, 4,000 of them for training; the other datasets are used in full at every scale.
    """
    table = TABLES[dataset]()
    perm = np.random.Generator(np.random.PCG64(run)).permutation(len(table.y))
    n_train = N_TRAIN[dataset]
    if smoke and dataset == "adult":
        perm, n_train = perm[:SMOKE_ADULT[0]], SMOKE_ADULT[1]
    tr, te = perm[:n_train], perm[n_train:]
    X_train, X_test = table.X[tr].copy(), table.X[te].copy()
    if table.numeric:
        num = list(table.numeric)
        mean = X_train[:, num].mean(axis=0)
        std = X_train[:, num].std(axis=0)
        std = np.where(std > 0, std, 1.0)
        X_train[:, num] = (X_train[:, num] - mean) / std
        X_test[:, num] = (X_test[:, num] - mean) / std
    sizes = PARTY_SIZES[version][dataset]
    blocks = tuple(vertical_split(table.X.shape[1], len(sizes), sizes=list(sizes)))
    return Split(dataset, X_train, table.y[tr], table.s[tr], X_test, table.y[te], table.s[te],
                 blocks, table.feature_names)


def data_files(dataset: str) -> tuple[tuple[str, str], ...]:
    """``(dataset, file)`` pairs read for ``dataset`` (the Experiment ``data`` field)."""
    return {"adult": (("adult", "adult.data"), ("adult", "adult.test")),
            "compas": (("compas", "compas-scores-two-years.csv"),),
            "crime": (("communities_crime", "communities.data"),
                      ("communities_crime", "communities.names"))}[dataset]
