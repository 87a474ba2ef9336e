"""``fedmm.fig5``: Fig. 5 of paper 004, FedMM vs FedAvgGDA vs FedProxGDA on MNIST -> MNIST-M,
in the 1 + 1, 2 + 2 and 5 + 5 client settings.
"""

from __future__ import annotations

from repro.engine.experiment import Claim, Experiment
from repro.engine.registry import register
from repro.fedmm.experiments import claims
from repro.fedmm.experiments._cells import (
    CLIENT_SETTINGS,
    MNIST_DATA,
    PAPER,
    SCALES,
    SHARED_CELLS,
    accelerator,
    mnist_cell,
    run_mnist_cell,
    seeds,
)
from repro.fedmm.experiments._where import COST, MADE, left_to_a_gpu
from repro.fedmm.experiments.budgets import with_budget
from repro.fedmm.experiments.render import render_fig5
from repro.fedmm.experiments.tables import table_records
from repro.fedmm.models import DA_METHODS

METHODS = ("FedMM", "FedAvgGDA", "FedProxGDA")  # the library methods Fig. 5 runs, its order


def fig5_cells(scale: str) -> list[dict]:
    """1 + 1 clients (p = 1, the cells Fig. 4 shares) and the N_s + N_t settings 2 + 2 and
    5 + 5 (``clients`` in the config: each domain split evenly over single-domain clients),
    at the same budget per run.
    """
    base = [mnist_cell(scale, da, alg, 20, seed=s) for s in seeds(scale)
            for da in DA_METHODS for alg in METHODS]
    split = [{**mnist_cell(scale, da, alg, 20, seed=s), "clients": setting}
             for setting in CLIENT_SETTINGS for s in seeds(scale) for da in DA_METHODS
             for alg in METHODS]
    return base + split


register(Experiment(
    name="fedmm.fig5", title="FedMM vs FedAvgGDA vs FedProxGDA, MNIST->MNIST-M",
    paper=PAPER, methods=METHODS, cells=fig5_cells, run_cell=run_mnist_cell, render=render_fig5,
    scales=SCALES, cost=COST, data=MNIST_DATA, shared_cells=SHARED_CELLS,
    accelerator=accelerator,
    # without run records here (they need a GPU) the claims are judged on the committed
    # per-seed table; under SCALE=auto a machine that would run the cells on its CPU
    # records them not_run with the reason and remedy (._where)
    from_outputs=("fedmm_fig5.csv", table_records, MADE), elsewhere=left_to_a_gpu,
    claims=(Claim("FedMM has > 20 pp higher target accuracy than FedAvgGDA/FedProxGDA (each "
                  "client setting)", "Fig. 5, Sec. 6", with_budget(claims.claim_fig5)),)))
