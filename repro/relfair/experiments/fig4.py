"""``relfair.fig4``: Fig. 4 of paper 002, transformed Lorenz curves l(x) - x/2 of the MNIST
client validation losses of the six methods (seed 0; §7, docs/decisions.md#relfair-metrics).

Its cells are Table 1's MNIST seed-0 cells, so the runs equal Table 1's.
"""

from __future__ import annotations

from repro.engine.experiment import Claim, Experiment
from repro.engine.registry import register
from repro.relfair.experiments import claims
from repro.relfair.experiments._cells import (
    CLAIMS_NOTE,
    MNIST_DATA,
    PAPER,
    READINGS,
    SHARED_CELLS,
    TABLE1_METHODS,
    table1_cells,
    training_cell,
)
from repro.relfair.experiments.render import fig4_render

__all__ = ["fig4_cells"]


def fig4_cells(scale: str) -> list[dict]:
    """Table 1's MNIST cells of seed 0."""
    return [c for c in table1_cells(scale) if c["task"] == "MNIST" and c["seed"] == 0]


register(Experiment(
    name="relfair.fig4",
    title="Fig. 4: transformed Lorenz curves of MNIST client losses, six methods",
    paper=PAPER, cells=fig4_cells, run_cell=training_cell, render=fig4_render,
    scales=("smoke", "paper"),
    cost={"smoke": "20 s", "paper": "none beyond Table 1's (its 11 runs are Table 1's, "
                                    "shared_cells); alone ~13 CPU min"},
    data=MNIST_DATA,
    readings=READINGS,
    shared_cells=SHARED_CELLS,
    methods=TABLE1_METHODS,
    claims=(Claim("Scaffold's curve lies far below Scaff-PD-IA's near x = 0 and above it near "
                  "x = 1 (both halves of §7's sentence)", "§7, Fig. 4", claims.fig4_lorenz,
                  deviation=CLAIMS_NOTE),
            Claim("Scaff-PD-IA has the smallest Gini (least area above its curve)", "§7, Fig. 4",
                  claims.lowest("gini"), deviation=CLAIMS_NOTE)),
))
