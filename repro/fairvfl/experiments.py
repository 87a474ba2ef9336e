"""The Fair VFL experiments (spec ``fairvfl.md`` §7-§9): three tables and four figures.

| name                     | source          | model | roles          | T (paper) |
|--------------------------|-----------------|-------|----------------|-----------|
| fairvfl.conf_table1      | [C] Table I     | LM    | all active     | 2000      |
| fairvfl.conf_fig1        | [C] Fig. 1      | LM    | all active     | 2000      |
| fairvfl.conf_fig2        | [C] Fig. 2      | LM    | all active     | 2000      |
| fairvfl.journal_table1   | [J] Table 1     | LM    | 1 act. + 5 pas.| 10000     |
| fairvfl.journal_fig1     | [J] Fig. 1      | LM    | 1 act. + 5 pas.| 10000     |
| fairvfl.journal_table2   | [J] Table 2     | MLP   | 1 act. + 5 pas.| 1000      |
| fairvfl.journal_fig2     | [J] Fig. 2      | MLP   | 1 act. + 5 pas.| 1000      |

``smoke`` follows §12.3 (ADULT subsample of 5,000 rows, seeds {0, 1}, shorter runs).
"""

from __future__ import annotations

from repro.engine.experiment import Claim, Experiment
from repro.engine.registry import register
from repro.fairvfl import claims as C
from repro.fairvfl.data import DATASETS, data_files
from repro.fairvfl.render import (
    render_conf_fig1,
    render_conf_fig2,
    render_conf_table1,
    render_journal_fig,
    render_journal_table,
)
from repro.fairvfl.reproduce import reproduce_conf_table1, reproduce_journal
from repro.fairvfl.run import run_cell

PAPER_C, PAPER_J = "000_6d2fcaa5c94b2354.txt", "001_70acc2f5fa8635c9.txt"
SEEDS = {"smoke": (0, 1), "paper": (0, 1, 2, 3, 4)}
J_EPS = {"smoke": (0.01, 0.1, 0.5), "paper": (0.001, 0.01, 0.05, 0.1, 0.5)}
C1_EPS = {"paper": {"adult": (0.001, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4),
                    "compas": (0.001, 0.01, 0.05, 0.1, 0.15, 0.2, 0.25),
                    "crime": (0.001, 0.01, 0.05, 0.1, 0.15, 0.2, 0.25)},
          "smoke": {"adult": (0.01, 0.1, 0.4), "compas": (0.01, 0.1, 0.25),
                    "crime": (0.01, 0.1, 0.25)}}
DATA = tuple(f for d in DATASETS for f in data_files(d))


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
    """``reduced``: the paper protocol with ADULT on the 5,000-row subsample (§12.3); the
    full ADULT costs ~25 min per (eps, Q = 7) cell on 2 shared cores."""
    smoke = scale == "smoke"
    datasets = ("compas", "crime") if smoke else ("compas", "crime", "adult")
    eps_values = (0.01, 0.1) if smoke else (0.01, 0.05, 0.1)
    T = 500 if smoke else 2000
    return [_cell(scale, d, "conf", "LM", "FairVFL", 0, T, eps=e, Q=q,
                  **({"subsample": True} if scale == "reduced" and d == "adult" else {}))
            for d in datasets for e in eps_values for q in (1, 4, 7)]


def journal_lm_cells(scale, seeds=None):
    """The paper protocol: T = 10000, 5 runs, every eps, full ADULT (its 30 cells take
    ~1.5 min each on one of the 2 shared cores)."""
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


J1_CLAIMS = (
    Claim("(J1a) final L_T non-increasing in eps", "[J] §5.3, Fig. 1", C.j1a_value_monotone),
    Claim("(J1b) eps = 0.5 behaves like FedBCD (identical while lam = 0)", "[J] §5.3",
          C.j1b_inactive_identical),
    Claim("(J1c) active constraint: DEO(theta^t) -> eps", "[J] §5.3, Fig. 1",
          C.j1c_deo_to_eps),
    Claim("(J1d) eps = 0.5: DEO curve equals FedBCD's", "[J] §5.3, Fig. 1", C.j1d_deo_curve),
)

register(Experiment(
    name="fairvfl.conf_table1",
    title="[C] Table I: AC/FR/HM of FedBCD, EO, CEO and Fair VFL (eps = 0.01), LM",
    paper=PAPER_C, cells=conf_table1_cells, run_cell=run_cell, render=render_conf_table1,
    cost={"smoke": "40 s", "paper": "3 min"}, data=DATA, reported=("fairvfl_conf_table1",),
    reproduce=reproduce_conf_table1,
    claims=(Claim("Fair VFL raises FR over FedBCD (>= 10 pt ADULT, >= 5 pt others) losing "
                  "<= 6 pt AC; EO/CEO AC in [50, 100]", "[C] §V-B(a), Table I",
                  C.table1_fair_gain),)))

