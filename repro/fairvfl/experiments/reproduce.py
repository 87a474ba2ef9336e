"""Map Fair VFL records to the rows of ``repro/reported/fairvfl_*.csv`` (specs/fairvfl.md §8).

Tolerances (used only where the paper prints no std, or a std of 0): §8's suggestions,
FedBCD/Fair VFL AC +-1.5 pt, FR and HM +-4 pt; EO/CEO AC +-3 pt, FR and HM +-8 pt; DFP/DFN
+-0.05. Every tolerance and every deviation reason is in ``docs/deviations.md``.
"""

from __future__ import annotations

from repro.engine.experiment import Reproduced
from repro.fairvfl.data import DATASETS
from repro.fairvfl.experiments._records import mean_over_seeds

DEV = "docs/deviations.md#"
TOL = {"base": {"AC_pct": 1.5, "ACC_pct": 1.5, "FR_pct": 4.0, "HM_pct": 4.0, "DFP": 0.05,
                "DFN": 0.05},
       "post": {"AC_pct": 3.0, "ACC_pct": 3.0, "FR_pct": 8.0, "HM_pct": 8.0, "DFP": 0.05,
                "DFN": 0.05}}
_METRIC = {"AC_pct": ("acc", 100.0), "ACC_pct": ("acc", 100.0), "FR_pct": ("fr", 100.0),
           "HM_pct": ("hm", 100.0), "DFP": ("dfp", 1.0), "DFN": ("dfn", 1.0)}


def _note(table: str, dataset: str, method: str, metric: str, eps: str, model: str) -> str:
    """The deviations entry that explains a mismatch of this row."""
    if dataset == "crime" and method in ("FedBCD", "CEO") and metric in ("FR_pct", "HM_pct"):
        return DEV + "fairvfl-cc-fedbcd-fairness"
    if method in ("EO", "CEO", "FedBCD + EO", "FedBCD + CEO"):
        return DEV + "fairvfl-post-processing-baselines-a7-a10"
    if metric in ("DFP", "DFN"):
        return DEV + "fairvfl-dfpdfn-readings-a11"
    if (table.startswith("fairvfl_journal") and dataset == "adult" and method == "FairVFL"
            and metric == "ACC_pct" and eps != "0.5"):
        return DEV + "fairvfl-adult-fair-vfl-keeps-accuracy"
    if model == "MLP":
        return DEV + "fairvfl-mlp-architecture-and-step-a15"
    if table == "fairvfl_journal_table1" and dataset == "adult" and eps == "0.5":
        return DEV + "fairvfl-adult-fairvfl05-vs-fedbcd-a24"
    if dataset == "crime" and method in ("Fair VFL", "FairVFL"):
        return DEV + "fairvfl-cc-fair-vfl-accuracy"
    if table == "fairvfl_conf_table1" and metric == "AC_pct":
        return DEV + "fairvfl-zero-std-in-c-table-i-a23"
    return DEV + "fairvfl-rounds-scaling-and-seeds-a1-a2-a16"


def _rows(records, table, model, methods, metrics) -> list[Reproduced]:
    if any(r.config.get("subsample") for r in records):
        raise ValueError("the tables compare full-data records only; 'subsample' is a "
                         "figure-only setting (docs/deviations.md, "
                         "#fairvfl-conf-fig-2-reduced-scale)")
    out = []
    for d in DATASETS:
        for label, match, prefix, eps, kind in methods:
            for metric in metrics:
                name, scale = _METRIC[metric]
                vals = mean_over_seeds(records, prefix + name, dataset=d, **match)
                if not vals:
                    continue
                key = {"dataset": d, "model": model, "method": label, "epsilon": eps}
                out.append(Reproduced(table, key, metric, tuple(scale * v for v in vals),
                                      tolerance=TOL[kind][metric],
                                      note=_note(table, d, label, metric, eps, model)))
    return out


def reproduce_conf_table1(records) -> list[Reproduced]:
    methods = [("FedBCD", {"method": "FedBCD"}, "", "", "base"),
               ("EO", {"method": "FedBCD"}, "eo_", "", "post"),
               ("CEO", {"method": "FedBCD"}, "ceo_", "", "post"),
               ("Fair VFL", {"method": "FairVFL", "eps": 0.01}, "", "0.01", "base")]
    return _rows(records, "fairvfl_conf_table1", "LM", methods, ("AC_pct", "FR_pct", "HM_pct"))


def reproduce_journal(records, table: str, model: str) -> list[Reproduced]:
    eps_values = sorted({r.config["eps"] for r in records if r.config["method"] == "FairVFL"})
    methods = [("FedBCD", {"method": "FedBCD"}, "", "", "base"),
               ("FedBCD + EO", {"method": "FedBCD"}, "eo_", "", "post"),
               ("FedBCD + CEO", {"method": "FedBCD"}, "ceo_", "", "post")]
    methods += [("FairVFL", {"method": "FairVFL", "eps": e}, "", str(e), "base")
                for e in eps_values]
    return _rows(records, table, model, methods, ("ACC_pct", "DFP", "DFN"))
