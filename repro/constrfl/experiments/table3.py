"""Table 3: data set sizes after the n = 5 split and feature dimensions
(specs/constrfl.md §4.1).
"""

from __future__ import annotations

from repro.constrfl.experiments import PAPER, render, reproduce
from repro.constrfl.experiments._np import NP_DATA
from repro.constrfl.experiments._sizes import cells, run_cell
from repro.engine.experiment import Experiment
from repro.engine.registry import register

TABLE3 = register(Experiment(
    name="constrfl.table3",
    title="Table 3: data set sizes after the n = 5 split and feature dimensions",
    paper=PAPER, cells=cells, run_cell=run_cell, render=render.table3,
    scales=("smoke", "paper"),
    cost={"smoke": "5 s", "paper": "5 s"}, data=NP_DATA, reported=("constrfl_table3",),
    reproduce=reproduce.table3))