register(Experiment(
    name="fairvfl.conf_fig1", title="[C] Fig. 1: effect of eps on AC and FR, LM",
    paper=PAPER_C, cells=conf_fig1_cells, run_cell=run_cell, render=render_conf_fig1,
    cost={"smoke": "1 min", "paper": "10 min"}, data=DATA,
    claims=(Claim("(C1a) AC non-decreasing in eps", "[C] §V-B(b)", C.c1a_accuracy_monotone),
            Claim("(C1b) FR non-increasing in eps; +10 pt on ADULT", "[C] §V-B(b)",
                  C.c1b_fairness_monotone),
            Claim("(C1c) inactive eps: lam^T = 0 and AC = AC_FedBCD", "[C] §V-B(b)",
                  C.c1c_inactive))))

register(Experiment(
    name="fairvfl.conf_fig2", title="[C] Fig. 2: training loss vs rounds for Q in {1,4,7}",
    paper=PAPER_C, cells=conf_fig2_cells, run_cell=run_cell, render=render_conf_fig2,
    scales=("smoke", "reduced", "paper"),
    cost={"smoke": "40 s", "reduced": "15 min", "paper": "90 min"}, data=DATA,
    claims=(Claim("(C2a) smaller eps -> larger final loss, every Q", "[C] §V-B(c)",
                  C.c2a_loss_vs_eps),
            Claim("(C2b) more local updates reach the target loss in fewer rounds",
                  "[C] §V-B(c)", C.c2b_rounds_vs_q))))

register(Experiment(
    name="fairvfl.journal_table1",
    title="[J] Table 1: ACC/DFP/DFN, LM, 1 active + 5 passive parties",
    paper=PAPER_J, cells=journal_lm_cells, run_cell=run_cell,
    render=lambda recs, out, scale: render_journal_table(recs, out, scale, "journal_table1"),
    cost={"smoke": "1 min", "paper": "60 min"}, data=DATA,
    reported=("fairvfl_journal_table1",),
    reproduce=lambda recs: reproduce_journal(recs, "fairvfl_journal_table1", "LM"),
    claims=J1_CLAIMS))

register(Experiment(
    name="fairvfl.journal_fig1", title="[J] Fig. 1: L(theta^t) and DEO(theta^t), LM, seed 0",
    paper=PAPER_J, cells=lambda scale: journal_lm_cells(scale, seeds=(0,)), run_cell=run_cell,
    render=lambda recs, out, scale: render_journal_fig(recs, out, scale, "journal_fig1"),
    cost={"smoke": "30 s", "paper": "8 min"}, data=DATA, claims=J1_CLAIMS))

register(Experiment(
    name="fairvfl.journal_table2",
    title="[J] Table 2: ACC/DFP/DFN, MLP (eta = 2, §11 A15), 1 active + 5 passive",
    paper=PAPER_J, cells=journal_mlp_cells, run_cell=run_cell,
    render=lambda recs, out, scale: render_journal_table(recs, out, scale, "journal_table2"),
    cost={"smoke": "1 min", "paper": "1 h on 2 cores (ADULT cells ~3 min each, "
                                                 "COMPAS ~0.4, C&C ~0.2)"}, data=DATA,
    reported=("fairvfl_journal_table2",),
    reproduce=lambda recs: reproduce_journal(recs, "fairvfl_journal_table2", "MLP"),
    claims=(Claim("MLP trains; FairVFL(smallest eps) has lower train DEO than FedBCD",
                  "[J] §5.3, Table 2", C.mlp_trains_and_is_fairer),)))

register(Experiment(
    name="fairvfl.journal_fig2",
    title="[J] Fig. 2: L(theta^t) and DEO(theta^t), MLP, seed 0",
    paper=PAPER_J, cells=lambda scale: journal_mlp_cells(scale, seeds=(0,)),
    run_cell=run_cell,
    render=lambda recs, out, scale: render_journal_fig(recs, out, scale, "journal_fig2"),
    cost={"smoke": "30 s", "paper": "12 min"}, data=DATA,
    claims=(Claim("MLP trains; FairVFL(smallest eps) has lower train DEO than FedBCD",
                  "[J] §5.3, Fig. 2", C.mlp_trains_and_is_fairer),
            Claim("(J1b) eps = 0.5 behaves like FedBCD (identical while lam = 0)", "[J] §5.3",
                  C.j1b_inactive_identical))))
