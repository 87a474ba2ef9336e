"""Table 3: data set sizes after the n = 5 split and feature dimensions
(specs/constrfl.md §4.1).
"""

from __future__ import annotations

from repro.constrfl.data import NP_DATASETS, equal_class_split, load_np_dataset
from repro.constrfl.experiments import PAPER, render, reproduce
from repro.constrfl.experiments._np import NP_DATA
from repro.engine.experiment import CellResult, Experiment, RunContext
from repro.engine.registry import register


def cells(scale: str) -> list[dict]:
    return [{"dataset": ds} for ds in NP_DATASETS]


def run_cell(config: dict, ctx: RunContext) -> CellResult:
    """Counts after the n = 5 split with the reference loader's first row dropped (D8)."""
    data = load_np_dataset(config["dataset"], drop_first_row=True)
    split = equal_class_split(data.y, 5)
    return CellResult(metrics={
        "n_samples_class0": float(sum(len(a) for a, _ in split)),
        "n_samples_class1": float(sum(len(b) for _, b in split)),
        "feature_dimension": float(data.d)})


TABLE3 = register(Experiment(
    name="constrfl.table3",
    title="Table 3: data set sizes after the n = 5 split and feature dimensions",
    paper=PAPER, cells=cells, run_cell=run_cell, render=render.table3,
    scales=("smoke", "paper"),
    cost={"smoke": "5 s", "paper": "5 s"}, data=NP_DATA, reported=("constrfl_table3",),
    reproduce=reproduce.table3))
