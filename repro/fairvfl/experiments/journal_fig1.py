"""[J] Fig. 1: training L(theta^t) and DEO(theta^t) against rounds, LM, seed 0
(docs/decisions.md#fairvfl-hyperparameters, docs/decisions.md#fairvfl-figures).
"""

from __future__ import annotations

from repro.engine.experiment import Experiment
from repro.engine.registry import register
from repro.fairvfl.experiments._cells import (
    DATA,
    PAPER_J,
    SHARED_CELLS,
    TABLE_METHODS,
    journal_lm_cells,
)
from repro.fairvfl.experiments._run import run_cell
from repro.fairvfl.experiments.claims import J1_CLAIMS
from repro.fairvfl.experiments.render import render_journal_fig

EXPERIMENT = register(Experiment(
    name="fairvfl.journal_fig1", title="[J] Fig. 1: L(theta^t) and DEO(theta^t), LM, seed 0",
    methods=TABLE_METHODS, shared_cells=SHARED_CELLS,
    paper=PAPER_J, cells=lambda scale: journal_lm_cells(scale, seeds=(0,)), run_cell=run_cell,
    render=lambda recs, out, scale: render_journal_fig(recs, out, scale, "journal_fig1"),
    cost={"smoke": "30 s", "paper": "3 min"}, data=DATA, claims=J1_CLAIMS))
