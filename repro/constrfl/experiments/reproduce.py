"""The rows of Tables 1-4 compared with ``repro/reported/constrfl_table*.csv`` (output only:
not part of a record's code identity), and the groupings of records the tables print.

Judged as specs/constrfl.md §6 recommends: Tables 1-2's agreement row (Algorithm 1 vs cProx-AL
relative difference) is one-sided, at most :data:`AGREEMENT` matches; Table 1's objective and
feasibility are counted apart as substitute data (the authors' CSVs, A1, sit in the Drive folder
their README links, out of reach here; their features differ from ours); Table 4
within one unit of the last printed digit, its misprint against the authors' log.
"""

from __future__ import annotations

import numpy as np

from repro.constrfl.experiments._np import CAPS
from repro.constrfl.proxal import STOP_CODES
from repro.engine.experiment import Reproduced

__all__ = ["AGREEMENT", "LCQP_METRICS", "MISPRINT", "fair_groups", "fair_rows", "lcqp_groups",
           "np_groups", "np_rows", "table1", "table2", "table3", "table4"]

DEV = "docs/deviations.md"
AGREEMENT = 5e-2   # specs/constrfl.md §6: Algorithm 1 vs cProx-AL rel. diff at most this matches
# the entry: the authors' CSVs (A1) are in their README's Drive folder, out of reach here
NP_SUBSTITUTE = f"{DEV}#constrfl-table-1-data"
TABLE3_D = {"breast-cancer-wisc": "20", "adult-a": "21", "monks-1": "21"}
FAIR_PAPER_K = 300   # Table 2's K cap at paper scale


def _by_trial(recs):
    return sorted(recs, key=lambda r: r.config["trial"])


def _pooled(recs, name):
    return [v for r in _by_trial(recs) for v in r.curves[name]]


def _per_trial(recs, name, fn):
    return [fn(r.curves[name]) for r in _by_trial(recs)]


# --------------------------------------------------------------------------- Table 1

def np_groups(records) -> dict[tuple, list]:
    """Table 1's records by ``(dataset, n, mode)``."""
    out: dict[tuple, list] = {}
    for r in records:
        out.setdefault((r.config["dataset"], r.config["n"], r.config["mode"]), []).append(r)
    return out


def np_protocol_note(recs, data_anchor: str) -> str:
    """The comparison's reason for a row: the data deviation, preceded by the partial-protocol
    entry when the row's cells ran with fewer than 10 trials or a K cap below the paper's (smoke
    records, or a paper-scale run not yet finished).
    """
    data = f"{DEV}#{data_anchor}"
    trials = len({r.config["trial"] for r in recs})
    k = min(r.config["k_max"] for r in recs)
    if trials >= 10 and k >= CAPS["paper"][0]:
        return data
    return (f"partial protocol ({trials} trial(s), K <= {k}): {DEV}#constrfl-partial-protocol; "
            f"data: {data}")


def np_rows(recs):
    """Table 1's printed rows of one (dataset, n, mode) group: (method, metric, statistic,
    values); objective and rel. diff pooled over trials x clients, feasibility per trial.
    """
    rows = [("Algorithm 1", "objective", "mean", _pooled(recs, "alg1_obj")),
            ("cProx-AL", "objective", "mean", _pooled(recs, "cprox_obj")),
            ("Algorithm 1 vs cProx-AL", "relative_difference", "mean",
             _pooled(recs, "rel_diff"))]
    for meth, key in (("Algorithm 1", "alg1_feas"), ("cProx-AL", "cprox_feas")):
        rows.append((meth, "feasibility", "mean_over_clients", _per_trial(recs, key, np.mean)))
        rows.append((meth, "feasibility", "max_over_clients", _per_trial(recs, key, max)))
    return rows


def table1(records) -> list[Reproduced]:
    out = []
    for (ds, n, mode), recs in sorted(np_groups(records).items()):
        if mode != "paper":
            continue
        note = np_protocol_note(recs, "constrfl-table-1-data")
        for meth, metric, stat, vals in np_rows(recs):
            # specs/constrfl.md §6: the agreement row is one-sided (rel. diff <= 5e-2 is a
            # match, smaller is better); objective and feasibility depend on the authors'
            # private CSVs (A1), so our numbers on the rebuilt data count as substitute_data
            agree = metric == "relative_difference"
            out.append(Reproduced("constrfl_table1",
                                  {"dataset": ds, "n": str(n), "d": TABLE3_D[ds], "m_tilde": "",
                                   "method": meth, "statistic": stat},
                                  metric, tuple(float(v) for v in vals), note=note,
                                  at_most=AGREEMENT if agree else None,
                                  substitute_data="" if agree else NP_SUBSTITUTE))
    return out


# --------------------------------------------------------------------------- Table 3

def table3(records) -> list[Reproduced]:
    out = []
    for r in records:
        ds = r.config["dataset"]
        for metric in ("n_samples_class0", "n_samples_class1", "feature_dimension"):
            out.append(Reproduced("constrfl_table3",
                                  {"dataset": ds, "n": "", "d": TABLE3_D[ds], "m_tilde": "",
                                   "method": "", "statistic": "count"},
                                  metric, (r.metrics[metric],),
                                  note=f"{DEV}#constrfl-a1-feature-dimensions"))
    return out


# --------------------------------------------------------------------------- Table 2

def fair_groups(records) -> dict[tuple, list]:
    """Table 2's records by ``(n, hyper)``."""
    out: dict[tuple, list] = {}
    for r in records:
        out.setdefault((r.config["n"], r.config["hyper"]), []).append(r)
    return out


