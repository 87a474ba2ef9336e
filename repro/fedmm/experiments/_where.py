"""Where the MNIST -> MNIST-M figure cells run under ``--scale auto``.

The ``reduced`` budget of Figs. 2, 4 and 5 is full MNIST/MNIST-M for 150 rounds (FedSGDA
3,000): 20-45 min a 1 + 1 run on 2 CPU cores, about 8 min for all 63 1 + 1 runs on one H100
(:data:`repro.fedmm.experiments._cells.COST`). ``make paper-figures`` (``SCALE=auto``) on a
machine that would run them on its CPU (``$FEDREPRO_FEDMM_DEVICE`` unset: the default device is
the CPU, :func:`repro.fedmm.training.run_device`) therefore records them ``not_run`` with the
reason :func:`left_to_a_gpu` gives and computes nothing
(``Experiment.elsewhere``); the committed figures made by a GPU
run stay, and the claims are judged on their per-seed tables
(:mod:`repro.engine.records.from_outputs`,
said in ``made_by``). ``$FEDREPRO_FEDMM_CPU=1`` or an explicit ``--scale reduced`` runs them
on the CPU as before; ``smoke`` and ``extended`` are untouched (``extended`` cells name their
device, ``cuda``, and are ``not_run`` without one: :func:`repro.fedmm.experiments._cells.
run_mnist_cell`).

A policy of where to run, not part of a computation: no ``run_cell`` module imports this one,
so it is outside every record's code identity, and no cell's config, key or seed depends on it.
"""

from __future__ import annotations

import os

import torch

from repro.fedmm.experiments._cells import COST as CELL_COST
from repro.fedmm.training import DEVICE_ENV, run_device

CPU_ENV = "FEDREPRO_FEDMM_CPU"  # "1": run the reduced figure cells on the CPU under auto too
# how the committed figures/fedmm_fig{2,4,5}.* were made (registered with their loader)
MADE = "GPU-made per figures/README.md"
PER_RUN = "20-45 CPU-min per 1+1 run on 2 cores, 2x and 5x that for the 2+2 and 5+5 settings"
COST = {**CELL_COST, "reduced": CELL_COST["reduced"] + (
    "; under SCALE=auto on a machine that would run them on its CPU (FEDREPRO_FEDMM_DEVICE "
    "unset) they are not run but recorded not_run in seconds, the committed GPU-made figures "
    f"kept ({CPU_ENV}=1 or --scale reduced runs them on the CPU)")}


def run_on_cpu_anyway() -> bool:
    """Whether ``$FEDREPRO_FEDMM_CPU`` asks for the reduced figure cells on the CPU under
    ``auto`` (``1``; unset, empty or ``0``: no; anything else is an error naming it).
    """
    value = os.environ.get(CPU_ENV, "").strip()
    if value not in ("", "0", "1"):
        raise ValueError(f"${CPU_ENV}={value!r}: set it to 1 (run fedmm's reduced figure cells "
                         f"on the CPU under --scale auto) or 0 / unset (leave them to a GPU)")
    return value == "1"


def reduced_runs() -> str:
    """The runs of the three figures' ``reduced`` grids, counted from them: 1 + 1 runs (and
    how many distinct: the figures share some, computed once) and 2 + 2 / 5 + 5 runs.
    """
    from repro.engine.records.records import canonical_json
    from repro.engine.registry import get  # the figures, as registered (they import this module)

    grids = [c for name in ("fedmm.fig2", "fedmm.fig4", "fedmm.fig5")
             for c in get(name).cells("reduced")]
    one = [canonical_json(c) for c in grids if "clients" not in c]
    split = {canonical_json(c) for c in grids if "clients" in c}
    return (f"{len(one)} 1+1 runs over Figs. 2, 4 and 5, {len(set(one))} distinct, and "
            f"{len(split)} 2+2/5+5 runs of Fig. 5")


def left_to_a_gpu(scale: str) -> str:
    """The ``Experiment.elsewhere`` hook of Figs. 2, 4 and 5: at the resolved scale
    ``reduced``, on a machine that would run the cells on its CPU and without
    ``$FEDREPRO_FEDMM_CPU=1``, why they are not run here and how to run them; else ``""``.
    """
    if scale != "reduced" or run_device().type != "cpu" or run_on_cpu_anyway():
        return ""
    here = (f"its CUDA GPU needs {DEVICE_ENV}=cuda" if torch.cuda.is_available()
            else "no CUDA GPU")
    # the first clause is what `repro figures` and REPORT.md print of it (120 characters)
    return (f"a GPU protocol under SCALE=auto, not run on this CPU ({here}; {CPU_ENV}=1 runs it"
            f"): the reduced MNIST->MNIST-M budget, {reduced_runs()}, {PER_RUN}; run it "
            f"on a CUDA machine ({DEVICE_ENV}=cuda repro run 'fedmm.fig*'; the extended "
            f"budget: scripts/gpu_fedmm_extended.sh) and bring the records back, or set "
            f"{CPU_ENV}=1 (or pass --scale reduced) to run it on this CPU; the committed "
            f"figures (a GPU run, figures/README.md) stay")


__all__ = ["COST", "CPU_ENV", "MADE", "left_to_a_gpu", "reduced_runs", "run_on_cpu_anyway"]
