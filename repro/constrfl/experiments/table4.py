"""Table 4: the linear-equality-constrained QP (86), App. E.2
(docs/decisions.md#constrfl-lcqp-experiment).

Each cell is one (n, d, m~, trial, mode): cProx-AL (Algorithm 3) and Algorithm 1 from the same
``w^0``. ``mode = "reference"`` switches on the reference script's departures
(docs/decisions.md#constrfl-reference-code)
(the mode whose output the paper prints, reproduced to every printed digit);
``mode = "paper"`` is the algorithm as written. Both use the reference instance generator
(docs/decisions.md#constrfl-lcqp-generator).
"""

from __future__ import annotations

from repro.constrfl.experiments import PAPER, claims, render, reproduce
from repro.constrfl.experiments._lcqp import (  # noqa: F401  (re-exported: bench, tests)
    GRID,
    HYPER,
    METHODS,
    NS,
    cells,
    config_for,
    instance,
    lcqp_objective,
    lcqp_violation,
    run_cell,
    solve_cell,
)
from repro.engine.experiment import Experiment
from repro.engine.registry import register

TABLE4 = register(Experiment(
    name="constrfl.table4",
    title="Table 4: LCQP (86), Algorithm 1 vs cProx-AL, reference and paper modes",
    paper=PAPER, cells=cells, run_cell=run_cell, methods=METHODS, render=render.table4,
    scales=("smoke", "paper"), cost={"smoke": "10 s", "paper": "2 min"},
    reported=("constrfl_table4",), reproduce=reproduce.table4, claims=claims.TABLE4))
