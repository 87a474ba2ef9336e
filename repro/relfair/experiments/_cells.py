"""What Table 1, Fig. 4 and the server-step ablation share: the paper's file, the cells of a
training sweep, the readings of App. J.2, the deviation notes, and one cell runner.
"""

from __future__ import annotations

from repro.engine.experiment import CellResult, RunContext
from repro.engine.readings import Reading
from repro.relfair.data import TASKS
from repro.relfair.experiments._training import SCALES, TRAINED, run_training

__all__ = ["CLAIMS_NOTE", "DEV", "DEVIATION_NOTE", "METRICS", "MNIST_DATA",
           "PAPER", "READINGS", "SEEDS", "TABLE1_METHODS", "table1_cells", "training_cell"]

PAPER = "002_fd6ea8b278c89851.txt"
MNIST_DATA = (("mnist", "train-images-idx3-ubyte.gz"), ("mnist", "train-labels-idx1-ubyte.gz"))
METRICS = ("acc_all", "acc_worst20", "acc_best20", "R_AB", "gini")
DEV = "docs/deviations.md"
DEVIATION_NOTE = f"{DEV}#relfair-table-1-deviations"
CLAIMS_NOTE = f"{DEV}#relfair-claims"  # linked by every failing or inconclusive claim
SEEDS = {"smoke": (0,), "paper": (0, 1, 2)}
# Table 1's methods in its order (App. J.2): the methods of its cells, Fig. 4's curves, the
# claims and the rendered table (a table names its methods; the library's METHODS,
# repro/relfair/methods/, may hold more)
TABLE1_METHODS = tuple(TRAINED)


# =========================================================================== readings

def _not_safl(config: dict) -> bool:
    return config["method"] != "SAFL"


J2_EPOCHS = (f"{PAPER} App. J.2 (line 1261): \"We set the numbers of global epochs R of all the "
             "algorithms to be 100 and the numbers of local epochs J of all the algorithms "
             "except for SAFL to be 5\"")
# Chosen by the text before any run: the paper's own settings appendix (J.2) wins over the
# generic "for j = 1..J" of Alg. 2 (docs/decisions.md#relfair-local-work, docs/deviations.md).
READINGS = (
    Reading("epochs", "J = 5 local epochs (App. J.2): client i takes 5 ceil(N_i/B) minibatch "
            "steps per round; the Scaffold-type methods normalise Delta u by eta 5 (one Alg. 2 "
            "step = one epoch), tau = 2.5e-2, eta = 1e-2; FedAvg/DRFA lr 0.1; SAFL one "
            "FedSGD step per round", basis=J2_EPOCHS,
            spec="relfair-local-work, relfair-server-normalisation",
            overrides={"local_work": "epochs"}, applies_to=_not_safl, primary=True),
    Reading("steps", "J = 5 local SGD steps of B = 32 (Alg. 2's j = 1..J read as minibatch "
            "steps)",
            basis=f"{PAPER} Alg. 2 (\"for j = 1, ..., J\") and "
                  "docs/decisions.md#relfair-local-work",
            spec="relfair-local-work"),
    Reading("summed-loss", "as `epochs`, with R_AB and Gini of the per-client validation losses "
            "summed over samples (the paper never says mean; its Penguins losses are sums)",
            basis=f"{PAPER} §7 / Fig. 4 (\"loss\" of each client, unqualified) and the "
                  "Penguins loss of §4.3 (a sum over samples)", spec="relfair-loss-mean-or-sum",
            overrides={"local_work": "epochs"}, applies_to=_not_safl,
            metrics={"R_AB": "R_AB_summed", "gini": "gini_summed"}),
)


# =========================================================================== cells

# Table 1, Fig. 4 and the server-step ablation plan some identical training runs (Fig. 4's cells
# are Table 1's MNIST seed-0 cells): a run's numbers depend on its config only (its streams come
# from ``shared_context`` of the config, never from the experiment or the cell seed), so a sweep
# computes a shared run once (Experiment.shared_cells).
SHARED_CELLS = "relfair.training"


def table1_cells(scale: str) -> list[dict]:
    """Task x method x seed at ``scale`` (docs/decisions.md#relfair-setting,
    docs/decisions.md#relfair-cost).
    """
    s = SCALES[scale]
    return [{"task": task, "method": m, "seed": seed, **{k: s[k] for k in (
        "n_clients", "subset", "rounds", "local_steps", "batch", "eval_every")}}
            for task in TASKS for m in TABLE1_METHODS for seed in SEEDS[scale]]


def training_cell(config: dict, ctx: RunContext) -> CellResult:
    """One training run (:func:`repro.relfair.experiments._training.run_training`)."""
    metrics, curves = run_training(config, ctx)
    return CellResult(metrics=metrics, curves=curves)
