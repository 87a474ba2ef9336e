"""``relfair.ablation_server_step`` (not a paper item): the global step tau of Alg. 1 line 15.

Tests the explanation of the Scaffold-type deviation
(docs/decisions.md#relfair-server-normalisation) by rerunning the three Scaffold-type methods with
tau = 0.1 (beta = tau/(eta J) = 2) next to App. J.2's 0.025; MNIST, seed 0. The tau = 0.025 cells
equal Table 1's runs (same shared randomness, ``_training.shared_context``).
"""

from __future__ import annotations

from repro.engine.experiment import Experiment
from repro.engine.registry import register
from repro.relfair.experiments._cells import (
    MNIST_DATA,
    PAPER,
    SHARED_CELLS,
    table1_cells,
    training_cell,
)
from repro.relfair.experiments.render import ablation_render

__all__ = ["ABLATION_METHODS", "ABLATION_TAUS", "ablation_cells"]

ABLATION_METHODS = ("Scaffold", "Scaff-PD", "Scaff-PD-IA")
ABLATION_TAUS = (0.025, 0.1)


def ablation_cells(scale: str) -> list[dict]:
    """Table 1's MNIST seed-0 cells of the Scaffold-type methods, once per tau."""
    base = [c for c in table1_cells(scale) if c["task"] == "MNIST" and c["seed"] == 0
            and c["method"] in ABLATION_METHODS]
    return [{**c, "tau": tau} for c in base for tau in ABLATION_TAUS]


register(Experiment(
    name="relfair.ablation_server_step",
    title="Ablation (not in the paper): server step tau of the Scaffold-type methods",
    paper=PAPER, cells=ablation_cells, run_cell=training_cell, render=ablation_render,
    scales=("smoke", "paper"),
    cost={"smoke": "15 s", "paper": "~2 CPU min (6 `steps` runs of 11-19 CPU s, measured)"},
    data=MNIST_DATA,
    shared_cells=SHARED_CELLS,
    methods=ABLATION_METHODS,
))
