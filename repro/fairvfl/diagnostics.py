"""Cheap diagnostics behind the Fair VFL deviation entries (issue #16 item 3, first bullet).

``DIAGNOSTICS`` is the registry: id -> ``Diagnostic`` (title, the claim it tests, function).
``majority_vs_eo`` needs only the data splits and the printed values (no training run);
``dfpdfn_reading_counts`` reads existing records (a metric reading needs no rerun). Both are
handed the printed rows (``reported``: objects with ``stem, metric, key, value``, as
``repro.engine.compare.load_reported()`` returns them) rather than reading
``repro/reported/*.csv`` themselves: this module imports ``repro.core`` and the paper only.

- ``majority_vs_eo``: the constant majority classifier predicts one label for everybody, so its
  TPR and FPR are 0 (or 1) in both groups: it satisfies equalized odds exactly. The EO
  post-processor (Hardt et al., [C] ref [10]) minimizes the training error over a set that
  contains it (``p = 0`` in ``eo.eo_program``), so its training accuracy is at least the
  majority rate. [J] Table 1 prints ADULT EO 73.23 %; the diagnostic sets beside it the
  majority rate on our five splits and the EO accuracy [C] Table I prints for nearly the same
  base model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from repro.fairvfl.data import make_split
from repro.fairvfl.metric_readings import METRIC_READINGS

DATASETS = ("adult", "compas", "crime")
EO_ROWS = {  # (reported CSV stem, method name in it, metric): the EO accuracy each table prints
    "J_table1_LM": ("fairvfl_journal_table1", "FedBCD + EO", "ACC_pct"),
    "J_table2_MLP": ("fairvfl_journal_table2", "FedBCD + EO", "ACC_pct"),
    "C_tableI_LM": ("fairvfl_conf_table1", "EO", "AC_pct"),
}


@dataclass(frozen=True)
class Diagnostic:
    id: str
    title: str
    claim: str
    function: Callable[..., dict]


def majority_accuracy(dataset: str, seeds: Iterable[int] = range(5)) -> dict:
    """Accuracy (%) of the classifier that predicts the training split's majority label, on
    the training and the test split of every run's split (specs/fairvfl.md §5), and their means.
    """
    train, test = [], []
    for seed in seeds:
        sp = make_split(dataset, int(seed))
        label = 1 if np.mean(sp.y_train == 1) > 0.5 else -1
        train.append(100.0 * float(np.mean(sp.y_train == label)))
        test.append(100.0 * float(np.mean(sp.y_test == label)))
    return {"train_pct": train, "test_pct": test, "train_mean_pct": float(np.mean(train)),
            "test_mean_pct": float(np.mean(test))}


def reported_eo_accuracy(dataset: str, reported) -> dict[str, float]:
    """The EO accuracy (%) each of [J] Table 1, [J] Table 2, [C] Table I prints for a dataset
    (``reported``: the printed rows, see the module docstring).
    """
    rows = list(reported)
    out = {}
    for name, (stem, method, metric) in EO_ROWS.items():
        hits = [r.value for r in rows if r.stem == stem and r.metric == metric
                and dict(r.key).get("dataset") == dataset and dict(r.key).get("method") == method]
        if len(hits) != 1:
            raise LookupError(f"repro/reported/{stem}.csv: expected one {method} {metric} row "
                              f"for {dataset}, found {len(hits)}")
        out[name] = hits[0]
    return out


def majority_vs_eo(reported, datasets: Iterable[str] = DATASETS,
                   seeds: Iterable[int] = range(5)) -> dict:
    """Per dataset: the majority classifier's accuracy on our splits, the printed EO accuracies,
    ``J_table1_minus_majority`` (negative: [J] prints an EO below a classifier that satisfies
    equalized odds exactly) and ``C_minus_J_table1`` (the two versions' EO for the same LM).
    """
    seeds, reported = tuple(seeds), list(reported)
    out = {}
    for d in datasets:
        maj = majority_accuracy(d, seeds)
        eo = reported_eo_accuracy(d, reported)
        out[d] = {**{f"majority_{k}": v for k, v in maj.items()}, **eo,
                  "J_table1_minus_majority": eo["J_table1_LM"] - maj["test_mean_pct"],
                  "J_table1_minus_majority_train": eo["J_table1_LM"] - maj["train_mean_pct"],
                  "C_minus_J_table1": eo["C_tableI_LM"] - eo["J_table1_LM"]}
    return out


_JOURNAL_METHODS = {"FedBCD": ("FedBCD", ""), "FedBCD + EO": ("FedBCD", "eo_"),
                    "FedBCD + CEO": ("FedBCD", "ceo_"), "FairVFL": ("FairVFL", "")}


def dfpdfn_reading_counts(records, reported, stem: str = "fairvfl_journal_table1",
                          tolerance: float = 0.05) -> dict:
    """How many DFP/DFN rows of a [J] table each reading of ``METRIC_READINGS`` fits.

    ``records``: objects with ``config`` and ``metrics`` (run records, ``ok`` ones only where
    the attribute exists). A row fits when the seed mean is within ``tolerance`` of the
    printed value (specs/fairvfl.md §8: DFP/DFN +-0.05). Rows without records are counted as
    missing.
    Returns per reading ``{"fit": n, "rows": n_with_records, "by_dataset": {...}}`` and
    ``"missing"``.
    """
    recs = [r for r in records if getattr(r, "ok", True)]
    rows = [r for r in reported if r.stem == stem and r.metric in ("DFP", "DFN")]
    out = {rid: {"fit": 0, "rows": 0, "by_dataset": {}} for rid in METRIC_READINGS}
    missing = 0
    for row in rows:
        key = dict(row.key)
        method, prefix = _JOURNAL_METHODS[key["method"]]
        match = [r for r in recs if r.config.get("dataset") == key["dataset"]
                 and r.config.get("method") == method
                 and (method != "FairVFL" or float(r.config["eps"]) == float(key["epsilon"]))]
        if not match:
            missing += 1
            continue
        for rid, reading in METRIC_READINGS.items():
            k = prefix + reading.keys[0 if row.metric == "DFP" else 1]
            mean = float(np.mean([r.metrics[k] for r in match]))
            fit = abs(mean - row.value) <= tolerance
            o = out[rid]
            o["rows"] += 1
            o["fit"] += int(fit)
            d = o["by_dataset"].setdefault(key["dataset"], [0, 0])
            d[0] += int(fit)
            d[1] += 1
    return {"readings": out, "missing": missing, "tolerance": tolerance}


DIAGNOSTICS: dict[str, Diagnostic] = {d.id: d for d in (
    Diagnostic("fairvfl.majority_vs_eo",
               "constant majority classifier vs the printed EO accuracies",
               "[J] Table 1 ADULT FedBCD + EO 73.23 % is below the constant majority "
               "classifier, which satisfies equalized odds exactly; [C] Table I and [J] "
               "Table 1 print EO accuracies several points apart for nearly the same LM",
               majority_vs_eo),
    Diagnostic("fairvfl.dfpdfn_reading_counts",
               "DFP/DFN rows of [J] Table 1 each metric reading fits (from records)",
               "[J] §5.2 gives no formula for DFP/DFN; the readings of METRIC_READINGS are "
               "told apart by how many printed rows they fit (issue #16 item 1)",
               dfpdfn_reading_counts),
)}