def fair_protocol_note(recs) -> str:
    """Reason shown for a row: the adult-b / hyperparameter entry, preceded by the partial
    protocol entry when fewer than 10 trials, a K cap below 300 or a subsample were run.
    """
    data = f"{DEV}#constrfl-table-2-adult-b-and-hyperparameters"
    trials = len({r.config["trial"] for r in recs})
    k = min(r.config["k_max"] for r in recs)
    sub = max(r.config["subsample"] for r in recs)
    if trials >= 10 and k >= FAIR_PAPER_K and not sub:
        return data
    return (f"partial protocol ({trials} trial(s), K <= {k}"
            f"{f', {sub}-row subsample' if sub else ''}): {DEV}#constrfl-partial-protocol; "
            f"data and hyperparameters: {data}")


def fair_rows(recs):
    """Table 2's printed rows of one (n, hyper) group, as :func:`np_rows`."""
    rows = [("Algorithm 1", "objective", "mean", _pooled(recs, "alg1_obj")),
            ("cProx-AL", "objective", "mean", _pooled(recs, "cprox_obj")),
            ("Algorithm 1 vs cProx-AL", "relative_difference", "mean",
             _pooled(recs, "rel_diff"))]
    for meth, key in (("Algorithm 1", "alg1_disp"), ("cProx-AL", "cprox_disp")):
        rows.append((meth, "loss_disparity", "mean_over_clients_and_server",
                     [float(v) for v in _per_trial(recs, key, np.mean)]))
        rows.append((meth, "loss_disparity", "max_over_clients_and_server",
                     [float(v) for v in _per_trial(recs, key, max)]))
    return rows


def stop_counts(recs) -> str:
    """How Algorithm 1's runs of a group ended (``proxal.STOP_CODES``): e.g.
    ``(11) on an uncertified call: 10``; records from before issue #31 carry no stop code.
    """
    names = {float(v): k for k, v in STOP_CODES.items()}
    codes = [r.metrics.get("alg1_stop_code") for r in recs]
    if any(c is None for c in codes):
        return "not recorded"
    counts = {names[c]: codes.count(c) for c in sorted(set(codes))}
    return ", ".join(f"{k}: {v}" for k, v in counts.items())


def table2(records) -> list[Reproduced]:
    """The ``script`` hyperparameters feed the comparison (A4); ``render`` shows both."""
    out = []
    for (n, hyper), recs in sorted(fair_groups(records).items()):
        if hyper != "script":
            continue
        # how Algorithm 1's runs ended (issue #31): a run without a certified stop is not
        # converged; the rows say so
        note = f"{fair_protocol_note(recs)}; Alg. 1 stop: {stop_counts(recs)}"
        for meth, metric, stat, vals in fair_rows(recs):
            # specs/constrfl.md §6: the agreement row is one-sided (rel. diff <= 5e-2 matches)
            agree = metric == "relative_difference"
            out.append(Reproduced("constrfl_table2",
                                  {"dataset": "adult-b", "n": str(n), "d": "39", "m_tilde": "",
                                   "method": meth, "statistic": stat}, metric,
                                  tuple(float(v) for v in vals), note=note,
                                  at_most=AGREEMENT if agree else None))
    return out


# --------------------------------------------------------------------------- Table 4

LCQP_METRICS = (("Algorithm 1", "objective", "alg1_objective"),
                ("cProx-AL", "objective", "cprox_objective"),
                ("Algorithm 1 vs cProx-AL", "relative_difference", "relative_difference"),
                ("Algorithm 1", "feasibility_violation", "alg1_feasibility"),
                ("cProx-AL", "feasibility_violation", "cprox_feasibility"))

# specs/constrfl.md §6: the printed mean that the authors' log (LCQP/new_log.txt) shows to be
# a misprint, with what the paper meant to print (the log's 9.2828e-5 at the table's 3 digits).
MISPRINT = {("10", "500", "5", "Algorithm 1", "feasibility_violation"): "9.28e-5"}


def lcqp_groups(records, mode) -> dict[tuple, list]:
    """Table 4's records of one mode by ``(n, d, m)``."""
    out: dict[tuple, list] = {}
    for r in records:
        c = r.config
        if c["mode"] == mode:
            out.setdefault((c["n"], c["d"], c["m"]), []).append(r)
    return out


def table4(records) -> list[Reproduced]:
    """Reference-mode cells (the mode the printed table comes from), specs/constrfl.md §4.3.

    Judged as specs/constrfl.md §6 recommends: every mean within one unit of its last printed
    digit (the table's values are the log's 4-digit values rounded again: 5.87485e-4 ->
    5.875e-4 -> 5.88e-4), and the misprinted mean against its corrected value
    (:data:`MISPRINT`).
    """
    out = []
    for (n, d, m), recs in sorted(lcqp_groups(records, "reference").items()):
        for method, metric, key in LCQP_METRICS:
            vals = [r.metrics[key] for r in _by_trial(recs)]
            ident = (str(n), str(d), str(m), method, metric)
            out.append(Reproduced(
                "constrfl_table4",
                {"dataset": "LCQP-synthetic", "n": str(n), "d": str(d), "m_tilde": str(m),
                 "method": method, "statistic": "mean"},
                metric, tuple(vals),
                note=f"{DEV}#constrfl-table-4-misprints" if ident in MISPRINT
                else f"{DEV}#constrfl-table-4",
                printed_units=1.0, corrected=MISPRINT.get(ident)))
    return out
