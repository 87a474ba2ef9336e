"""[J] Fig. 2: training L(theta^t) and DEO(theta^t) against rounds, MLP, seed 0
(docs/decisions.md#fairvfl-hyperparameters, docs/decisions.md#fairvfl-figures).
"""

from __future__ import annotations

from repro.engine.experiment import Claim, Experiment
from repro.engine.registry import register
from repro.fairvfl.experiments import claims as C
from repro.fairvfl.experiments._cells import (
    DATA,
    PAPER_J,
    SHARED_CELLS,
    TABLE_METHODS,
    journal_mlp_cells,
)
from repro.fairvfl.experiments._run import run_cell
from repro.fairvfl.experiments.render import render_journal_fig

EXPERIMENT = register(Experiment(
    name="fairvfl.journal_fig2",
    title="[J] Fig. 2: L(theta^t) and DEO(theta^t), MLP, seed 0",
    methods=TABLE_METHODS, shared_cells=SHARED_CELLS,
    paper=PAPER_J, cells=lambda scale: journal_mlp_cells(scale, seeds=(0,)),
    run_cell=run_cell,
    render=lambda recs, out, scale: render_journal_fig(recs, out, scale, "journal_fig2"),
    cost={"smoke": "30 s", "paper": "5 min"}, data=DATA,
    claims=(Claim("MLP trains; FairVFL(smallest eps) has lower train DEO than FedBCD",
                  "[J] §5.3, Fig. 2", C.mlp_trains_and_is_fairer),
            Claim("(J1b) eps = 0.5 behaves like FedBCD (identical while lam = 0)", "[J] §5.3",
                  C.j1b_inactive_identical))))
