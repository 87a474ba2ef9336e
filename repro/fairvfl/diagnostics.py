"""Cheap diagnostics behind the Fair VFL deviation entries.

``majority_vs_eo`` needs only the data splits and the printed values (no training run);
``dfpdfn_reading_counts`` reads existing records (a metric reading needs no rerun);
``adult_constraint_cost`` trains. All are handed the printed rows (``reported``: objects with
``stem, metric, key, value``, as ``repro.engine.compare.compare.load_reported()`` returns them)
rather
than reading ``repro/reported/*.csv`` themselves: this module imports ``repro.core`` and
``repro.fairvfl`` only (no engine, docs/design.md layout rule 2).

- ``majority_vs_eo``: the constant majority classifier predicts one label for everybody, so its
  TPR and FPR are 0 (or 1) in both groups: it satisfies equalized odds exactly. The EO
  post-processor (Hardt et al., [C] ref [10]) minimizes the training error over a set that
  contains it (``p = 0`` in ``eo.eo_program``), so its training accuracy is at least the
  majority rate. [J] Table 1 prints ADULT EO 73.23 %; the diagnostic sets beside it the
  majority rate on our five splits and the EO accuracy [C] Table I prints for nearly the same
  base model.
- ``adult_constraint_cost`` (item 3, second bullet): trains the ADULT LM of [J] Table 1
  (FedBCD, FairVFL(0.5), FairVFL(eps) under Definition 1 and under the rejected reading
  ``N^s`` = every sample of group s) and sets the accuracy each loses against [J]'s own
  FairVFL(0.5) row beside the printed one, with the test TPR/FPR per group that show what the
  constraint converts. Its size (``T``, ``seeds``) is a parameter: the default (T = 2000, one
  seed) takes about 2 min on one core. Run it (any size) as
  ``adult_constraint_cost(repro.engine.compare.compare.load_reported(), T=..., seeds=...)``.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import scipy.sparse

from repro.fairvfl.data import make_split
from repro.fairvfl.fair_vfl import PAPER_ETA
from repro.fairvfl.methods import build
from repro.fairvfl.metric_readings import METRIC_READINGS
from repro.fairvfl.models import LinearBlock
from repro.fairvfl.problem import FairnessGroups, VFLProblem, softplus

DATASETS = ("adult", "compas", "crime")
EO_ROWS = {  # (reported CSV stem, method name in it, metric): the EO accuracy each table prints
    "J_table1_LM": ("fairvfl_journal_table1", "FedBCD + EO", "ACC_pct"),
    "J_table2_MLP": ("fairvfl_journal_table2", "FedBCD + EO", "ACC_pct"),
    "C_tableI_LM": ("fairvfl_conf_table1", "EO", "AC_pct"),
}



def majority_accuracy(dataset: str, seeds: Iterable[int] = range(5)) -> dict:
    """Accuracy (%) of the classifier that predicts the training split's majority label, on
    the training and the test split of every run's split (docs/decisions.md#fairvfl-data), and their
    means.
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
    printed value (docs/decisions.md#fairvfl-tables: DFP/DFN +-0.05). Rows without records are
    counted as missing.
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


# ---------------------------------------------------- ADULT: what the constraint costs
class WholeGroupFairness(FairnessGroups):
    """The rejected reading of Definition 1: ``N^s`` = every sample of group ``s``.

    [J] Definition 1 takes ``N^s`` = the samples that "belong to the protected class s ... and
    have a positive label"; this reading drops the second condition, so
    ``D = mean_{s=a} l(z_i, y_i) - mean_{s=b} l(z_i, y_i)`` over whole groups (the loss with
    each row's own label). The [J](12) weights keep their form (``coef`` = 1/|N^a| on group a,
    -1/|N^b| on group b), so the round of :class:`~repro.fairvfl.fair_vfl.FairVFL` is
    unchanged. Used only by :func:`adult_constraint_cost`, never by an experiment.
    """

    @classmethod
    def from_labels(cls, y: np.ndarray, s: np.ndarray) -> WholeGroupFairness:
        base = FairnessGroups.from_labels(y, s)  # validates y and s
        in_a = np.asarray(s).astype(bool)
        in_b = ~in_a
        return cls(base.y, in_a, in_b, in_a / in_a.sum() - in_b / in_b.sum())

    def deo_signed(self, z: np.ndarray) -> float:
        """``mean_{group a} log(1 + e^{-y z}) - mean_{group b} log(1 + e^{-y z})``."""
        ell = softplus(-self.y * z)
        return float(ell[self.in_a].mean() - ell[self.in_b].mean())


READINGS_OF_NS = {"definition1": FairnessGroups, "whole_group": WholeGroupFairness}
_J_ADULT = {"J_table1_LM": "fairvfl_journal_table1", "J_table2_MLP": "fairvfl_journal_table2"}


def printed_adult_accuracy(reported) -> dict:
    """[J] Tables 1-2, ADULT: the printed ACC of FedBCD and of every FairVFL(eps), with
    ``fairvfl05_minus_fedbcd`` (FairVFL(0.5), whose constraint is inactive, against FedBCD)
    and per eps < 0.5 ``cost_vs_fairvfl05`` (FairVFL(0.5) - FairVFL(eps)) and
    ``cost_vs_fedbcd`` (FedBCD - FairVFL(eps)), in points.
    """
    rows = list(reported)
    out = {}
    for name, stem in _J_ADULT.items():
        acc = {}
        for r in rows:
            key = dict(r.key)
            if r.stem == stem and r.metric == "ACC_pct" and key.get("dataset") == "adult":
                acc["FedBCD" if key["method"] == "FedBCD" else key.get("epsilon")] = (
                    r.value if key["method"] in ("FedBCD", "FairVFL") else None)
        acc = {k: v for k, v in acc.items() if v is not None}
        if "FedBCD" not in acc or "0.5" not in acc:
            raise LookupError(f"repro/reported/{stem}.csv: no ADULT FedBCD or FairVFL(0.5) ACC")
        eps = sorted((k for k in acc if k not in ("FedBCD", "0.5")), key=float)
        out[name] = {"FedBCD": acc["FedBCD"], "FairVFL": {e: acc[e] for e in [*eps, "0.5"]},
                     "fairvfl05_minus_fedbcd": acc["0.5"] - acc["FedBCD"],
                     "cost_vs_fairvfl05": {e: acc["0.5"] - acc[e] for e in eps},
                     "cost_vs_fedbcd": {e: acc["FedBCD"] - acc[e] for e in eps}}
    return out


def _sparse(X: np.ndarray):
    """The cells' storage (``experiments._run._maybe_sparse``): CSR when density <= 0.3."""
    return scipy.sparse.csr_matrix(X) if np.count_nonzero(X) <= 0.3 * X.size else X


def adult_lm_run(sp, method: str, eps: float | None, T: int,
                 reading: str = "definition1") -> dict:
    """One [J] Table 1 ADULT cell on the split ``sp`` (LM, 1 active + 5 passive parties,
    eta = 100, beta = 0.1, c = 1e-3, Q = 1, as ``fairvfl.journal_table1``), with ``N^s`` of
    ``READINGS_OF_NS[reading]``. Returns test accuracy (%), the test confusion counts per
    group (``a`` = women), TPR/FPR per group, the training D of the final model under both
    readings, lam and the test decisions (``yhat``, for the flips between runs).
    """
    groups = READINGS_OF_NS[reading].from_labels(sp.y_train, sp.s_train)
    blocks = [LinearBlock(_sparse(sp.X_train[:, b])) for b in sp.blocks]
    alg = build(method, VFLProblem(blocks, sp.y_train, sp.s_train, groups=groups),
                eps=float(eps or 0.0), eta=PAPER_ETA, beta=0.1, c=1e-3, Q=1, roles="journal")
    alg.run(int(T))
    z = alg.test_scores([sp.X_test[:, b] for b in sp.blocks])
    yhat = np.where(z >= 0, 1, -1)
    out = {"acc_pct": 100.0 * float(np.mean(yhat == sp.y_test)),
           "lam1": float(alg.state.lam[0]), "lam2": float(alg.state.lam[1])}
    for name, cls in READINGS_OF_NS.items():
        out[f"train_D_{name}"] = cls.from_labels(sp.y_train, sp.s_train).deo_signed(
            alg.server.z)
    for g, mask in (("a", sp.s_test), ("b", ~sp.s_test)):
        pos, neg = mask & (sp.y_test == 1), mask & (sp.y_test == -1)
        tp, fp = int(np.sum(yhat[pos] == 1)), int(np.sum(yhat[neg] == 1))
        out.update({f"tp_{g}": tp, f"fn_{g}": int(pos.sum()) - tp, f"fp_{g}": fp,
                    f"tn_{g}": int(neg.sum()) - fp, f"tpr_{g}": tp / int(pos.sum()),
                    f"fpr_{g}": fp / int(neg.sum())})
    out["yhat"] = yhat
    return out


def _flips(base: dict, new: dict, sp) -> dict:
    """Test rows whose decision changed from ``base`` to ``new``, per group and true label:
    ``fn_to_tp_a`` = false negatives among high-earning women turned into true positives ...
    """
    out = {}
    for g, mask in (("a", sp.s_test), ("b", ~sp.s_test)):
        for label, (before, after) in ((1, ("fn", "tp")), (-1, ("tn", "fp"))):
            rows = mask & (sp.y_test == label)
            up = int(np.sum(rows & (base["yhat"] == -1) & (new["yhat"] == 1)))
            down = int(np.sum(rows & (base["yhat"] == 1) & (new["yhat"] == -1)))
            out[f"{before}_to_{after}_{g}"] = up
            out[f"{after}_to_{before}_{g}"] = down
    return out


def _mean(rows: list[dict], key: str) -> float:
    return float(np.mean([r[key] for r in rows]))


def adult_constraint_cost(reported, T: int = 2000, seeds: Iterable[int] = (0,),
                          eps_values: Iterable[float] = (0.01,),
                          rejected_eps: Iterable[float] = (0.01,),
                          inactive_run: bool = True) -> dict:
    """ADULT, [J] Table 1's LM: does the constraint cost accuracy, measured against FairVFL(0.5)?

    [J] prints FairVFL(0.5), whose constraint is inactive
    (docs/decisions.md#fairvfl-j-table1-adult), 2.0 (Table 1) and 2.4
    (Table 2) points below its own FedBCD; measured against that row, its constraint costs
    0.3-1.7 points. Here, per seed of ``seeds`` at ``T`` rounds: FedBCD, FairVFL(0.5) and
    FairVFL(eps) for ``eps_values`` under Definition 1, and FairVFL(eps) for ``rejected_eps``
    under the rejected reading ``N^s`` = every sample of group s (:class:`WholeGroupFairness`).
    Returns ``printed`` (:func:`printed_adult_accuracy`) and ``ours``: seed means of accuracy,
    TPR/FPR per group (a = women, positive = > 50K), the cost against FairVFL(0.5) and against
    FedBCD, and the decision flips against FedBCD; ``per_seed`` holds every run.
    """
    seeds, eps_values, rejected_eps = tuple(seeds), tuple(eps_values), tuple(rejected_eps)
    runs = {"FedBCD": [], "FairVFL(0.5)": []}
    runs.update({f"FairVFL({e})": [] for e in eps_values})
    runs.update({f"FairVFL({e}) whole-group": [] for e in rejected_eps})
    flips = {k: [] for k in runs if k != "FedBCD"}
    for seed in seeds:
        sp = make_split("adult", int(seed), version="journal")
        jobs = [("FedBCD", "FedBCD", None, "definition1")]
        jobs += [("FairVFL(0.5)", "FairVFL", 0.5, "definition1")] if inactive_run else []
        jobs += [(f"FairVFL({e})", "FairVFL", e, "definition1") for e in eps_values]
        jobs += [(f"FairVFL({e}) whole-group", "FairVFL", e, "whole_group")
                 for e in rejected_eps]
        base = None
        for name, method, eps, reading in jobs:
            r = adult_lm_run(sp, method, eps, T, reading)
            if base is None:
                base = r
            else:
                flips[name].append(_flips(base, r, sp))
            runs[name].append(r)
        if not inactive_run:
            runs["FairVFL(0.5)"].append(base)
            flips["FairVFL(0.5)"].append(_flips(base, base, sp))
    keys = ("acc_pct", "tpr_a", "tpr_b", "fpr_a", "fpr_b", "train_D_definition1",
            "train_D_whole_group", "lam1", "lam2")
    ours = {name: {k: _mean(rows, k) for k in keys} for name, rows in runs.items()}
    for name, rows in flips.items():
        ours[name]["flips_vs_fedbcd"] = {k: _mean(rows, k) for k in rows[0]}
    ours["FairVFL(0.5)"]["from"] = ("run" if inactive_run else
                                    "FedBCD's run (claim J1b: identical, lam stays 0)")
    acc05, acc_fed = ours["FairVFL(0.5)"]["acc_pct"], ours["FedBCD"]["acc_pct"]
    ours["fairvfl05_minus_fedbcd"] = acc05 - acc_fed
    for name in runs:
        if name not in ("FedBCD", "FairVFL(0.5)"):
            ours[name]["cost_vs_fairvfl05"] = acc05 - ours[name]["acc_pct"]
            ours[name]["cost_vs_fedbcd"] = acc_fed - ours[name]["acc_pct"]
    per_seed = {name: [{k: v for k, v in r.items() if k != "yhat"} for r in rows]
                for name, rows in runs.items()}
    return {"printed": printed_adult_accuracy(reported), "ours": ours, "per_seed": per_seed,
            "T": int(T), "seeds": list(seeds)}

