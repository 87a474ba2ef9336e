"""Raw UCI binary-classification files: Breast Cancer Wisconsin (original) and MONK's problems.

These are the raw UCI files placed instead of the "Cleaned_UCI_Datasets" CSVs of PL97/Constr_FL,
which are not publicly available (see ``shared/data/MANIFEST.md``); their counts differ slightly
from the paper's (e.g. 458/241 here against 455/240 there).
"""

from __future__ import annotations

import numpy as np

from .base import Dataset
from .store import fetch, record

BCW_FEATURES = [
    "Clump Thickness", "Uniformity of Cell Size", "Uniformity of Cell Shape",
    "Marginal Adhesion", "Single Epithelial Cell Size", "Bare Nuclei", "Bland Chromatin",
    "Normal Nucleoli", "Mitoses",
]
MONKS_FEATURES = ["a1", "a2", "a3", "a4", "a5", "a6"]


def load_breast_cancer_wisconsin() -> Dataset:
    """Load ``breast-cancer-wisconsin.data`` (Wolberg 1992), all 699 rows.

    Format: comma separated, no header, 11 columns: sample code number (id), the nine
    ``BCW_FEATURES`` (integers 1-10), class (2 = benign, 4 = malignant). ``?`` marks a missing
    value; it occurs only in Bare Nuclei, in 16 rows. Ids repeat (the same sample code appears
    on several rows), so they are not a key.

    Returns
    -------
    Dataset
        ``X`` : float64 (699, 9), NaN where the file has ``?`` (16 values, all Bare Nuclei).
        ``y`` : int64 class as given, 2 (benign, 458 rows) or 4 (malignant, 241 rows).
        ``meta`` : ``id`` (int64 sample code numbers), ``label_names`` ({2: "benign",
        4: "malignant"}), ``files`` (relative path -> sha256).
    """
    dataset, file = "uci_breast_cancer_wisconsin", "breast-cancer-wisconsin.data"
    lines = [ln for ln in fetch(dataset, file).read_text().splitlines() if ln.strip()]
    table = np.array([ln.split(",") for ln in lines], dtype=object)
    if table.ndim != 2 or table.shape[1] != 11:
        raise ValueError(f"{dataset}/{file}: rows do not all have 11 fields")
    table = table.astype(str)
    X = np.where(table[:, 1:10] == "?", "nan", table[:, 1:10]).astype(np.float64)
    return Dataset(
        X=X,
        y=table[:, 10].astype(np.int64),
        feature_names=list(BCW_FEATURES),
        name="breast_cancer_wisconsin/all",
        meta={
            "id": table[:, 0].astype(np.int64),
            "label_names": {2: "benign", 4: "malignant"},
            "missing_value": "?",
            "files": {f"{dataset}/{file}": record(dataset, file).sha256},
        },
    )


def load_monks(problem: int = 1, split: str = "train") -> Dataset:
    """Load one split of a MONK's problem (Thrun et al. 1991).

    Format: whitespace separated (each line starts with a space), no header, 8 fields:
    class (0/1), the six attributes ``a1``..``a6`` (small integers: a1, a2, a4 in 1-3; a3, a6
    in 1-2; a5 in 1-4) and an instance id such as ``data_5``. The test file lists all 432
    points of the attribute space.

    Parameters
    ----------
    problem : int
        Only 1 is in the data manifest (``monks-1.train``, ``monks-1.test``).
    split : {"train", "test"}
        monks-1: train 124 rows (62 of each class), test 432 rows (216 of each class).

    Returns
    -------
    Dataset
        ``X`` : int64 (n, 6); ``y`` : int64 class 0/1; ``meta`` : ``id`` (object array of the
        id strings), ``files`` (relative path -> sha256).
    """
    if problem != 1:
        raise ValueError(f"problem must be 1 (only monks-1 is in the data manifest), "
                         f"got {problem!r}")
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    dataset, file = "uci_monks", f"monks-{problem}.{split}"
    rows = [ln.split() for ln in fetch(dataset, file).read_text().splitlines() if ln.strip()]
    bad = [i for i, r in enumerate(rows) if len(r) != 8]
    if bad:
        raise ValueError(f"{dataset}/{file}: row {bad[0]} has {len(rows[bad[0]])} fields, not 8")
    table = np.array(rows, dtype=str)
    return Dataset(
        X=table[:, 1:7].astype(np.int64),
        y=table[:, 0].astype(np.int64),
        feature_names=list(MONKS_FEATURES),
        name=f"monks-{problem}/{split}",
        meta={
            "id": table[:, 7].astype(object),
            "files": {f"{dataset}/{file}": record(dataset, file).sha256},
        },
    )
