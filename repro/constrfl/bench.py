"""``make bench`` for constrfl (spec §10): the LCQP client step with one Cholesky factor per
outer iteration against the reference script's per-client fresh dense solve every round (the
loop oracle of the tests), at d = 100, 300, 500; and one Algorithm-1 run of a Table 4 cell
(vectorized vs loop backend) as the per-table wall-time sample."""

from __future__ import annotations

import numpy as np

from repro.bench import benchmark, compare_timings
from repro.constrfl.merit import Merit
from repro.constrfl.problems import lcqp_reference, unit_sphere_w0
from repro.constrfl.subsolvers import ExactQuadratic

# ADMM rounds per outer iteration in Table 4: ≈ 12 in reference mode (90-140 per run / 11),
# ≈ 30 in paper mode at n = 10 (310-440 per run / 11-13).
ROUNDS = (12, 30)


def _client_rounds(d: int, rounds: int, n: int = 10, m: int = 5):
    problem = lcqp_reference(d, n, m)
    blk = problem.clients[0]
    rng = np.random.default_rng(0)
    merit = Merit(blk, rng.standard_normal((n, m)), unit_sphere_w0(d, 0), 10.0,
                  1.0 / ((n + 1) * 10.0))
    Q, p = merit.quadratic_form()
    lin = rng.standard_normal((n, d))
    w = rng.standard_normal(d)

    def factorized():
        solver = ExactQuadratic(Q, p, 1.0, factorize=True)   # once per outer iteration
        return [solver.solve(lin, np.broadcast_to(w, (n, d))) for _ in range(rounds)]

    def loop():
        solver = ExactQuadratic(Q, p, 1.0, factorize=False)  # fresh solve every round
        return [solver.solve(lin, np.broadcast_to(w, (n, d))) for _ in range(rounds)]

    return loop, factorized


@benchmark("constrfl.client_step")
def _client_step() -> list[dict]:
    rows = []
    for rounds in ROUNDS:
        for d in (100, 300, 500):
            loop, fast = _client_rounds(d, rounds)
            rows.append(compare_timings(f"LCQP client step, n=10, {rounds} rounds, d={d}",
                                        loop, fast, repeat=3))
    return rows


@benchmark("constrfl.table4_cell")
def _table4_cell() -> list[dict]:
    from repro.constrfl.exp_lcqp import solve_cell

    return [compare_timings(
        "Table 4 cell (n=10, d=300, m=3, trial 0, reference mode): cProx-AL + Algorithm 1",
        lambda: solve_cell(10, 300, 3, 0, "reference", backend="loop"),
        lambda: solve_cell(10, 300, 3, 0, "reference"), repeat=1)]
