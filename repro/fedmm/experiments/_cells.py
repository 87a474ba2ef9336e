"""Shared cell code of paper 004's experiments: the MNIST -> MNIST-M grid and its one run.

Scales (docs/decisions.md#fedmm-scales): ``smoke`` (tests: 512 + 512 training images, 256 test
images, batch 16, M = 2, 3 rounds); ``reduced`` (default of ``SCALE=auto``: full data and model,
batch 64, p = 1, 150 rounds for FedMM/FedAvgGDA/FedProxGDA and 3,000 for FedSGDA (same number of
gradient evaluations), evaluation every 10 rounds (FedSGDA 200) on a fixed 2,000-image MNIST-M
test subset and on all 10,000 at the end, a checkpoint every 25 rounds, seeds 0-2 with claims
on the seed mean; Office-31 with a frozen backbone, 200 rounds, FedSGDA 4,000); ``extended``
(MNIST -> MNIST-M only: ``reduced`` with five times the rounds, 750 and FedSGDA
15,000, the same evaluation schedule, so 75 evaluations a run and the first 150 rounds are the
``reduced`` run's; seeds 0-2; a CUDA GPU protocol: its cells say ``device: cuda`` and the
``graphed`` backend, and on a machine without a GPU they are recorded ``not_run``, never run on
the CPU; ``SCALE=auto`` uses it where its records exist,
:func:`repro.engine.run.runner.auto_scale`);
``paper`` (README rounds: DANN 15,000, CDAN 30,000, MDD 50,000; for a GPU machine or a
cluster).

The experiments (one module per paper item): :mod:`.fig2`, :mod:`.fig4`, :mod:`.fig5` (MNIST ->
MNIST-M) and :mod:`.table1` (Office-31, Tables 1 and 2).
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import numpy as np
import torch

from repro.engine.experiment import CellResult, NeedsAccelerator, RunContext
from repro.fedmm.clients import (
    allocate_split_clients,
    allocate_two_clients,
    code_evaluated_client,
)
from repro.fedmm.data import mnist_split, mnistm_split

# The method modules the experiments' cells run (each experiment's ``methods``), imported here
# so that they are in the cells' static import closure, the records' code identity
# (repro.engine.run.code_identity; training.build finds them by name, which that closure cannot
# follow). A method no experiment runs is not imported, and no record depends on it.
from repro.fedmm.methods import fedavg_gda, fedmm, fedprox_gda, fedsgda  # noqa: F401
from repro.fedmm.models import MnistNet
from repro.fedmm.problem import DAProblem
from repro.fedmm.training import (
    NU,
    RunSpec,
    checkpoint_name,
    choose_backend,
    run_device,
    stream_seed,
    summary_metrics,
    train,
)

PAPER = "004_c8bdd02f5ea2bb8e.txt"
MNIST_DATA = (("mnist", "train-images-idx3-ubyte.gz"), ("mnist", "train-labels-idx1-ubyte.gz"),
              ("mnist", "t10k-images-idx3-ubyte.gz"), ("mnist", "t10k-labels-idx1-ubyte.gz"))
PAPER_ROUNDS = {"DANN": 15000, "CDAN": 30000, "MDD": 50000}
SCALES = ("smoke", "reduced", "extended", "paper")
EXTENDED_FACTOR = 5  # five times the reduced budget
COST = {"smoke": "20 s (Fig. 5 with its 2+2 and 5+5 settings: ~1 min)",
        "reduced": "63 runs (3 seeds; 51 distinct: Figs. 2, 4, 5 share 12, computed once): "
        "20-45 min each on 2 CPU cores; 8 min for all 63 on one "
        "H100 (FEDREPRO_FEDMM_DEVICE=cuda, --jobs 21, CUDA MPS, eager vmapped backend); "
        "Fig. 5's 2+2 and 5+5 settings add 54 runs costing 2x and 5x a 1+1 run (not measured)",
        "extended": "CUDA GPU only (scripts/gpu_fedmm_extended.sh); not measured yet: 5x the "
        "reduced rounds: 798,750 two-client local steps for the 51 distinct 1+1 runs, 23 "
        "GPU-min at the eager backend's measured 577 steps/s (H100, MPS), the graphed "
        "backend's rate unmeasured; Fig. 5's 2+2 and 5+5 settings 3.5x more",
        "paper": "33-150 CPU-h per run; GPU or cluster"}
# Figs. 2, 4 and 5 share runs (Fig. 5's FedMM M = 20 cells are Fig. 4's, its CDAN FedAvgGDA
# cells Fig. 2's p = 1): a run's numbers depend on its config only (every stream is keyed by
# stream_seed of the config, never by the experiment or the cell seed), so a sweep computes a
# shared run once (Experiment.shared_cells): 12 of the 63 reduced 1+1 runs.
SHARED_CELLS = "fedmm.mnist"
CLIENT_SETTINGS = ("2+2", "5+5")  # Fig. 5's other settings (docs/decisions.md#fedmm-clients [R])
TABLE_METHODS = ("FedAvgGDA", "FedSGDA", "FedMM")  # the library methods of Tables 1 and 2


def checkpoint_path(ctx: RunContext) -> Path:
    """A cell's checkpoint file: in the run's artifact folder (``ctx.artifacts``, under the
    results folder, so ``--results DIR`` moves it), named by the cell's seed and the code's
    identity, so that code edited since is never resumed from it.
    """
    return ctx.artifacts / checkpoint_name(ctx.seed, ctx.code)


def _scale_params(scale: str, da: str, algorithm: str) -> dict:
    if scale == "smoke":
        return {"n_source": 512, "n_target": 512, "n_test": 256, "eval_subset": 64,
                "batch": 16, "rounds": 3, "eval_every": 1, "m_scale": "smoke"}
    sgda = algorithm == "FedSGDA"
    if scale in ("reduced", "extended"):
        k = EXTENDED_FACTOR if scale == "extended" else 1
        return {"n_source": 55000, "n_target": 55000, "n_test": 10000, "eval_subset": 2000,
                "batch": 64, "rounds": k * (3000 if sgda else 150),
                "eval_every": 200 if sgda else 10}
    r = PAPER_ROUNDS[da]
    return {"n_source": 55000, "n_target": 55000, "n_test": 10000, "eval_subset": 10000,
            "batch": 64, "rounds": 20 * r if sgda else r, "eval_every": 2000 if sgda else 100}


def mnist_cell(scale, da, algorithm, M, p=1.0, seed=0, preset="paper") -> dict:
    """A cell's config. ``backend`` is the local-step backend chosen for the device the
    sweep runs on (:func:`repro.fedmm.training.choose_backend`: loop on CPU, graphed on CUDA,
    $FEDREPRO_FEDMM_BACKEND overrides); it is part of the identity, so CPU-loop and
    GPU-vmapped records are never mixed. ``preset``: the hyperparameters of
    :func:`repro.fedmm.training.blocks_for` (``paper``: mu = 1; ``code``: the authors' code,
    mu = 2).
    """
    params = _scale_params(scale, da, algorithm)
    smoke = params.pop("m_scale", None) == "smoke"
    local = 1 if algorithm == "FedSGDA" else (2 if smoke and M == 20 else
                                              3 if smoke and M == 25 else M)
    if scale == "extended":  # a GPU protocol wherever the sweep is planned
        where = {"backend": choose_backend("cuda"), "device": "cuda"}
    else:
        where = {"backend": choose_backend(run_device())}
    return {"da": da, "algorithm": algorithm, "local_steps": local, "p": p, "seed": seed,
            "preset": preset, **where, **params}


def seeds(scale: str) -> tuple[int, ...]:
    """docs/decisions.md#fedmm-scales: seed 0 first, then seeds 1-2. Adversarial training is very
    sensitive to its seed (one nondeterministic GPU sweep moved a DANN FedMM final accuracy from
    0.50 to 0.28), so the reduced protocol runs all three and the claims use the mean over seeds.
    """
    return (0, 1, 2) if scale in ("reduced", "extended") else (0,)


def allocate(config: dict, n_source: int, n_target: int):
    """The clients of a cell: two clients with imbalance p, or the split setting
    ``clients = "Ns+Nt"`` (Ns source-only and Nt target-only clients).
    """
    if "clients" not in config:
        return allocate_two_clients(n_source, n_target, config["p"])
    try:
        ns, nt = (int(x) for x in str(config["clients"]).split("+"))
    except ValueError:
        raise ValueError(f"repro/fedmm/experiments: clients must look like '2+2' (source "
                         f"clients + target clients), got {config['clients']!r}") from None
    return allocate_split_clients(n_source, n_target, ns, nt)


@cache
def _mnist_data(n_source: int, n_target: int, n_test: int):
    xs, ys = mnist_split("train")
    xt, _ = mnistm_split("train", None if n_target == 55000 else n_target)
    xe, ye = mnistm_split("test", None if n_test == 10000 else n_test)
    return (torch.from_numpy(np.ascontiguousarray(xs[:n_source])),
            torch.from_numpy(ys[:n_source]), torch.from_numpy(np.ascontiguousarray(xt)),
            torch.from_numpy(np.ascontiguousarray(xe)), torch.from_numpy(ye))


MDD_DIAG_ROWS = 256  # source and target training rows of MDD's margin diagnostic, each


def mdd_diagnose(problem: DAProblem, xs: torch.Tensor, xt: torch.Tensor, seed: int):
    """MDD's diagnostic at each evaluation: the largest ``-log a[yhat]`` over a fixed set of
    source and of target training rows (drawn once from the cell's seed, evaluated together as
    one batch, as a training minibatch mixes them), over the global model and every client's
    local iterate. A probability-space MDD loss overflows once these pass about 89 (source)
    and 104 (target) in float32 (:mod:`repro.fedmm.adaptation`).
    """
    rng = np.random.default_rng(stream_seed("mnist-diag", seed))
    n = min(MDD_DIAG_ROWS, len(xs), len(xt))
    i_s = torch.from_numpy(np.sort(rng.choice(len(xs), size=n, replace=False)))
    i_t = torch.from_numpy(np.sort(rng.choice(len(xt), size=n, replace=False)))
    x = torch.cat([xs[i_s.to(xs.device)], xt[i_t.to(xt.device)]])

    def diagnose(state) -> dict[str, float]:
        v = torch.stack([problem.adversary_neg_log_a(th, x)
                         for th in (state.theta0, *state.local)])
        return {"mdd_neg_log_a_source_max": float(v[:, :n].max().double()),
                "mdd_neg_log_a_target_max": float(v[:, n:].max().double())}
    return diagnose


def accelerator(config: dict) -> str:
    """The accelerator model a cell's config runs on here, for its record's identity: the CUDA
    device's name (``torch.cuda.get_device_name``) where the cell runs on a CUDA device this
    machine has, else ``""`` (the CPU, or a device this machine lacks: such a cell is not run
    here). Records of two GPU models differ in their last bits, so their keys differ too.
    """
    device = torch.device(config["device"]) if "device" in config else run_device()
    if device.type == "cuda" and torch.cuda.is_available():
        return torch.cuda.get_device_name(device)
    return ""


def run_mnist_cell(config: dict, ctx: RunContext) -> CellResult:
    """One federated MNIST -> MNIST-M run; the global model is evaluated
    (docs/decisions.md#fedmm-metrics).
    """
    da, seed = config["da"], config["seed"]
    # $FEDREPRO_FEDMM_DEVICE (e.g. "cuda") puts data and parameters on an accelerator; the
    # numbers then differ from CPU records in the last bits, so the device is logged. A cell
    # whose config names its device (``extended``) runs there or not at all.
    device = torch.device(config["device"]) if "device" in config else run_device()
    if device.type == "cuda" and not torch.cuda.is_available():
        raise NeedsAccelerator(
            f"this cell's protocol runs on a CUDA GPU (config device {device}) and torch "
            f"{torch.__version__} sees none here; run it on a GPU machine "
            f"(scripts/gpu_fedmm_extended.sh) and bring its records back to the results "
            f"folder")
    if device.type == "cuda":
        # Without this, cuDNN/atomic-add kernels make two runs of one cell differ, and the
        # adversarial game amplifies that: the first GPU sweep gave DANN FedMM final
        # accuracies 0.28 and 0.56 for two identical configs. Needs CUBLAS_WORKSPACE_CONFIG.
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        # FEDREPRO_FEDMM_DETERMINISM=warn runs on where an op has no deterministic CUDA kernel.
        torch.use_deterministic_algorithms(
            True, warn_only=os.environ.get("FEDREPRO_FEDMM_DETERMINISM") == "warn")
        torch.backends.cudnn.benchmark = False
    xs, ys, xt, xe, ye = (t.to(device) for t in _mnist_data(
        config["n_source"], config["n_target"], config["n_test"]))
    net = MnistNet(da)
    clients = allocate(config, len(xs), len(xt))
    code_client = code_evaluated_client(clients)
    # The streams are keyed by (seed, DA method, data), never by the algorithm, so every
    # algorithm of a comparison starts from the same weights and sees the same minibatches
    # (this paper's own mechanism for randomness shared across methods; ctx.rng(...,
    # shared_over=...) would draw other numbers).
    base = ("mnist", da, seed, config["p"], config["n_source"], config["batch"])
    if "clients" in config:
        base = (*base, config["clients"])
    rngs = [(np.random.default_rng(stream_seed(*base, "batches", i, "source")),
             np.random.default_rng(stream_seed(*base, "batches", i, "target")))
            for i in range(len(clients))]
    gens = [torch.Generator().manual_seed(stream_seed(*base, "dropout", i))
            for i in range(len(clients))]
    problem = DAProblem(net, NU["mnist"][da], clients, xs, ys, xt, config["batch"], rngs, gens)
    theta0 = net.init(torch.Generator().manual_seed(
        stream_seed("mnist", da, seed, "init"))).to(device)
    sub = np.sort(np.random.default_rng(stream_seed("mnist-eval", seed)).choice(
        len(xe), size=config["eval_subset"], replace=False))
    xsub, ysub = xe[torch.from_numpy(sub)], ye[torch.from_numpy(sub)]
    # eta and mu: cell fields a sweep may set (absent: the preset's, the paper's for "paper")
    spec = RunSpec(config["algorithm"], config["rounds"], config["local_steps"],
                   config["eval_every"], config["preset"], backend=config["backend"],
                   eta=config.get("eta"), mu=config.get("mu"))
    diagnose = mdd_diagnose(problem, xs, xt, seed) if da == "MDD" else None
    state = train(problem, net, "mnist", spec, theta0,
                  lambda th: problem.accuracy(th, xsub, ysub), ctx, checkpoint_path(ctx),
                  code_client=code_client, diagnose=diagnose)
    metrics = summary_metrics(ctx.curves["round"], ctx.curves["acc"])
    # the run's state was read finite at every evaluation and checkpoint (training.train;
    # a non-finite one ends the cell as a named divergence instead); records made before the
    # check existed lack this flag
    metrics["finite_checked"] = 1.0
    metrics["test_acc_full"] = problem.accuracy(state.theta0, xe, ye)
    metrics["test_acc_full_code_client"] = problem.accuracy(state.local[code_client], xe, ye)
    metrics["rounds"] = float(state.round)
    metrics["on_accelerator"] = float(device.type != "cpu")
    return CellResult(metrics=metrics)
