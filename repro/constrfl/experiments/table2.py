"""Table 2: fairness-constrained classification (32) on adult-b, Algorithm 1 vs cProx-AL, both
hyperparameter sets (specs/constrfl.md §4.2; the cell code is :mod:`._fair`).
"""

from __future__ import annotations

from repro.constrfl.experiments import PAPER, claims, render, reproduce
from repro.constrfl.experiments._fair import ADULT_DATA, run_cell
from repro.engine.experiment import Experiment
from repro.engine.registry import register


def cells(scale: str) -> list[dict]:
    if scale == "smoke":
        return [{"n": n, "trial": 1, "hyper": h, "k_max": 10, "t_max": 50, "subsample": 2000}
                for n in (1, 5) for h in ("script", "paper")]
    return [{"n": n, "trial": t, "hyper": h, "k_max": 300, "t_max": 50, "subsample": 0}
            for n in (1, 5, 10, 20) for t in range(1, 11) for h in ("script", "paper")]


TABLE2 = register(Experiment(
    name="constrfl.table2",
    title="Table 2: fairness-constrained classification (adult-b), both hyperparameter sets",
    paper=PAPER, cells=cells, run_cell=run_cell, render=render.table2,
    scales=("smoke", "paper"),
    cost={"smoke": "3 min",
          "paper": "~2.3 CPU-hours projected from the measured n = 1 cells (2 workers on 2 "
                   "cores: paper set 203 s a cell, script set 6 s; 40 cells each)"},
    data=ADULT_DATA, reported=("constrfl_table2",), reproduce=reproduce.table2,
    claims=claims.TABLE2))
