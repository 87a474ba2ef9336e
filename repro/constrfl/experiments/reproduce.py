"""The rows of Tables 1-4 compared with ``repro/reported/constrfl_table*.csv`` (output only:
not part of a record's code identity), and the groupings of records the tables print.

Every row is one value per trial (``over="trials"``, 10 trials behind each printed number):
the printed objective and relative-difference means pool trials x clients
(docs/decisions.md#constrfl-metrics), and their mean equals the mean of the per-trial client
means, whose spread over trials is the noise of that mean; the printed std of those rows is pooled
over clients (``paper_std_over``), so it bounds a match as printed but is no noise of a mean.
Tables 1-2's agreement rows (Algorithm 1 vs cProx-AL relative difference) are compared with
the printed number like any other row; the paper's statement that the methods agree (rel.
diff at most :data:`AGREEMENT`, docs/decisions.md#constrfl-reported) is a claim (``claims.py``).
Table 1's objective and feasibility are counted apart as substitute data (the authors' CSVs,
docs/decisions.md#constrfl-np-data, sit in the Drive folder their README links, out of reach here;
their features differ from ours); Table 4 within one unit of the last printed digit, its misprint
against the authors' log. Algorithm 1's records carry ``alg1_certified_stop`` (1 only for a
``certified (11)`` stop); its rows are :class:`~repro.engine.compare.verdict.Certified`: every run
enters
the mean (the paper's runs ran the same capped protocol) but an uncertified run is never the
evidence of a noise band, and the row says how many runs were certified.
"""

from __future__ import annotations

import numpy as np

from repro.constrfl.experiments._np import CAPS
from repro.constrfl.proxal import STOP_CODES
from repro.engine.compare.causes import Alternative, declare
from repro.engine.compare.noise import NoiseModel
from repro.engine.compare.noise import declare as declare_noise
from repro.engine.compare.verdict import Certified
from repro.engine.experiment import Reproduced

__all__ = ["AGREEMENT", "LCQP_METRICS", "MISPRINT", "PAPER_RUNS", "fair_groups", "fair_rows",
           "lcqp_groups",
           "np_groups", "np_rows", "table1", "table2", "table3", "table4"]

DEV = "docs/deviations.md"
# docs/decisions.md#constrfl-reported: Algorithm 1 vs cProx-AL rel. diff at most this matches
AGREEMENT = 5e-2
# the entry: the authors' CSVs (docs/decisions.md#constrfl-np-data) are in their README's Drive
# folder, out of reach here
NP_SUBSTITUTE = f"{DEV}#constrfl-table-1-data"
TABLE3_D = {"breast-cancer-wisc": "20", "adult-a": "21", "monks-1": "21"}
FAIR_PAPER_K = 300   # Table 2's K cap at paper scale
PAPER_RUNS = 10      # docs/decisions.md#constrfl-metrics: every printed number is over 10 trials
POOLED = "trials x clients"   # what the printed std of an objective / rel. diff row pools
_TRIALS = ("the random initial point w⁰ of the trial (\"randomly chosen from the unit "
           "Euclidean sphere\", shared by both algorithms); the data and their split are fixed")
_STD_WORDS = ("\"Inside the parentheses are the respective standard deviations over 10 random "
              "trials\"")
NOISE = {
    "constrfl_table1": NoiseModel(
        "constrfl_table1", _TRIALS, PAPER_RUNS, True,
        f"paper 003 §5.1 (\"We run 10 trials of Algorithm 1 and cProx-AL. For each run, both "
        f"algorithms have the same initial point w0, randomly chosen\"), Table 1: {_STD_WORDS}; "
        "the objective and relative-difference stds pool clients as well (the authors' table "
        "script)", "runs", "10 trials, w⁰ of trial t drawn from its own stream"),
    "constrfl_table2": NoiseModel(
        "constrfl_table2", _TRIALS, PAPER_RUNS, True,
        f"paper 003 §5.2 (the same sentence), Table 2: {_STD_WORDS}; the objective and "
        "relative-difference stds pool clients as well (the authors' table script)", "runs",
        "10 trials, w⁰ of trial t drawn from its own stream"),
    "constrfl_table3": NoiseModel(
        "constrfl_table3", "nothing: counts of the data after the split", 1, False,
        "paper 003 App. E.1, Table 3 (sizes and dimensions)", "none", "one deterministic run"),
    "constrfl_table4": NoiseModel(
        "constrfl_table4", "the random initial point w⁰ of the trial; one random instance per "
        "(n, d, m~)", PAPER_RUNS, True,
        f"paper 003 App. E.2 (\"We run 10 trials ... share the same initial point w0, "
        f"randomly chosen from the unit Euclidean sphere\"), Table 4: {_STD_WORDS}", "runs",
        "10 trials on the instance of each (n, d, m~)"),
}
declare_noise(*NOISE.values())
declare(Alternative("constrfl.table2", "criterion-tolerance",
                    "the solvers' accuracy: each solve stops at the criterion"),
        Alternative("constrfl.table3", "onehot", "the encoding of categorical attributes"))


