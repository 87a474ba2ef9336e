"""``make bench`` for paper 002: the 100-client round (vectorized vs loop oracle) and the dual
step (exact permutohedron projection vs the cvxpy QP; docs/decisions.md#relfair-dual-step).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from bench.bounds import bound_seconds
from bench.harness import Target, benchmark, best_time, compare_timings


def round_bound(data, steps: int, batch: int, hidden: int, evaluates: bool) -> float:
    """The lower bound of one round's client work (bench/bounds.py, float32): per client and
    local step the products of the MLP ``d -> h -> K`` on B rows, ``2B(2dh + 3hK)`` flops
    (forward; the W2 and W1 updates and ``dA``), and at least one read and one write of the
    client's model (``8(dh + hK)`` bytes) and one read of its gathered rows (``4Bd``);
    Scaff-PD-IA also evaluates every client's loss at the broadcast model over the training
    split (``2 N_train (dh + hK)`` flops, ``4 N_train d`` bytes read).

    A round's draw is not in the bound: the minibatch of docs/decisions.md#relfair-cost is the
    first B of a permutation drawn as N_i float64 uniform keys per client and step, and the
    dropout masks are n J B h uniforms; random numbers are neither flops nor traffic, so the
    round rows name the draw's measured time beside their own.
    """
    n, d, K = data.n, data.d_in, data.classes
    h = hidden
    flops = n * steps * 2 * batch * (2 * d * h + 3 * h * K)
    traffic = n * steps * (8 * (d * h + h * K) + 4 * batch * d)
    if evaluates:
        rows = int(data.train_sizes.sum())
        flops += 2 * rows * (d * h + h * K)
        traffic += 4 * rows * d
    return bound_seconds(flops=flops, bytes_=traffic, dtype="float32")


@benchmark("relfair.client_round", Target(
    "one communication round of the 100 clients",
    "≤ 3× its flop / traffic bound at 1 thread (the loop-oracle ratio is reported beside it)",
    where="1 thread", max_bound=3.0))
def _client_round() -> list[dict]:
    """One communication round at paper size (MNIST, 100 clients, MLP 784-50-10, J = 5, B = 32)
    and its local-SGD phase alone, loop oracle vs vectorized, with 1 and 2 torch threads.

    The vectorized round of Scaff-PD-IA also evaluates L_i = f_i(theta^r) over all ~48k
    training samples (one 48k x 784 x 50 matrix product, the same FLOPs in both backends), so
    its ratio is lower than the local-SGD phase's.
    """
    import torch

    from repro.relfair.client_batch import ClientEngine
    from repro.relfair.clients import draw_round
    from repro.relfair.data import load_federated
    from repro.relfair.federated import ClientProblem
    from repro.relfair.methods import build
    from repro.relfair.models import init_params

    data = load_federated("MNIST", 100, np.random.default_rng(0))
    problem = ClientProblem(data)  # App. J.2: B = 32, 50 hidden units, dropout 0.5
    theta0 = init_params(784, 50, 10, torch.Generator().manual_seed(0))
    draws = draw_round(data, 5, 32, 50, 0.5, torch.Generator().manual_seed(2))
    before = torch.get_num_threads()
    rows = []
    torch.set_num_threads(1)
    # a round's draw: J steps (FedAvg), J + 1 (Scaff-PD-IA: its step at the broadcast model)
    draw_s = {m: best_time(partial(draw_round, data, steps, 32, 50, 0.5,
                                   torch.Generator().manual_seed(2)), repeat=3)
              for m, steps in (("FedAvg", 5), ("Scaff-PD-IA", 6))}
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            for method in ("Scaff-PD-IA", "FedAvg"):
                # J = 5 SGD steps (the `steps` reading), as the target is set
                algs = {b: build(method, problem, init=theta0,
                                 rng=torch.Generator().manual_seed(1), backend=b,
                                 local_work="steps")
                        for b in ("loop", "vectorized")}
                of = (f" (of which the draw {draw_s[method] * 1e3:.0f} ms)" if threads == 1
                      else "")
                rows.append(compare_timings(
                    f"{method}: one round, MNIST, 100 clients, J=5, B=32, {threads} "
                    f"thread(s){of}",
                    algs["loop"].step, algs["vectorized"].step, repeat=5))
                if threads == 1:
                    rows[-1]["bound_s"] = round_bound(data, 5, 32, 50,
                                                      evaluates=method == "Scaff-PD-IA")
            loop, vec = (ClientEngine(data, b).local_sgd for b in ("loop", "vectorized"))
            rows.append(compare_timings(
                f"local SGD phase only (J=5 steps, 100 clients), {threads} thread(s)",
                partial(loop, theta0, 0.1, draws, range(5)),
                partial(vec, theta0, 0.1, draws, range(5)), repeat=5))
            if threads == 1:
                rows[-1]["bound_s"] = round_bound(data, 5, 32, 50, evaluates=False)
    finally:
        torch.set_num_threads(before)
    return rows


@benchmark("relfair.dual_step", Target("one dual step (projection onto Lambda_phi)",
    "no numeric target (exact projection vs cvxpy)"))
def _dual_step() -> list[dict]:
    from repro.relfair.instances import cvxpy_dual_step
    from repro.relfair.problem import RelativeAmbiguitySet

    amb = RelativeAmbiguitySet(100, 0.2, 0.2, 0.2)
    z = 0.01 + 1e-3 * np.random.default_rng(0).gamma(2.0, 1.0, 100)
    return [compare_timings("Proj onto Lambda_0.2(Delta_0.2, Delta_0.2), n=100: cvxpy QP vs "
                            "sort + isotonic regression",
                            lambda: cvxpy_dual_step(z, amb), lambda: amb.project(z), repeat=3)]
