"""The cells of fedmm's Office-31 grid (Tables 1 and 2; the experiment is
:mod:`repro.fedmm.experiments.table1`).

Apart from the experiment module so that a cell's code identity (its static import closure,
:mod:`repro.engine.run.code_identity`) holds the computation and not the renderers or claims.
"""

from __future__ import annotations

import numpy as np
import torch

from repro.engine.experiment import CellResult, RunContext
from repro.fedmm.clients import allocate_two_clients
from repro.fedmm.data import DOMAIN, TASKS, office_features
from repro.fedmm.experiments._cells import TABLE_METHODS, checkpoint_path
from repro.fedmm.models import DA_METHODS, OfficeHeads
from repro.fedmm.problem import DAProblem
from repro.fedmm.training import NU, RunSpec, stream_seed, summary_metrics, train

__all__ = ["run_office_cell", "run_table_cell", "table_cells"]


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
                   config["eval_every"], eta=config.get("eta"), mu=config.get("mu"))
    train(problem, net, "office", spec, theta0,
          lambda th: problem.accuracy(th, xt_t, yt_t), ctx, checkpoint_path(ctx))
    return summary_metrics(ctx.curves["round"], ctx.curves["acc"])


def run_table_cell(config: dict, ctx: RunContext) -> CellResult:
    """One Office-31 run as the engine's cell result."""
    return CellResult(metrics=run_office_cell(config, ctx))
