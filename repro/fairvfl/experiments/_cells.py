"""The cell grids of the Fair VFL experiments (docs/decisions.md#fairvfl-hyperparameters, smoke
scale docs/decisions.md#fairvfl-cost).

A cell config holds ``dataset, version, model, method, eps, Q, T, eta, seed, smoke,
log_every`` (and ``widths``, ``dtype`` for the MLP); the
field names and values feed the cell seeds, so they do not change.
"""

from __future__ import annotations

from repro.fairvfl.data import DATASETS, data_files

PAPER_C, PAPER_J = "000_6d2fcaa5c94b2354.txt", "001_70acc2f5fa8635c9.txt"
SEEDS = {"smoke": (0, 1), "paper": (0, 1, 2, 3, 4)}
J_EPS = {"smoke": (0.01, 0.1, 0.5), "paper": (0.001, 0.01, 0.05, 0.1, 0.5)}
C1_EPS = {"paper": {"adult": (0.001, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4),
                    "compas": (0.001, 0.01, 0.05, 0.1, 0.15, 0.2, 0.25),
                    "crime": (0.001, 0.01, 0.05, 0.1, 0.15, 0.2, 0.25)},
          "smoke": {"adult": (0.01, 0.1, 0.4), "compas": (0.01, 0.1, 0.25),
                    "crime": (0.01, 0.1, 0.25)}}
DATA = tuple(f for d in DATASETS for f in data_files(d))
# The library methods (repro.fairvfl.methods) each experiment's cells run, by printed name: its
# ``Experiment.methods`` (tests/fairvfl/test_fairvfl_experiments.py holds them to the grids).
TABLE_METHODS = ("FedBCD", "FairVFL")  # every table and figure but [C] Fig. 2
CONF_FIG2_METHODS = ("FairVFL",)  # [C] Fig. 2: Fair VFL at Q in {1, 4, 7}
# The experiments that plan the same runs: [C] Table I's primary cells are [C] Fig. 1's, [J]
# Fig. 1's are [J] Table 1's seed 0, [J] Fig. 2's are [J] Table 2's seed 0 (66 of the 513 paper
# cells). A run's numbers depend on its config only (``_run.run_cell`` reads the split, the
# initial networks and the Q draws from ``config["seed"]``, never from the experiment or the
# cell seed), so a sweep computes a shared run once (Experiment.shared_cells).
SHARED_CELLS = "fairvfl.runs"


def _cell(scale, dataset, version, model, method, seed, T, *, eps=None, Q=1, eta=100.0,
          log_every=1, **extra):
    return {"dataset": dataset, "version": version, "model": model, "method": method,
            "eps": eps, "Q": Q, "T": T, "eta": eta, "seed": seed, "smoke": scale == "smoke",
            "log_every": log_every, **extra}


def _methods(eps_values):
    return [("FedBCD", None)] + [("FairVFL", e) for e in eps_values]


def conf_table1_cells(scale):
    T = 1000 if scale == "smoke" else 2000
    return [_cell(scale, d, "conf", "LM", m, s, T, eps=e, log_every=10)
            for d in DATASETS for m, e in _methods((0.01,)) for s in SEEDS[scale]]


def conf_fig1_cells(scale):
    T = 1000 if scale == "smoke" else 2000
    return [_cell(scale, d, "conf", "LM", m, s, T, eps=e, log_every=10)
            for d in DATASETS for m, e in _methods(C1_EPS[scale][d]) for s in SEEDS[scale]]


def conf_fig2_cells(scale):
    """The paper protocol: the full ADULT costs about 1 min per (eps, Q = 7) cell."""
    smoke = scale == "smoke"
    datasets = ("compas", "crime") if smoke else ("compas", "crime", "adult")
    eps_values = (0.01, 0.1) if smoke else (0.01, 0.05, 0.1)
    T = 500 if smoke else 2000
    return [_cell(scale, d, "conf", "LM", "FairVFL", 0, T, eps=e, Q=q)
            for d in datasets for e in eps_values for q in (1, 4, 7)]


def journal_lm_cells(scale, seeds=None):
    """The paper protocol: T = 10000, 5 runs, every eps, full ADULT (its 30 cells take
    about 36 s each on one core).
    """
    T = 1000 if scale == "smoke" else 10_000
    every = 1 if scale == "smoke" else 10
    return [_cell(scale, d, "journal", "LM", m, s, T, eps=e, log_every=every)
            for d in DATASETS for m, e in _methods(J_EPS[scale])
            for s in (seeds or SEEDS[scale])]


def journal_mlp_cells(scale, seeds=None):
    smoke = scale == "smoke"
    T = 150 if smoke else 1000
    widths = [16, 16] if smoke else [32, 32]
    eps_values = (0.01, 0.5) if smoke else J_EPS["paper"]
    return [_cell(scale, d, "journal", "MLP", m, s, T, eps=e, eta=2.0, widths=widths,
                  dtype="float32")
            for d in DATASETS for m, e in _methods(eps_values)
            for s in (seeds or SEEDS[scale])]
