"""``make bench`` for paper 004: one local GDA step of the two clients, vmapped vs a per-client
loop, for each DA method (MNIST CNN, batch 64 per client), and a FedMM round on the quadratic
theory instance. The case names carry local steps per second of the vectorized path."""

from __future__ import annotations

import numpy as np
import torch

from repro.bench import benchmark, best_time
from repro.fedmm.algorithms import Block, LocalGDA, build
from repro.fedmm.clients import allocate_two_clients
from repro.fedmm.models import DA_METHODS, MnistNet
from repro.fedmm.problem import DAProblem


def _problem(net: MnistNet, batch: int = 64, n: int = 512) -> DAProblem:
    g = torch.Generator().manual_seed(0)
    sx = torch.randint(0, 256, (n, 28, 28, 3), dtype=torch.uint8, generator=g)
    sy = torch.randint(0, 10, (n,), generator=g)
    tx = torch.randint(0, 256, (n, 28, 28, 3), dtype=torch.uint8, generator=g)
    rngs = [(np.random.default_rng([i, 0]), np.random.default_rng([i, 1])) for i in range(2)]
    gens = [torch.Generator().manual_seed(i) for i in range(2)]
    return DAProblem(net, 1.0, allocate_two_clients(n, n, 1.0), sx, sy, tx, batch, rngs, gens)


@benchmark("fedmm.local_step")
def _local_step() -> list[dict]:
    rows = []
    for method in DA_METHODS:
        net = MnistNet(method)
        theta0 = net.init(torch.Generator().manual_seed(0))
        eta = torch.full((net.dim,), 0.01)
        mu, scale = torch.ones(net.dim), torch.ones(net.dim)
        duals = torch.zeros(2, net.dim)
        prob = _problem(net)
        args = (theta0, 0, eta, scale, mu, duals)
        fast = LocalGDA(prob, 1, "vectorized")
        loop = LocalGDA(prob, 1, "loop")
        t_loop = best_time(lambda loop=loop, args=args: loop(*args), repeat=3)
        t_fast = best_time(lambda fast=fast, args=args: fast(*args), repeat=3)
        rows.append({"case": f"{method}: 2 clients x batch 64, one FedMM local step "
                             f"({1 / t_fast:.2f} vmapped steps/s, {1 / t_loop:.2f} loop)",
                     "baseline_s": t_loop, "fast_s": t_fast})
    return rows


@benchmark("fedmm.quadratic_round")
def _quadratic_round() -> list[dict]:
    from theory.fedmm_problems import QuadOracle, gen_Q

    inst = gen_Q(0, N=8, d1=6, d2=4)
    blocks = (Block("omega", 6, 0.05, 1.0), Block("psi", 4, 0.05, 1.0))
    th = torch.zeros(10, dtype=torch.float64)
    fast = build("FedMM", blocks, th, QuadOracle(inst), local_steps=20)
    loop = build("FedMM", blocks, th, QuadOracle(inst), local_steps=20, backend="loop")
    return [{"case": "FedMM round, quadratic N=8, d=10, M=20",
             "baseline_s": best_time(loop.step, repeat=5), "fast_s": best_time(fast.step,
                                                                                repeat=5)}]