def _by_trial(recs):
    return sorted(recs, key=lambda r: r.config["trial"])


def _pooled(recs, name):
    return [v for r in _by_trial(recs) for v in r.curves[name]]


def _per_trial(recs, name, fn):
    return [float(fn(r.curves[name])) for r in _by_trial(recs)]


def _client_mean(recs, name):
    """Each trial's mean over clients: the pooled printed mean is their mean (equal client
    counts per trial), and their spread over trials is that mean's noise.
    """
    return _per_trial(recs, name, np.mean)


def certified(recs, method: str) -> tuple[bool, ...] | None:
    """Per trial, whether the method's run ended certified, where the records say so
    (Algorithm 1's ``alg1_certified_stop``: 1 for a ``certified (11)`` stop); None where they do
    not (records made before the stop test was recorded, cProx-AL, Table 1's runs).
    """
    if method != "Algorithm 1":
        return None
    flags = [r.metrics.get("alg1_certified_stop") for r in _by_trial(recs)]
    return None if all(f is None for f in flags) else tuple(bool(f) for f in flags)


def _judged(method, metric, recs) -> dict:
    """The fields every constrfl row shares: 10 trials behind the paper's number, what the
    printed std is over, which trials ended certified.
    """
    pooled = metric in ("objective", "relative_difference")
    return {"over": "trials", "n_paper": PAPER_RUNS, "paper_std_over": POOLED if pooled else "",
            "certified": certified(recs, method)}


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


def _obj_rows(recs, per_trial: bool, names=("alg1_obj", "cprox_obj", "rel_diff")):
    get = _client_mean if per_trial else _pooled
    return [("Algorithm 1", "objective", "mean", get(recs, names[0])),
            ("cProx-AL", "objective", "mean", get(recs, names[1])),
            ("Algorithm 1 vs cProx-AL", "relative_difference", "mean", get(recs, names[2]))]


def np_rows(recs, per_trial: bool = False):
    """Table 1's printed rows of one (dataset, n, mode) group: (method, metric, statistic,
    values); objective and rel. diff pooled over trials x clients as the paper prints them
    (the rendered table), or with ``per_trial`` each trial's mean over clients (the same mean;
    the comparison's values, one per independent run); feasibility mean / max over clients
    per trial.
    """
    rows = _obj_rows(recs, per_trial)
    for meth, key in (("Algorithm 1", "alg1_feas"), ("cProx-AL", "cprox_feas")):
        rows.append((meth, "feasibility", "mean_over_clients", _per_trial(recs, key, np.mean)))
        rows.append((meth, "feasibility", "max_over_clients", _per_trial(recs, key, max)))
    return rows


NP_R = 0.2   # Sec. 5.1: the class-1 loss bound r_i of every client


def constraint_state(recs) -> str:
    """What Algorithm 1's final class-1 losses say of the constraint on our data: the
    problem a relative difference is taken on (the paper prints 0.20, an active bound).
    """
    worst = max(max(r.curves["alg1_feas"]) for r in recs)
    state = ("infeasible" if worst > NP_R + 1e-3 else "inactive" if worst < NP_R - 1e-3
             else "active")
    return (f"on the rebuilt data the class-1 constraint is {state} (largest final class-1 "
            f"loss {worst:.3g} against r = {NP_R}; the paper's feasibility column shows it "
            "active)")


def table1(records, mode: str = "paper") -> list[Reproduced]:
    """Table 1's rows from the records of ``mode``: ``"paper"`` (the table) or ``"reference"``
    (the authors' NP script, the diagnostic :mod:`.np_script`).
    """
    out = []
    for (ds, n, m), recs in sorted(np_groups(records).items()):
        if m != mode:
            continue
        note = np_protocol_note(recs, "constrfl-table-1-data")
        agree_note = f"{constraint_state(recs)}; {note}"
        for meth, metric, stat, vals in np_rows(recs, per_trial=True):
            # objective and feasibility depend on the authors' private CSVs, so our
            # numbers on the rebuilt data count as substitute_data; the agreement row is
            # compared with its printed number (its statement is a claim, claims.py)
            agree = metric == "relative_difference"
            out.append(Certified("constrfl_table1",
                                  {"dataset": ds, "n": str(n), "d": TABLE3_D[ds], "m_tilde": "",
                                   "method": meth, "statistic": stat},
                                  metric, tuple(float(v) for v in vals),
                                  note=agree_note if agree else note,
                                  substitute_data="" if agree else NP_SUBSTITUTE,
                                  **_judged(meth, metric, recs)))
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
                                  note=f"{DEV}#constrfl-feature-dimensions", over="runs",
                                  n_paper=1))
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


