"""Table 1: Neyman-Pearson classification (30)-(31), Algorithm 1 vs cProx-AL
(docs/decisions.md#constrfl-np-experiment; the cell code is :mod:`._np`).
"""

from __future__ import annotations

from repro.constrfl.experiments import PAPER, claims, render, reproduce
from repro.constrfl.experiments._np import CAPS, METHODS, NP_DATA, SHARED_CELLS, run_cell
from repro.engine.experiment import Experiment
from repro.engine.registry import register


def cells(scale: str) -> list[dict]:
    k, t_ = CAPS[scale]
    if scale == "smoke":
        return [{"dataset": ds, "n": n, "trial": t, "mode": "paper", "k_max": k, "t_max": t_}
                for ds in ("breast-cancer-wisc", "monks-1") for n in (1, 5) for t in range(2)] + [
            {"dataset": "breast-cancer-wisc", "n": 5, "trial": 0, "mode": "reference",
             "k_max": k, "t_max": t_}]
    # Small n first, so that an interrupted paper-scale run leaves whole rows of every set.
    return [{"dataset": ds, "n": n, "trial": t, "mode": "paper", "k_max": k, "t_max": t_}
            for n in (1, 5, 10, 20) for ds in ("breast-cancer-wisc", "monks-1", "adult-a")
            for t in range(10)]


TABLE1 = register(Experiment(
    name="constrfl.table1",
    title="Table 1: Neyman-Pearson classification, Algorithm 1 vs cProx-AL",
    paper=PAPER, cells=cells, run_cell=run_cell, shared_cells=SHARED_CELLS,
    methods=METHODS, render=render.table1,
    scales=("smoke", "paper"),
    cost={"smoke": "1 min",
          "paper": "2.2 CPU-hours measured (all 120 cells, 2 workers on 2 cores; per cell: "
                   "adult-a 21-194 s, monks-1 n=20 288 s to its breakdown, the rest < 14 s)"},
    data=NP_DATA, reported=("constrfl_table1",), reproduce=reproduce.table1,
    claims=claims.TABLE1))
