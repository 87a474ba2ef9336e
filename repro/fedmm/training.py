"""One federated DA training run: presets (docs/decisions.md#fedmm-hyperparameters), the round loop,
evaluation, checkpoints.

The global model theta0 (after aggregation) is what is evaluated (docs/decisions.md#fedmm-metrics);
the accuracy of the source-holding client's local model theta_i^{t+1} (what the authors' code
actually evaluates, ``acc_code_client``) is logged as a secondary curve. A checkpoint (algorithm
state, every random stream, curves) is written every ``checkpoint_every`` rounds and a rerun resumes
from it bit for bit.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

from repro.core.validation import check_choice, check_range
from repro.fedmm.blocks import Block
from repro.fedmm.federated import FedState
from repro.fedmm.health import WATCHED, FiniteWatch, state_diagnostics, watched
from repro.fedmm.local_gda import BACKENDS
from repro.fedmm.methods import build
from repro.fedmm.models import DANet
from repro.fedmm.problem import DAProblem

# eta3 bases per DA method (paper, Sec. 6: 1.0005, 1.0002, 1.0001 decay per round).
ETA3_BASE = {"DANN": 1 / 1.0005, "CDAN": 1 / 1.0002, "MDD": 1 / 1.0001}
NU = {"mnist": {"DANN": 1.0, "CDAN": 1.0, "MDD": 0.5},
      "office": {"DANN": 0.25, "CDAN": 0.25, "MDD": 0.1}}
OFFICE_ETA_PSI = {"DANN": 0.04, "MDD": 0.1, "CDAN": 0.1}
PRESETS = ("paper", "code")


def blocks_for(net: DANet, task: str, preset: str) -> tuple[Block, Block]:
    """Omega and psi blocks of docs/decisions.md#fedmm-hyperparameters.

    ``paper``: mu = 1; MNIST eta = 0.01 for both players; Office heads eta_omega = 0.01 (the
    frozen backbone has no parameters here), eta_psi = 0.04 / 0.1 / 0.1 (DANN / MDD / CDAN).
    ``code``: mu = 2, eta = 0.01, psi gradient multiplier 1/nu (MNIST) or 1/(nu + 0.01)
    (Office), as the authors' TF code.
    """
    check_choice("preset", preset, PRESETS)
    check_choice("task", task, ("mnist", "office"))
    s, nu = net.sizes, NU[task][net.method]
    if preset == "paper":
        eta_psi = 0.01 if task == "mnist" else OFFICE_ETA_PSI[net.method]
        return Block("omega", s["omega"], 0.01, 1.0), Block("psi", s["psi"], eta_psi, 1.0)
    scale = 1 / nu if task == "mnist" else 1 / (nu + 0.01)
    return (Block("omega", s["omega"], 0.01, 2.0),
            Block("psi", s["psi"], 0.01, 2.0, scale=scale))


def stream_seed(*key) -> int:
    """A 63-bit seed from a stable identity (sha256, never Python's ``hash``): the init and the
    minibatch streams depend on (seed, DA method, data) only, so every algorithm of a comparison
    starts from the same weights and sees the same batches.
    """
    d = hashlib.sha256(json.dumps([str(k) for k in key]).encode()).digest()
    return int.from_bytes(d[:8], "little") >> 1


BACKEND_ENV = "FEDREPRO_FEDMM_BACKEND"
DEVICE_ENV = "FEDREPRO_FEDMM_DEVICE"


def run_device() -> torch.device:
    """$FEDREPRO_FEDMM_DEVICE (e.g. ``cuda``), default ``cpu``."""
    return torch.device(os.environ.get(DEVICE_ENV, "cpu"))


def choose_backend(device: torch.device | str, override: str | None = None) -> str:
    """The local-step backend for a device: ``loop`` on CPU, ``graphed`` (vmap over the
    clients, a round's minibatches drawn up front, the round replayed from a CUDA graph:
    :mod:`repro.fedmm.graphed`) on CUDA; ``override`` (or $FEDREPRO_FEDMM_BACKEND) forces one.

    Measured (``make bench``): on one CPU thread the vmapped two-client step is
    0.81-0.84x the loop (vmap turns the convolutions into one grouped convolution whose
    non-contiguous output sends max-pool down a ~9x slower path); on an H100 the eager vmapped
    step (``vectorized``) was 1.14-1.31x the loop, at 12-21 ms a step, almost all of it kernel
    launches and per-step host copies, which ``graphed`` removes (its CUDA speed is
    measured by ``scripts/gpu_fedmm_extended.sh`` on a lent GPU, not here). The backends agree
    in exact arithmetic but not always in the last bits (``graphed`` equals ``vectorized``
    bitwise on the CPU), and after a few rounds theta0 differs by up to 1e-2, so the backend
    is part of a cell's config and records of different backends never mix.
    """
    override = override if override is not None else os.environ.get(BACKEND_ENV) or None
    if override is not None:
        check_choice(f"backend (${BACKEND_ENV})", override, BACKENDS)
        return override
    return "graphed" if torch.device(device).type == "cuda" else "loop"


@dataclass(frozen=True)
class RunSpec:
    """One training run: the algorithm, its rounds and local steps M, the evaluation and
    checkpoint periods, the preset of docs/decisions.md#fedmm-hyperparameters, the local-step
    backend, and ``eta``/``mu``: one step size and one penalty for both players in place of the
    preset's (None keeps the preset's, :func:`blocks_for`), for a sweep of either.
    """

    algorithm: str
    rounds: int
    local_steps: int
    eval_every: int
    preset: str = "paper"
    checkpoint_every: int = 25
    backend: str = "vectorized"
    eta: float | None = None
    mu: float | None = None

    def __post_init__(self) -> None:
        check_choice("backend", self.backend, BACKENDS)
        if self.eta is not None:
            check_range("eta", self.eta, low=0, low_open=True)
        if self.mu is not None:
            check_range("mu", self.mu, low=0)
        check_range("rounds", self.rounds, low=1)
        check_range("local_steps", self.local_steps, low=1)
        check_range("eval_every", self.eval_every, low=1)
        check_range("checkpoint_every", self.checkpoint_every, low=1)


def checkpoint_name(seed: int, code: str = "") -> str:
    """A cell's checkpoint file name: the cell's seed and the code's identity, so that code
    edited since is never resumed from it. The folder is the engine's (``ctx.artifacts``).
    """
    return f"{seed:016x}" + (f"-{code[:16]}" if code else "") + ".pt"


def train(problem: DAProblem, net: DANet, task: str, spec: RunSpec, theta0: torch.Tensor,
          evaluate: Callable[[torch.Tensor], float], ctx, checkpoint: Path | None = None,
          code_client: int = 0, diagnose: Callable[[FedState], dict] | None = None):
    """Run ``spec.rounds`` rounds, logging every ``eval_every`` rounds and at the end: the
    round, the accuracy of theta0, that of client ``code_client``'s local model (what the
    authors' code evaluates, :func:`repro.fedmm.clients.code_evaluated_client`), the state's
    diagnostics (:func:`repro.fedmm.health.state_diagnostics`) and ``diagnose(state)``'s
    (e.g. MDD's adversary margins). Returns the final algorithm state.

    After every round a :class:`repro.fedmm.health.FiniteWatch` notes, on the device, the
    first round at which theta0, a local iterate, a dual or the BatchNorm statistics held NaN
    or inf; it is read at each evaluation and checkpoint, and a non-finite state ends the run
    there with :class:`repro.core.validation.DivergenceError` naming that first round (no
    checkpoint of it is written).
    """
    blocks = tuple(replace(b, **{k: v for k, v in (("eta", spec.eta), ("mu", spec.mu))
                                 if v is not None})
                   for b in blocks_for(net, task, spec.preset))
    alg = build(spec.algorithm, problem, init=theta0, backend=spec.backend, blocks=blocks,
                local_steps=spec.local_steps, eta3=ETA3_BASE[net.method])
    if checkpoint is not None and checkpoint.is_file():
        saved = torch.load(checkpoint, weights_only=False)
        alg.state = FedState(**saved["state"])
        problem.set_rng_state(saved["rng"])
        for k, v in saved["curves"].items():
            ctx.curves[k] = list(v)
    watch = FiniteWatch(WATCHED, theta0.device)
    while alg.state.round < spec.rounds:
        alg.step()
        problem.sync_buffers()
        r = alg.state.round
        watch.update(r, watched(alg.state, (problem.running,)))
        if r % spec.eval_every == 0 or r == spec.rounds:
            watch.check()
            s = alg.state
            ctx.log_round(r, round=r, acc=evaluate(s.theta0),
                          acc_code_client=evaluate(s.local[code_client]),
                          **state_diagnostics(s, net.sizes), **(diagnose(s) if diagnose else {}))
        if checkpoint is not None and r % spec.checkpoint_every == 0 and r < spec.rounds:
            watch.check()
            _save_checkpoint(checkpoint, alg.state, problem, ctx)
    if checkpoint is not None and checkpoint.is_file():
        checkpoint.unlink()
    return alg.state


def _save_checkpoint(checkpoint: Path, s: FedState, problem: DAProblem, ctx) -> None:
    """The state, every random stream and the curves so far, written atomically."""
    checkpoint.parent.mkdir(parents=True, exist_ok=True)
    tmp = checkpoint.with_suffix(".tmp")
    torch.save({"state": {"round": s.round, "theta0": s.theta0, "local": s.local,
                          "duals": s.duals},
                "rng": problem.rng_state(),
                "curves": {k: list(v) for k, v in ctx.curves.items()}}, tmp)
    tmp.replace(checkpoint)


def summary_metrics(rounds: list[float], acc: list[float], tol_pp: float = 0.5) -> dict:
    """Best accuracy, final (mean of the last 5 evaluations), R_conv (first evaluated round
    with acc >= best - 0.5 pp, docs/decisions.md#fedmm-metrics) and the argmax round.
    """
    a, r = np.asarray(acc), np.asarray(rounds)
    best = float(a.max())
    conv = float(r[np.argmax(a >= best - tol_pp / 100)])
    return {"best_acc": best, "final_acc": float(a[-5:].mean()), "r_conv": conv,
            "argmax_round": float(r[int(np.argmax(a))])}
