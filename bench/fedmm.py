"""``make bench`` for paper 004: one local GDA step of the two clients, vmapped vs a per-client
loop, and one round of M = 20 steps, graphed vs eager vmapped, for each DA method (MNIST CNN,
batch 64 per client), on the CPU and, when a GPU is present, on CUDA; the case names carry
local steps per second of the paths and mark the one
:func:`repro.fedmm.training.choose_backend` picks for that device (loop on CPU, graphed on
CUDA). Also a FedMM round on the quadratic instance of :mod:`repro.fedmm.instances`.
"""

from __future__ import annotations

import torch

from bench.bounds import bound_seconds, count_torch_flops
from bench.harness import Target, benchmark, best_time
from repro.fedmm.blocks import Block
from repro.fedmm.instances import QuadOracle, gen_Q, random_da_problem
from repro.fedmm.local_gda import LocalGDA
from repro.fedmm.methods import build
from repro.fedmm.models import DA_METHODS, MnistNet
from repro.fedmm.training import choose_backend


def _devices() -> list[str]:
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@benchmark("fedmm.local_step", Target("one local GDA step of both clients",
    "vmapped vs per-client loop; no numeric target on CPU"))
def _local_step() -> list[dict]:
    """CPU loop vs CPU vmapped (and the same on CUDA when a GPU is present); the backend
    :func:`repro.fedmm.training.choose_backend` picks for each device is marked.
    """
    rows = []
    for device in _devices():
        chosen = choose_backend(device)
        sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
        for method in DA_METHODS:
            net = MnistNet(method)
            theta0 = net.init(torch.Generator().manual_seed(0)).to(device)
            eta = torch.full((net.dim,), 0.01, device=device)
            mu, scale = torch.ones(net.dim, device=device), torch.ones(net.dim, device=device)
            duals = torch.zeros(2, net.dim, device=device)
            prob = random_da_problem(net, n=512, batch=64, device=device)
            args = (theta0, 0, eta, scale, mu, duals)

            def timed(solver, args=args, sync=sync):
                solver(*args)
                sync()

            fast = LocalGDA(prob, 1, "vectorized")
            loop = LocalGDA(prob, 1, "loop")
            # a round of M = 20 steps: eager vmapped (per-step draws) vs graphed (the round's
            # draws up front; replayed from a CUDA graph on CUDA; the same calls on the CPU)
            eager20 = LocalGDA(prob, 20, "vectorized")
            graph20 = LocalGDA(prob, 20, "graphed")
            t_loop = best_time(lambda loop=loop, timed=timed: timed(loop), repeat=3)
            t_fast = best_time(lambda fast=fast, timed=timed: timed(fast), repeat=3)
            mark = {"loop": f"loop {1 / t_loop:.2f} steps/s", "vectorized":
                    f"vmapped {1 / t_fast:.2f} steps/s"}
            mark[chosen] = "*" + mark[chosen] + " (chosen)*"
            rows.append({"case": f"{device}, {method}: 2 clients x batch 64, one FedMM local "
                                 f"step; {mark['vectorized']}, {mark['loop']}",
                         "baseline_s": t_loop, "fast_s": t_fast})
            if device == "cpu":   # the loop's products (torch's flop counter) at the GEMM rate
                flops = count_torch_flops(lambda loop=loop, timed=timed: timed(loop))
                rows[-1]["bound_s"] = bound_seconds(flops=flops,
                                                    dtype=str(theta0.dtype).split(".")[-1])
            timed(graph20)  # the first call captures the graph (on CUDA)
            t_eager = best_time(lambda s=eager20, timed=timed: timed(s), repeat=3)
            t_graph = best_time(lambda s=graph20, timed=timed: timed(s), repeat=3)
            tag = " *(chosen)*" if chosen == "graphed" else ""
            rows.append({"case": f"{device}, {method}: one FedMM round, M = 20, 2 clients x "
                                 f"batch 64; graphed{tag} {20 / t_graph:.1f} steps/s vs eager "
                                 f"vmapped {20 / t_eager:.1f} steps/s",
                         "baseline_s": t_eager, "fast_s": t_graph})
    return rows


@benchmark("fedmm.quadratic_round", Target("one FedMM round (M = 20 local steps)",
    "no numeric target"))
def _quadratic_round() -> list[dict]:
    inst = gen_Q(0, N=8, d1=6, d2=4)
    blocks = (Block("omega", 6, 0.05, 1.0), Block("psi", 4, 0.05, 1.0))
    th = torch.zeros(10, dtype=torch.float64)
    fast = build("FedMM", QuadOracle(inst), init=th, blocks=blocks, local_steps=20)
    loop = build("FedMM", QuadOracle(inst), init=th, blocks=blocks, local_steps=20,
                 backend="loop")
    return [{"case": "FedMM round, quadratic N=8, d=10, M=20",
             "baseline_s": best_time(loop.step, repeat=5), "fast_s": best_time(fast.step,
                                                                                repeat=5)}]
