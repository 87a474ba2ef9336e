"""[C] Fig. 1: the effect of eps on test AC and FR, LM, all parties active
(docs/decisions.md#fairvfl-hyperparameters, docs/decisions.md#fairvfl-figures).
"""

from __future__ import annotations

from repro.engine.experiment import Claim, Experiment
from repro.engine.registry import register
from repro.fairvfl.experiments import claims as C
from repro.fairvfl.experiments._cells import (
    DATA,
    PAPER_C,
    SHARED_CELLS,
    TABLE_METHODS,
    conf_fig1_cells,
)
from repro.fairvfl.experiments._run import run_cell
from repro.fairvfl.experiments.render import render_conf_fig1

EXPERIMENT = register(Experiment(
    name="fairvfl.conf_fig1", title="[C] Fig. 1: effect of eps on AC and FR, LM",
    methods=TABLE_METHODS, shared_cells=SHARED_CELLS,
    paper=PAPER_C, cells=conf_fig1_cells, run_cell=run_cell, render=render_conf_fig1,
    cost={"smoke": "1 min", "paper": "3 min"}, data=DATA,
    claims=(Claim("(C1a) AC non-decreasing in eps", "[C] §V-B(b)", C.c1a_accuracy_monotone),
            Claim("(C1b) FR non-increasing in eps; +10 pt on ADULT", "[C] §V-B(b)",
                  C.c1b_fairness_monotone),
            Claim("(C1c) inactive eps: lam^T = 0 and AC = AC_FedBCD", "[C] §V-B(b)",
                  C.c1c_inactive))))
