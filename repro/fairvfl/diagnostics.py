"""Cheap diagnostics behind the Fair VFL deviation entries (issue #16 item 3, first bullet).

``DIAGNOSTICS`` is the registry: id -> ``Diagnostic`` (title, the claim it tests, function).
Each function needs only the data splits and ``repro/reported``: no training run.

- ``majority_vs_eo``: the constant majority classifier predicts one label for everybody, so its
  TPR and FPR are 0 (or 1) in both groups: it satisfies equalized odds exactly. The EO
  post-processor (Hardt et al., [C] ref [10]) minimizes the training error over a set that
  contains it (``p = 0`` in ``baselines.eo_program``), so its training accuracy is at least the
  majority rate. [J] Table 1 prints ADULT EO 73.23 %; the diagnostic sets beside it the
  majority rate on our five splits and the EO accuracy [C] Table I prints for nearly the same
  base model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from repro.core.compare import load_reported
from repro.fairvfl.data import make_split

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
    the training and the test split of every run's split (spec §5), and their means."""
    train, test = [], []
    for seed in seeds:
        sp = make_split(dataset, int(seed))
        label = 1 if np.mean(sp.y_train == 1) > 0.5 else -1
        train.append(100.0 * float(np.mean(sp.y_train == label)))
        test.append(100.0 * float(np.mean(sp.y_test == label)))
    return {"train_pct": train, "test_pct": test, "train_mean_pct": float(np.mean(train)),
            "test_mean_pct": float(np.mean(test))}


def reported_eo_accuracy(dataset: str) -> dict[str, float]:
    """The EO accuracy (%) each of [J] Table 1, [J] Table 2, [C] Table I prints for a dataset."""
    rows = load_reported()
    out = {}
    for name, (stem, method, metric) in EO_ROWS.items():
        hits = [r.value for r in rows if r.stem == stem and r.metric == metric
                and dict(r.key).get("dataset") == dataset and dict(r.key).get("method") == method]
        if len(hits) != 1:
            raise LookupError(f"repro/reported/{stem}.csv: expected one {method} {metric} row "
                              f"for {dataset}, found {len(hits)}")
        out[name] = hits[0]
    return out


def majority_vs_eo(datasets: Iterable[str] = DATASETS, seeds: Iterable[int] = range(5)) -> dict:
    """Per dataset: the majority classifier's accuracy on our splits, the printed EO accuracies,
    ``J_table1_minus_majority`` (negative: [J] prints an EO below a classifier that satisfies
    equalized odds exactly) and ``C_minus_J_table1`` (the two versions' EO for the same LM)."""
    seeds = tuple(seeds)
    out = {}
    for d in datasets:
        maj = majority_accuracy(d, seeds)
        eo = reported_eo_accuracy(d)
        out[d] = {**{f"majority_{k}": v for k, v in maj.items()}, **eo,
                  "J_table1_minus_majority": eo["J_table1_LM"] - maj["test_mean_pct"],
                  "J_table1_minus_majority_train": eo["J_table1_LM"] - maj["train_mean_pct"],
                  "C_minus_J_table1": eo["C_tableI_LM"] - eo["J_table1_LM"]}
    return out


DIAGNOSTICS: dict[str, Diagnostic] = {d.id: d for d in (
    Diagnostic("fairvfl.majority_vs_eo",
               "constant majority classifier vs the printed EO accuracies",
               "[J] Table 1 ADULT FedBCD + EO 73.23 % is below the constant majority "
               "classifier, which satisfies equalized odds exactly; [C] Table I and [J] "
               "Table 1 print EO accuracies several points apart for nearly the same LM",
               majority_vs_eo),
)}
