"""Figure 1: per-client objective and feasibility along Algorithm 1 on Neyman-Pearson
classification, n = 5 (docs/decisions.md#constrfl-figures; the cell code is :mod:`._np`).
"""

from __future__ import annotations

from repro.constrfl.data import NP_DATASETS
from repro.constrfl.experiments import PAPER, claims, render
from repro.constrfl.experiments._np import CAPS, METHODS, NP_DATA, SHARED_CELLS, run_cell
from repro.engine.experiment import Experiment
from repro.engine.registry import register


def cells(scale: str) -> list[dict]:
    ds = ("breast-cancer-wisc", "monks-1") if scale == "smoke" else NP_DATASETS
    k, t_ = CAPS[scale]
    return [{"dataset": d, "n": 5, "trial": 0, "mode": "paper", "k_max": k, "t_max": t_}
            for d in ds]


FIG1 = register(Experiment(
    name="constrfl.fig1",
    title="Figure 1: per-client objective and feasibility along Algorithm 1 (NP, n = 5)",
    paper=PAPER, cells=cells, run_cell=run_cell, shared_cells=SHARED_CELLS,
    methods=METHODS, render=render.fig1,
    scales=("smoke", "paper"),
    cost={"smoke": "20 s", "paper": "2 CPU-min measured (adult-a 116 s, the others 11 s); none "
                                    "in a sweep with Table 1, whose runs these are (shared)"},
    data=NP_DATA, claims=claims.FIG1))