def fair_rows(recs, per_trial: bool = False):
    """Table 2's printed rows of one (n, hyper) group, as :func:`np_rows`."""
    rows = _obj_rows(recs, per_trial)
    for meth, key in (("Algorithm 1", "alg1_disp"), ("cProx-AL", "cprox_disp")):
        rows.append((meth, "loss_disparity", "mean_over_clients_and_server",
                     [float(v) for v in _per_trial(recs, key, np.mean)]))
        rows.append((meth, "loss_disparity", "max_over_clients_and_server",
                     [float(v) for v in _per_trial(recs, key, max)]))
    return rows


def stop_counts(recs) -> str:
    """How Algorithm 1's runs of a group ended (``proxal.STOP_CODES``): e.g.
    ``(11) on an uncertified call: 10``; records older than the stop test carry no stop code.
    """
    names = {float(v): k for k, v in STOP_CODES.items()}
    codes = [r.metrics.get("alg1_stop_code") for r in recs]
    if any(c is None for c in codes):
        return "not recorded"
    counts = {names[c]: codes.count(c) for c in sorted(set(codes))}
    return ", ".join(f"{k}: {v}" for k, v in counts.items())


def table2(records) -> list[Reproduced]:
    """The ``script`` hyperparameters feed the comparison
    (docs/decisions.md#constrfl-fairness-hyperparameters); ``render`` shows both.
    """
    out = []
    for (n, hyper), recs in sorted(fair_groups(records).items()):
        if hyper != "script":
            continue
        # how Algorithm 1's runs ended: a run without a certified stop is not
        # converged; the rows say so
        note = f"{fair_protocol_note(recs)}; Alg. 1 stop: {stop_counts(recs)}"
        for meth, metric, stat, vals in fair_rows(recs, per_trial=True):
            out.append(Certified("constrfl_table2",
                                  {"dataset": "adult-b", "n": str(n), "d": "39", "m_tilde": "",
                                   "method": meth, "statistic": stat}, metric,
                                  tuple(float(v) for v in vals), note=note,
                                  **_judged(meth, metric, recs)))
    return out


# --------------------------------------------------------------------------- Table 4

LCQP_METRICS = (("Algorithm 1", "objective", "alg1_objective"),
                ("cProx-AL", "objective", "cprox_objective"),
                ("Algorithm 1 vs cProx-AL", "relative_difference", "relative_difference"),
                ("Algorithm 1", "feasibility_violation", "alg1_feasibility"),
                ("cProx-AL", "feasibility_violation", "cprox_feasibility"))

# docs/decisions.md#constrfl-reported: the printed mean that the authors' log (LCQP/new_log.txt)
# shows to be a misprint, with what the paper meant to print (the log's 9.2828e-5 at the table's 3
# digits).
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
    """Reference-mode cells (the mode the printed table comes from),
    docs/decisions.md#constrfl-lcqp-experiment.

    Judged as docs/decisions.md#constrfl-reported says: every mean within one unit of its last
    printed digit (the table's values are the log's 4-digit values rounded again: 5.87485e-4 ->
    5.875e-4 -> 5.88e-4), and the misprinted mean (:data:`MISPRINT`) against the number the
    paper prints, like every other row: it deviates, and its note names the authors' log value
    our run agrees with.
    """
    out = []
    for (n, d, m), recs in sorted(lcqp_groups(records, "reference").items()):
        for method, metric, key in LCQP_METRICS:
            vals = [r.metrics[key] for r in _by_trial(recs)]
            ident = (str(n), str(d), str(m), method, metric)
            out.append(Certified(
                "constrfl_table4",
                {"dataset": "LCQP-synthetic", "n": str(n), "d": str(d), "m_tilde": str(m),
                 "method": method, "statistic": "mean"},
                metric, tuple(vals),
                note=f"{DEV}#constrfl-table-4-misprints" if ident in MISPRINT
                else f"{DEV}#constrfl-table-4",
                printed_units=1.0,
                **{**_judged(method, metric, recs), "paper_std_over": ""}))
    return out
