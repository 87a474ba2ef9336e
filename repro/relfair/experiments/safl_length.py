"""``relfair.safl_length``: a declared search for how long Table 1's SAFL ran.

App. J.2 sets "the numbers of global epochs R of all the algorithms to be 100 and the numbers of
local epochs J of all the algorithms except for SAFL to be 5". Stochastic-AFL takes one
minibatch gradient per round (docs/decisions.md#relfair-safl-steps), so the primary runs it for
R = 100 rounds: 100 gradient steps in all, against 500 or more for every other method, and its
rows fall below the printed ones (acc_all .843 against .8976;
docs/deviations.md#relfair-table-1-safl-less-accurate-one-minibatch-step-per-round). How much
work R = 100 "global epochs" means for a method without local epochs is not stated. This
search, declared before any run, keeps SAFL's update and step sizes and varies only the number
of rounds:

======================  ======================================================================
``safl-rounds-500``     500 rounds: as many gradient steps as a method with J = 5 steps per
                        round takes in 100 rounds (Table 1's ``steps`` reading)
``safl-rounds-1500``    1,500 rounds: 100 passes over a client's training split of the mean
                        size (60,000 MNIST rows over 100 clients, 80 % for training: 480
                        rows, 15 minibatches of B = 32), "100 global epochs" read as passes
======================  ======================================================================

Each setting runs Table 1's three seeds (its partitions, θ⁰ and minibatch streams), so each
row is a mean over the same seeds as the primary's. The comparison shows each setting's value
beside the primary's on SAFL's five rows (:class:`repro.engine.compare.causes.Diagnostic`).
"""

from __future__ import annotations

from repro.engine.compare.causes import Diagnostic
from repro.engine.experiment import Experiment, Reproduced
from repro.engine.records.query import by
from repro.engine.registry import register
from repro.relfair.experiments._cells import METRICS, MNIST_DATA, PAPER, training_cell
from repro.relfair.experiments._training import SCALES
from repro.relfair.experiments.render import safl_length_render

__all__ = ["LENGTH", "length_cells", "length_rows"]

# label -> rounds at paper scale; declared before any run
SETTINGS = {"safl-rounds-500": 500, "safl-rounds-1500": 1500}
SEEDS = (0, 1, 2)   # Table 1's seeds


def length_cells(scale: str) -> list[dict]:
    """SAFL per setting and seed; the smoke scale runs the smoke clients for 2x and 6x its
    rounds, one seed.
    """
    s = SCALES[scale]
    base = {"task": "MNIST", "method": "SAFL",
            **{k: s[k] for k in ("n_clients", "subset", "local_steps", "batch")}}
    if scale != "paper":
        return [{**base, "setting": label, "seed": 0, "rounds": 2 * s["rounds"] * (i * 2 + 1),
                 "eval_every": s["eval_every"]} for i, label in enumerate(SETTINGS)]
    return [{**base, "setting": label, "seed": seed, "rounds": rounds,
             "eval_every": rounds // 10}
            for label, rounds in SETTINGS.items() for seed in SEEDS]


def length_rows(records) -> list[tuple[str, Reproduced]]:
    """Each setting's runs as SAFL's rows of Table 1 (one value per seed)."""
    out = []
    for (setting,), recs in sorted(by(records, "setting").items()):
        recs = sorted(recs, key=lambda r: r.config["seed"])
        for metric in METRICS:
            out.append((setting, Reproduced(
                "relfair_table1", {"task": "MNIST", "method": "SAFL"}, metric,
                tuple(float(r.metrics[metric]) for r in recs), over="seeds", n_paper=1)))
    return out


LENGTH = Diagnostic(
    "relfair.safl_length", "relfair.table1",
    "SAFL's run length (searched: 500 and 1,500 rounds of one gradient step)",
    length_rows,
    "6 SAFL runs (seeds 0-2 of Table 1): 500 rounds and 1,500 rounds, SAFL's update and step "
    "sizes unchanged; about 10 CPU minutes",
    labels=tuple(SETTINGS))

register(Experiment(
    name="relfair.safl_length",
    title="Search: how many rounds of one gradient step Table 1's SAFL ran",
    paper=PAPER, cells=length_cells, run_cell=training_cell, scales=("smoke", "paper"),
    cost={"smoke": "5 s", "paper": "~10 CPU min (3 runs of 500 rounds, 3 of 1,500)"},
    data=MNIST_DATA, methods=("SAFL",), render=safl_length_render))
