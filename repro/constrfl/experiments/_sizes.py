"""The cells of Table 3: data set sizes after the n = 5 split and feature dimensions
(docs/decisions.md#constrfl-np-experiment); apart from :mod:`repro.constrfl.experiments.table3` so
that a cell's code identity (its static import closure) holds the computation and not the renderers.
"""

from __future__ import annotations

from repro.constrfl.data import NP_DATASETS, equal_class_split, load_np_dataset
from repro.engine.experiment import CellResult, RunContext

__all__ = ["cells", "run_cell"]


def cells(scale: str) -> list[dict]:
    return [{"dataset": ds} for ds in NP_DATASETS]


def run_cell(config: dict, ctx: RunContext) -> CellResult:
    """Counts after the n = 5 split with the reference loader's first row dropped
    (docs/decisions.md#constrfl-np-first-row), the
    categorical attributes encoded as the cell's reading says (``encoding``, default integer
    codes).
    """
    data = load_np_dataset(config["dataset"], drop_first_row=True,
                           encoding=config.get("encoding", "codes"))
    split = equal_class_split(data.y, 5)
    return CellResult(metrics={
        "n_samples_class0": float(sum(len(a) for a, _ in split)),
        "n_samples_class1": float(sum(len(b) for _, b in split)),
        "feature_dimension": float(data.d)})
