"""Data of Sections 5.1-5.2 rebuilt from the raw UCI files
(docs/decisions.md#constrfl-np-data, docs/decisions.md#constrfl-adult-b).

The authors' preprocessed CSVs ("Cleaned_UCI_Datasets", adult-b's ``adult_data.csv`` /
``adult_test1.csv``) are not public. Neyman-Pearson sets follow the Delgado-style
preprocessing (docs/decisions.md#constrfl-np-data): all rows, categorical attributes
-> integer codes (sorted category order, ``?`` its own category), missing numeric values -> column
mean, every column z-scored, no intercept. ``drop_first_row`` reproduces the reference loader eating
the first data row as a CSV header (docs/decisions.md#constrfl-np-first-row). The client split is
the reference rule (docs/decisions.md#constrfl-np-experiment): per class, a ``RandomState(10)``
shuffle, ``floor(N_c / n)`` rows per client, remainders dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from repro.core.data.adult import load_adult
from repro.core.data.uci_binary import load_breast_cancer_wisconsin, load_monks

__all__ = ["ENCODINGS", "NP_DATASETS", "NPData", "adult_b", "equal_class_split", "load_np_dataset",
           "synthetic_fairness",
           "synthetic_np"]

NP_DATASETS = ("breast-cancer-wisc", "adult-a", "monks-1")


@dataclass(frozen=True)
class NPData:
    name: str
    X: np.ndarray
    y: np.ndarray

    @property
    def d(self) -> int:
        return self.X.shape[1]


def _codes(col: np.ndarray) -> np.ndarray:
    cats = sorted(set(col.tolist()))
    index = {c: i for i, c in enumerate(cats)}
    return np.array([index[c] for c in col], dtype=float)


def _zscore(X: np.ndarray) -> np.ndarray:
    X = np.where(np.isnan(X), np.nanmean(X, axis=0), X)
    sd = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def _one_hot(col: np.ndarray) -> np.ndarray:
    """One 0/1 column per category (sorted category order, ``?`` its own category)."""
    codes = _codes(col).astype(int)
    return np.eye(int(codes.max()) + 1)[codes]


ENCODINGS = ("codes", "onehot")


def load_np_dataset(name: str, drop_first_row: bool = False,
                    encoding: str = "codes") -> NPData:
    """breast-cancer-wisc (699 rows, benign 0 / malignant 1), adult-a (``adult.data``, 32,561
    rows, ``<=50K`` 0 / ``>50K`` 1) or monks-1 (train + test, 556 rows, class as given).

    ``encoding`` is a reading of A1 for the categorical attributes: ``"codes"`` (one integer
    code column each, the tables' default) or ``"onehot"`` (one 0/1 column per category; adult-a
    d = 108, monks-1 d = 17; breast-cancer-wisc has no categorical attribute, d = 9 either way).
    Every column is z-scored afterwards.
    """
    if encoding not in ENCODINGS:
        raise ValueError(f"encoding must be one of {ENCODINGS}, got {encoding!r}")
    enc = _codes if encoding == "codes" else _one_hot

    def columns(cols):
        return np.concatenate([c[:, None] if c.ndim == 1 else c for c in cols], axis=1)

    if name == "breast-cancer-wisc":
        ds = load_breast_cancer_wisconsin()
        X, y = ds.X.astype(float), (ds.y == 4).astype(int)
    elif name == "adult-a":
        ds = load_adult("train")
        cols = []
        for j, fname in enumerate(ds.feature_names):
            col = ds.X[:, j]
            numeric = fname in ds.meta["numeric_features"]
            cols.append(col.astype(float) if numeric else enc(col.astype(str)))
        X, y = columns(cols), ds.y.astype(int)
    elif name == "monks-1":
        tr, te = load_monks(1, "train"), load_monks(1, "test")
        X = np.concatenate([tr.X, te.X])
        X = X.astype(float) if encoding == "codes" else columns(
            [enc(X[:, j].astype(str)) for j in range(X.shape[1])])
        y = np.concatenate([tr.y, te.y]).astype(int)
    else:
        raise ValueError(f"dataset must be one of {NP_DATASETS}, got {name!r}")
    if drop_first_row:
        X, y = X[1:], y[1:]
    return NPData(name, _zscore(X), y)


def equal_class_split(y: np.ndarray, n: int, seed: int = 10) -> list[tuple[np.ndarray, ...]]:
    """Reference split: ``[(class-0 row indices, class-1 row indices) for each client]``."""
    rs = np.random.RandomState(seed)
    rows0, rows1 = np.flatnonzero(y == 0), np.flatnonzero(y == 1)
    idx0, idx1 = list(range(len(rows0))), list(range(len(rows1)))
    rs.shuffle(idx0)
    rs.shuffle(idx1)
    m0, m1 = len(rows0) // n, len(rows1) // n
    return [(rows0[np.array(idx0[i * m0:(i + 1) * m0], dtype=int)],
             rows1[np.array(idx1[i * m1:(i + 1) * m1], dtype=int)]) for i in range(n)]


def synthetic_np(rng: np.random.Generator, rows: int = 600, d: int = 10) -> NPData:
    """Shipped fallback of docs/decisions.md#constrfl-cost: logistic labels, about 35 %
    positives.
    """
    X = rng.standard_normal((rows, d))
    w = rng.standard_normal(d)
    p = 1 / (1 + np.exp(-(X @ w - 1.0)))
    return NPData("synthetic-np", X, (rng.random(rows) < p).astype(int))


def synthetic_fairness(rng: np.random.Generator, n: int, per_class: int = 100,
                       server_per_class: int = 2000, d: int = 10):
    """The authors' synthetic recipe (commented block of their script,
    docs/decisions.md#constrfl-cost): class-0 rows U[0,1) - 0.3, class-1 rows U[0,1) - 0.7 in d-1
    dims plus a random 0/1 sensitive last feature; per client ``per_class`` rows of each class,
    server ``server_per_class``.
    """
    def rows(k):
        X0 = np.concatenate([rng.random((k, d - 1)) - 0.3, rng.integers(0, 2, (k, 1))], 1)
        X1 = np.concatenate([rng.random((k, d - 1)) - 0.7, rng.integers(0, 2, (k, 1))], 1)
        return np.concatenate([X0, X1]), np.concatenate([np.zeros(k), np.ones(k)])

    cl = [rows(per_class) for _ in range(n)]
    Xs, ys = rows(server_per_class)
    return (np.stack([c[0] for c in cl]), np.stack([c[1] for c in cl]), Xs.astype(float), ys)


_WORKCLASS = {"Federal-gov": "gov", "Local-gov": "gov", "State-gov": "gov",
              "Private": "private", "Self-emp-inc": "self", "Self-emp-not-inc": "self",
              "Without-pay": "other", "Never-worked": "other"}


def adult_b(split: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """adult-b rebuilt per docs/decisions.md#constrfl-adult-b: rows with ``?``
    dropped; native-country US 0/1; marital status couple 0 / single 1; one-hot relationship (6),
    race (5), grouped workclass (4), occupation (14); capital gain/loss -> indicator > 0; z-scored
    age, fnlwgt, education-num, hours-per-week; education dropped; sex (Female 0 / Male 1) moved
    LAST. Label ``salary``: '>50K' -> 0, '<=50K' -> 1 as in the notebook (orientation is immaterial
    for the losses' symmetry of use here). ``split``: "train" (clients) or "test" (server).
    """
    ds = load_adult(split)
    keep = ~np.any(ds.X == "?", axis=1)
    X, names = ds.X[keep], ds.feature_names
    col = {nm: X[:, j] for j, nm in enumerate(names)}
    feats, fnames = [], []

    def add(v, nm):
        feats.append(np.asarray(v, dtype=float))
        fnames.append(nm)

    for nm in ("age", "fnlwgt", "education-num", "hours-per-week"):
        v = col[nm].astype(float)
        add((v - v.mean()) / v.std(), nm)
    add(col["capital-gain"].astype(float) > 0, "capital-gain>0")
    add(col["capital-loss"].astype(float) > 0, "capital-loss>0")
    add(col["native-country"] != "United-States", "non-US")
    couple = np.isin(col["marital-status"], ["Married-civ-spouse", "Married-AF-spouse"])
    add(~couple, "single")
    for nm, cats in (("relationship", ["Husband", "Not-in-family", "Other-relative",
                                       "Own-child", "Unmarried", "Wife"]),
                     ("race", ["Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other",
                               "White"])):
        for c in cats:
            add(col[nm] == c, f"{nm}={c}")
    wc = np.array([_WORKCLASS.get(v, "other") for v in col["workclass"]])
    for c in ("gov", "private", "self", "other"):
        add(wc == c, f"workclass={c}")
    for c in sorted(set(col["occupation"].tolist())):
        add(col["occupation"] == c, f"occupation={c}")
    add(col["sex"] == "Male", "sex")
    y = (ds.y[keep] == 0).astype(float)
    return np.stack(feats, axis=1), y, fnames
