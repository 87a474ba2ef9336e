"""[C] Fig. 2: training loss against rounds for Q in {1, 4, 7} local updates
(docs/decisions.md#fairvfl-hyperparameters, docs/decisions.md#fairvfl-figures). Its paper scale
takes about 4 min on 2 cores (27 cells, the full ADULT).
"""

from __future__ import annotations

from repro.engine.experiment import Claim, Experiment
from repro.engine.registry import register
from repro.fairvfl.experiments import claims as C
from repro.fairvfl.experiments._cells import CONF_FIG2_METHODS, DATA, PAPER_C, conf_fig2_cells
from repro.fairvfl.experiments._run import run_cell
from repro.fairvfl.experiments.render import render_conf_fig2

EXPERIMENT = register(Experiment(
    name="fairvfl.conf_fig2", title="[C] Fig. 2: training loss vs rounds for Q in {1,4,7}",
    methods=CONF_FIG2_METHODS,
    paper=PAPER_C, cells=conf_fig2_cells, run_cell=run_cell, render=render_conf_fig2,
    cost={"smoke": "40 s", "paper": "4 min"}, data=DATA,
    claims=(Claim("(C2a) smaller eps -> larger final loss, every Q", "[C] §V-B(c)",
                  C.c2a_loss_vs_eps),
            Claim("(C2b) more local updates reach the target loss in fewer rounds",
                  "[C] §V-B(c)", C.c2b_rounds_vs_q))))
