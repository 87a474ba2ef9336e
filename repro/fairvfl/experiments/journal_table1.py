"""[J] Table 1: test ACC / DFP / DFN, LM, 1 active + 5 passive parties
(docs/decisions.md#fairvfl-hyperparameters, docs/decisions.md#fairvfl-tables).
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
from repro.fairvfl.experiments._readings import JOURNAL_LM_READINGS
from repro.fairvfl.experiments._run import run_cell
from repro.fairvfl.experiments.claims import J1_CLAIMS
from repro.fairvfl.experiments.render import render_journal_table
from repro.fairvfl.experiments.reproduce import reproduce_journal

EXPERIMENT = register(Experiment(
    name="fairvfl.journal_table1",
    title="[J] Table 1: ACC/DFP/DFN, LM, 1 active + 5 passive parties",
    methods=TABLE_METHODS, shared_cells=SHARED_CELLS,
    paper=PAPER_J, cells=journal_lm_cells, run_cell=run_cell,
    render=lambda recs, out, scale: render_journal_table(recs, out, scale, "journal_table1"),
    cost={"smoke": "1 min", "paper": "13 min (t2000: 2 of them; the optimum readings: 15 "
                                     "FedBCD cells each, ~0.5 CPU min)"}, data=DATA,
    reported=("fairvfl_journal_table1",),
    reproduce=lambda recs: reproduce_journal(recs, "fairvfl_journal_table1", "LM"),
    claims=J1_CLAIMS,
    readings=JOURNAL_LM_READINGS))
