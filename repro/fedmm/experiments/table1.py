"""``fedmm.table1``: Office-31, Tables 1 and 2 of paper 004 (frozen MobileNetV2 features).

Tables 1 and 2 come from the same Office-31 runs (specs/fedmm.md §8), so one experiment,
``fedmm.table1``, holds that grid, owns both reported CSVs and renders both tables (a separate
``fedmm.table2`` would recompute the same 54 runs). While Office-31 is absent every cell is
``not_run`` with the loader's reason.
"""

from __future__ import annotations

import numpy as np
import torch

from repro.engine.experiment import CellResult, Claim, Experiment, RunContext
from repro.engine.registry import register
from repro.fedmm.clients import allocate_two_clients
from repro.fedmm.data import DOMAIN, TASKS, office_features
from repro.fedmm.experiments._cells import PAPER, TABLE_METHODS, checkpoint_path
from repro.fedmm.experiments.claims import claim_table1, claim_table2
from repro.fedmm.experiments.render import render_tables
from repro.fedmm.experiments.reproduce import reproduce_tables
from repro.fedmm.models import DA_METHODS, OfficeHeads
from repro.fedmm.problem import DAProblem
from repro.fedmm.training import NU, RunSpec, stream_seed, summary_metrics, train


def table_cells(scale: str) -> list[dict]:
    """The 54 cells of Tables 1-2: 6 tasks x 3 methods x 3 DA methods, seed 0; M = 20
    (FedSGDA: 1); rounds per scale (FedSGDA 10-20x, same budget of local steps).
    """
    out = []
    for task in TASKS:
        for alg in TABLE_METHODS:
            for da in DA_METHODS:
                sgda = alg == "FedSGDA"
                if scale == "smoke":
                    r, e, b = 2, 1, 16
                elif scale == "reduced":
                    r, e, b = (4000, 200, 64) if sgda else (200, 10, 64)
                else:
                    r, e, b = (50000, 500, 64) if sgda else (5000, 50, 64)
                out.append({"task": task, "algorithm": alg, "da": da, "seed": 0, "rounds": r,
                            "local_steps": 1 if sgda else 20, "eval_every": e, "batch": b})
    return out


def run_office_cell(config: dict, ctx: RunContext) -> dict:
    """Train one (task, algorithm, DA method) cell; returns the metrics dict."""
    src, tgt = (DOMAIN[s] for s in config["task"].split("->"))
    size = config.get("image_size", 224)
    xs, ys = office_features(src, size)
    xt, yt = office_features(tgt, size)
    da, seed = config["da"], config["seed"]
    net = OfficeHeads(da, feature_in=xs.shape[1], n_classes=int(max(ys.max(), yt.max()) + 1))
    clients = allocate_two_clients(len(xs), len(xt), 1.0)
    base = ("office", config["task"], da, seed)
    rngs = [(np.random.default_rng(stream_seed(*base, "batches", i, "source")),
             np.random.default_rng(stream_seed(*base, "batches", i, "target")))
            for i in range(2)]
    gens = [torch.Generator().manual_seed(stream_seed(*base, "dropout", i)) for i in range(2)]
    xs_t, xt_t = torch.from_numpy(xs), torch.from_numpy(xt)
    problem = DAProblem(net, NU["office"][da], clients, xs_t, torch.from_numpy(ys), xt_t,
                        config["batch"], rngs, gens)
    theta0 = net.init(torch.Generator().manual_seed(stream_seed(*base, "init")))
    yt_t = torch.from_numpy(yt)
    spec = RunSpec(config["algorithm"], config["rounds"], config["local_steps"],
                   config["eval_every"])
    train(problem, net, "office", spec, theta0,
          lambda th: problem.accuracy(th, xt_t, yt_t), ctx, checkpoint_path(ctx))
    return summary_metrics(ctx.curves["round"], ctx.curves["acc"])


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


def run_table_cell(config: dict, ctx: RunContext) -> CellResult:
    """One Office-31 run as the engine's cell result."""
    return CellResult(metrics=run_office_cell(config, ctx))


register(Experiment(
    name="fedmm.table1",
    title="Office-31 grid (Tables 1 and 2): FedAvgGDA/FedSGDA/FedMM x DANN/CDAN/MDD x 6 tasks",
    paper=PAPER, cells=table_cells, run_cell=run_table_cell, render=render_tables,
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
