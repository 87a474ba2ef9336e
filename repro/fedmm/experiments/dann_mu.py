"""``fedmm.dann_mu``: a diagnostic, not an item of the paper: DANN FedMM (M = 20, p = 1) at the
paper's mu = 1 beside the authors' code's mu = 2, seeds 0-2, to tell whether FedMM's DANN runs
at the paper's step size diverge because of the algorithm at those hyperparameters.

Why: one of the first extended GPU runs of Fig. 4 (DANN FedMM M = 20 seed 2) oscillated and
then left the floats, and on the package's two-client quadratic saddle instances FedMM's
linearized round at eta = 0.01, M = 20 has spectral radius above 1 on more instances at mu = 1
than at mu = 2 (docs/deviations.md#fedmm-stability-at-the-papers-step-size). For DANN on MNIST
the authors' code differs from the paper only in mu (its psi multiplier 1/nu is 1 at nu = 1),
so the ``code`` preset is exactly mu = 2. The mu = 1 cells are Fig. 4's own (shared, computed
once). Curves carry the duals' norms, so a divergence is attributed from the records.

Scales: ``smoke`` (the tests, on the CPU), ``reduced`` and ``extended`` (the budget of Fig. 4:
a CUDA GPU protocol; under ``SCALE=auto`` a machine that would run them on its CPU records them
``not_run``, as for Figs. 2, 4 and 5).
"""

from __future__ import annotations

from repro.engine.experiment import Experiment
from repro.engine.registry import register
from repro.fedmm.experiments._cells import (
    MNIST_DATA,
    PAPER,
    SHARED_CELLS,
    accelerator,
    mnist_cell,
    run_mnist_cell,
    seeds,
)
from repro.fedmm.experiments._where import left_to_a_gpu
from repro.fedmm.experiments.render_curves import render_dann_mu

PRESETS = ("paper", "code")  # mu = 1 (the paper) and mu = 2 (the authors' code)


def dann_mu_cells(scale: str) -> list[dict]:
    """DANN FedMM M = 20, p = 1, per seed, at mu = 1 (``paper``) and mu = 2 (``code``)."""
    return [mnist_cell(scale, "DANN", "FedMM", 20, seed=s, preset=pr) for s in seeds(scale)
            for pr in PRESETS]


register(Experiment(
    name="fedmm.dann_mu",
    title="Ablation (not in the paper): DANN FedMM (M=20) at mu=1 (paper) and mu=2 (authors' "
          "code), a diagnostic of its divergence",
    paper=PAPER, methods=("FedMM",), cells=dann_mu_cells, run_cell=run_mnist_cell,
    render=render_dann_mu, scales=("smoke", "reduced", "extended"),
    cost={"smoke": "10 s (2 runs)",
          "reduced": "6 runs (the 3 at mu = 1 shared with Fig. 4): 20-45 CPU-min each on 2 "
                     "cores; under SCALE=auto on a machine that would run them on its CPU "
                     "they are recorded not_run (a GPU protocol)",
          "extended": "CUDA GPU only (scripts/gpu_fedmm_extended.sh): 6 runs of 750 rounds, "
                      "the 3 at mu = 1 shared with Fig. 4"},
    data=MNIST_DATA, shared_cells=SHARED_CELLS, accelerator=accelerator,
    # under SCALE=auto a machine that would run the cells on its CPU records them not_run
    # with the reason and remedy (._where)
    elsewhere=left_to_a_gpu))
