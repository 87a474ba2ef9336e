"""[C] Table I: AC / FR / HM of FedBCD, EO, CEO and Fair VFL (eps = 0.01), LM, all parties
active (docs/decisions.md#fairvfl-hyperparameters, docs/decisions.md#fairvfl-tables).
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
    conf_table1_cells,
)
from repro.fairvfl.experiments._readings import CONF_TABLE_READINGS
from repro.fairvfl.experiments._run import run_cell
from repro.fairvfl.experiments.render import render_conf_table1
from repro.fairvfl.experiments.reproduce import reproduce_conf_table1

EXPERIMENT = register(Experiment(
    name="fairvfl.conf_table1",
    title="[C] Table I: AC/FR/HM of FedBCD, EO, CEO and Fair VFL (eps = 0.01), LM",
    methods=TABLE_METHODS, shared_cells=SHARED_CELLS,
    paper=PAPER_C, cells=conf_table1_cells, run_cell=run_cell, render=render_conf_table1,
    cost={"smoke": "40 s", "paper": "5 min (t10000: 4 of them; the optimum readings: 15 "
                                    "FedBCD cells each, ~0.5 CPU min)"}, data=DATA,
    reported=("fairvfl_conf_table1",),
    reproduce=reproduce_conf_table1,
    claims=(Claim("Fair VFL raises FR over FedBCD (>= 10 pt ADULT, >= 5 pt others) losing "
                  "<= 6 pt AC; EO/CEO AC in [50, 100]", "[C] §V-B(a), Table I",
                  C.table1_fair_gain),),
    readings=CONF_TABLE_READINGS))
