"""``make bench`` for paper 002: the 100-client round (vectorized vs loop oracle) and the dual
step (exact permutohedron projection vs the cvxpy QP of spec §2.3, method 2)."""

from __future__ import annotations

import numpy as np

from repro.bench import benchmark, compare_timings


@benchmark("relfair.client_round")
def _client_round() -> list[dict]:
    import torch

    from repro.relfair.algorithms import make_algorithm
    from repro.relfair.data import load_federated
    from repro.relfair.engine import ClientEngine
    from repro.relfair.models import init_params

    torch.set_num_threads(1)
    data = load_federated("MNIST", 100, np.random.default_rng(0))
    rows = []
    for method in ("Scaff-PD-IA", "FedAvg"):
        algs = {b: make_algorithm(method, ClientEngine(data, b),
                                  init_params(784, 50, 10, torch.Generator().manual_seed(0)),
                                  torch.Generator().manual_seed(1))
                for b in ("loop", "vectorized")}
        rows.append(compare_timings(f"{method}: one round, MNIST, 100 clients, J=5, B=32",
                                    algs["loop"].step, algs["vectorized"].step, repeat=3))
    return rows


@benchmark("relfair.dual_step")
def _dual_step() -> list[dict]:
    from repro.relfair.ambiguity import RelativeAmbiguitySet
    from theory.relfair_projection import cvxpy_dual_step

    amb = RelativeAmbiguitySet(100, 0.2, 0.2, 0.2)
    z = 0.01 + 1e-3 * np.random.default_rng(0).gamma(2.0, 1.0, 100)
    return [compare_timings("Proj onto Lambda_0.2(Delta_0.2, Delta_0.2), n=100: cvxpy QP vs "
                            "sort + isotonic regression",
                            lambda: cvxpy_dual_step(z, amb), lambda: amb.project(z), repeat=3)]
