"""Figure 2: local objectives and loss disparities along Algorithm 1 on adult-b
(docs/decisions.md#constrfl-figures; the cell code is :mod:`._fair`).
"""

from __future__ import annotations

from repro.constrfl.experiments import PAPER, claims, render
from repro.constrfl.experiments._fair import ADULT_DATA, METHODS, SHARED_CELLS, run_cell
from repro.engine.experiment import Experiment
from repro.engine.registry import register


def cells(scale: str) -> list[dict]:
    ns = (5,) if scale == "smoke" else (5, 10, 20)
    sub = 2000 if scale == "smoke" else 0
    k = 10 if scale == "smoke" else 300
    return [{"n": n, "trial": 1, "hyper": "script", "k_max": k, "t_max": 50, "subsample": sub}
            for n in ns]


FIG2 = register(Experiment(
    name="constrfl.fig2",
    title="Figure 2: local objectives and disparities along Algorithm 1 (adult-b)",
    paper=PAPER, cells=cells, run_cell=run_cell, shared_cells=SHARED_CELLS,
    methods=METHODS, render=render.fig2,
    scales=("smoke", "paper"),
    cost={"smoke": "1 min", "paper": "31 CPU s measured (n = 5, 10, 20: 20, 6, 5 s); none in a "
                                     "sweep with Table 2, whose runs these are (shared)"},
    data=ADULT_DATA, claims=claims.FIG2))
