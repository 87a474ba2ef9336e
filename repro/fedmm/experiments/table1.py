"""``fedmm.table1``: Office-31, Tables 1 and 2 of paper 004 (frozen MobileNetV2 features).

Tables 1 and 2 come from the same Office-31 runs (docs/decisions.md#fedmm-figures), so one
experiment, ``fedmm.table1``, holds that grid, owns both reported CSVs and renders both tables (a
separate ``fedmm.table2`` would recompute the same 54 runs). While Office-31 is absent every cell is
``not_run`` with the loader's reason.
"""

from __future__ import annotations

from repro.engine.experiment import Claim, Experiment
from repro.engine.registry import register
from repro.fedmm.data import DOMAIN
from repro.fedmm.experiments._cells import PAPER, TABLE_METHODS
from repro.fedmm.experiments._office import (  # noqa: F401  (re-exported for the tests)
    run_office_cell,
    run_table_cell,
    table_cells,
)
from repro.fedmm.experiments.claims import claim_table1, claim_table2
from repro.fedmm.experiments.render import render_tables
from repro.fedmm.experiments.reproduce import reproduce_tables


def office31_missing() -> str:
    """Why the Office-31 cells cannot run here (the loader's first line), or ``""``."""
    from repro.core.data import DataFileMissing
    from repro.core.data.office31 import find_office31

    try:
        for domain in sorted(set(DOMAIN.values())):
            find_office31(domain)
    except DataFileMissing as exc:
        return f"{str(exc).splitlines()[0]}; see docs/deviations.md#fedmm-office-31"
    return ""


register(Experiment(
    name="fedmm.table1",
    title="Office-31 grid (Tables 1 and 2): FedAvgGDA/FedSGDA/FedMM x DANN/CDAN/MDD x 6 tasks",
    paper=PAPER, methods=TABLE_METHODS, cells=table_cells, run_cell=run_table_cell,
    render=render_tables,
    scales=("smoke", "reduced", "paper"),  # no 'extended': that is the MNIST figures' GPU budget
    cost={"smoke": "not runnable without Office-31", "reduced": "~30 min per run (frozen "
          "backbone, DANN/MDD); CDAN ~3 h",
          "paper": "frozen backbone, 5,000 rounds (FedSGDA 50,000): hours to days per run"},
    reported=("fedmm_table1", "fedmm_table2"), reproduce=reproduce_tables,
    unavailable=office31_missing,
    claims=(Claim("FedMM's average accuracy beats the best baseline for every DA method "
                  "(paper: +8.2% DANN, +5.4% MDD, +9.0% CDAN relative)", "Table 1, Sec. 6",
                  claim_table1),
            Claim("FedAvgGDA and FedMM need far fewer rounds than FedSGDA (pass: FedSGDA's "
                  "mean R_conv > 2x theirs)", "Table 2, Sec. 6", claim_table2))))
