"""[J] Table 2: test ACC / DFP / DFN, MLP (eta = 2, docs/decisions.md#fairvfl-mlp-step), 1 active
+ 5 passive parties (docs/decisions.md#fairvfl-hyperparameters, docs/decisions.md#fairvfl-tables).
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
from repro.fairvfl.experiments._readings import JOURNAL_MLP_READINGS
from repro.fairvfl.experiments._run import run_cell
from repro.fairvfl.experiments.render import render_journal_table
from repro.fairvfl.experiments.reproduce import reproduce_journal

EXPERIMENT = register(Experiment(
    name="fairvfl.journal_table2",
    title="[J] Table 2: ACC/DFP/DFN, MLP (eta = 2), 1 active + 5 passive",
    methods=TABLE_METHODS, shared_cells=SHARED_CELLS,
    paper=PAPER_J, cells=journal_mlp_cells, run_cell=run_cell,
    render=lambda recs, out, scale: render_journal_table(recs, out, scale, "journal_table2"),
    cost={"smoke": "1 min", "paper": "23 min (ADULT cells ~70 s each on one core, "
                                           "COMPAS ~15 s, C&C ~10 s)"}, data=DATA,
    reported=("fairvfl_journal_table2",),
    reproduce=lambda recs: reproduce_journal(recs, "fairvfl_journal_table2", "MLP"),
    claims=(Claim("MLP trains; FairVFL(smallest eps) has lower train DEO than FedBCD",
                  "[J] §5.3, Table 2", C.mlp_trains_and_is_fairer),),
    readings=JOURNAL_MLP_READINGS))
