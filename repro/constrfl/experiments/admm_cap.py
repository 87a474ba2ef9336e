"""``constrfl.admm_cap``: Table 2 with Algorithm 2 capped at T = 300 rounds instead of 50.

The paper states no iteration caps (docs/decisions.md#constrfl-caps); Table 2's cells take the
fairness script's T <= 50 ADMM rounds per call of Algorithm 2, and with it no call of the
primary's runs is certified by (23): Algorithm 1 stops by (11) on uncertified calls, and its
relative difference to cProx-AL (0.0065 / 0.0136 at n = 10 / 20) is above the printed 0.00239
/ 0.00461. This diagnostic, declared before any run, runs Table 2's cell (:func:`._fair.run_cell`,
unchanged) with the NP script's cap T <= 300, every other setting as the primary's (the script's
hyperparameters and solver tolerances, K <= 300), trials 1-10 at every n, so that each row is a
mean over the same trials as the primary's.

The comparison shows its value beside the primary's on each Table 2 row
(:class:`repro.engine.compare.causes.Diagnostic`).
"""

from __future__ import annotations

from repro.constrfl.experiments import PAPER, render
from repro.constrfl.experiments._fair import ADULT_DATA, METHODS, run_cell
from repro.constrfl.experiments.reproduce import table2
from repro.engine.compare.causes import Diagnostic, declare
from repro.engine.experiment import Experiment, Reproduced
from repro.engine.registry import register

__all__ = ["CAP", "cap_cells", "cap_rows"]

LABEL = "admm-cap-300"
T_CAP = 300   # the NP script's cap (docs/decisions.md#constrfl-caps); declared before any run


def cap_cells(scale: str) -> list[dict]:
    """Table 2's script-set cells of its primary reading with T <= 300 (smoke: n = 1 on the
    2,000-row subsample, K <= 10, trial 1).
    """
    base = {"hyper": "script", "ref_flags": "fairness", "t_max": T_CAP}
    if scale == "smoke":
        return [{**base, "n": 1, "trial": 1, "k_max": 10, "subsample": 2000}]
    return [{**base, "n": n, "trial": t, "k_max": 300, "subsample": 0}
            for n in (1, 5, 10, 20) for t in range(1, 11)]


def cap_rows(records) -> list[tuple[str, Reproduced]]:
    """The runs as Table 2's rows (Table 2's own row code)."""
    return [(LABEL, row) for row in table2(records)]


CAP = Diagnostic(
    "constrfl.admm_cap", "constrfl.table2",
    "the cap on Algorithm 2's rounds (searched: T = 300, the NP script's, for the fairness "
    "script's 50)",
    cap_rows,
    "40 runs of Table 2's script-set cell (trials 1-10, n = 1, 5, 10, 20) with T <= 300",
    labels=(LABEL,))
declare(CAP)

register(Experiment(
    name="constrfl.admm_cap",
    title="Diagnostic: Table 2 with Algorithm 2 capped at 300 rounds",
    paper=PAPER, cells=cap_cells, run_cell=run_cell, methods=METHODS,
    render=render.admm_cap, scales=("smoke", "paper"),
    cost={"smoke": "5 s", "paper": "~10 CPU min (40 cells of 5-20 s)"},
    data=ADULT_DATA))
