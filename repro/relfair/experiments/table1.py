"""``relfair.table1``: Table 1 of paper 002, six FL methods on MNIST / CIFAR-10 (§7, App. J.2;
docs/decisions.md#relfair-setting, docs/decisions.md#relfair-metrics,
docs/decisions.md#relfair-table1).

One cell per task x method x seed (:func:`repro.relfair.experiments._cells.table1_cells`); the
CIFAR-10 cells are ``not_run`` here (no copy of the data is reachable,
docs/deviations.md#data-unavailable). The readings of App. J.2's "J" are declared in
``_cells.READINGS``.
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
from repro.relfair.experiments.render import table1_render
from repro.relfair.experiments.reproduce import table1_reproduce

__all__ = ["TABLE1"]

TABLE1 = register(Experiment(
    name="relfair.table1",
    title="Table 1: six FL methods on MNIST/CIFAR-10, accuracy and relative fairness",
    paper=PAPER, cells=table1_cells, run_cell=training_cell, render=table1_render,
    scales=("smoke", "paper"),
    cost={"smoke": "40 s (CIFAR-10 cells not_run; all readings)",
          "paper": "MNIST, 3 seeds, all readings: ~38 CPU min at 1 thread (measured, "
                   "2 loaded cores): 15 `epochs` runs (`summed-loss` reads the same runs) of "
                   "130-145 CPU s, 18 `steps` runs of 3-19 CPU s"},
    data=MNIST_DATA, reported=("relfair_table1",), reproduce=table1_reproduce,
    readings=READINGS,
    shared_cells=SHARED_CELLS,
    methods=TABLE1_METHODS,
    claims=(
        Claim("Scaff-PD-IA has the lowest R_AB on MNIST", "§7, Table 1", claims.lowest("R_AB"),
              deviation=CLAIMS_NOTE),
        Claim("Scaff-PD-IA has the lowest Gini on MNIST", "§7, Table 1", claims.lowest("gini"),
              deviation=CLAIMS_NOTE),
        Claim("Scaff-PD-IA's average accuracy is comparable (within 0.03 of the best)",
              "§7, Table 1", claims.comparable_accuracy, deviation=CLAIMS_NOTE),
        Claim("phi = 0.2 lowers R_AB and Gini relative to Scaff-PD (phi = 0)", "§7, Table 1",
              claims.ia_beats_pd, deviation=CLAIMS_NOTE),
        Claim("Scaff-PD-IA has the lowest R_AB and Gini at comparable average accuracy",
              "§7, Table 1", claims.fairest_at_comparable_accuracy,
              deviation=CLAIMS_NOTE),
    ),
))
