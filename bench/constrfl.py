"""``make bench`` for constrfl (docs/decisions.md#constrfl-cost): the LCQP client step with
Cholesky factors against the reference script's per-client fresh dense solve every round (the
loop oracle of the tests), at d = 100, 300, 500 — for one outer iteration (factor computed in it)
and for one Algorithm-1 run (the factor of Q + rho I, which does not change with k, reused by
every outer iteration, as ``FedProxAL`` does); and one Algorithm-1 run of a Table 4 cell
(vectorized vs loop backend) as the per-table wall-time sample.
"""

from __future__ import annotations

import numpy as np

from bench.bounds import bound_seconds, l2_bytes
from bench.harness import Target, benchmark, compare_timings
from repro.constrfl.merit import Merit
from repro.constrfl.problem import lcqp_reference
from repro.constrfl.subsolvers import ExactQuadratic, FactorCache

# ADMM rounds per outer iteration in Table 4: ≈ 12 in reference mode (90-140 per run / 11),
# ≈ 30 in paper mode at n = 10 (310-440 per run / 11-13); 11 outer iterations per run.
ROUNDS = (12, 30)
OUTER = 11


def _client_rounds(d: int, rounds: int, outer: int = 1, n: int = 10, m: int = 5):
    """Loop oracle and factorized client step over ``outer`` outer iterations of ``rounds``
    ADMM rounds each (the prox centre, hence p, changes every outer iteration; Q does not).
    """
    problem = lcqp_reference(d, n, m)
    blk = problem.clients[0]
    rng = np.random.default_rng(0)
    merits = [Merit(blk, rng.standard_normal((n, m)), rng.standard_normal(d), 10.0,
                    1.0 / ((n + 1) * 10.0)) for _ in range(outer)]
    lin = rng.standard_normal((n, d))
    w = rng.standard_normal(d)

    def factorized():
        cache = FactorCache()             # one per Algorithm-1 run (FedProxAL.factor_cache)
        out = []
        for merit in merits:
            Q, factors = cache.get(merit, 1.0)
            solver = ExactQuadratic(Q, merit.quadratic_linear(), 1.0, factors=factors)
            out += [solver.solve(lin, np.broadcast_to(w, (n, d))) for _ in range(rounds)]
        return out

    def loop():
        out = []
        for merit in merits:
            Q, p = merit.quadratic_form()
            solver = ExactQuadratic(Q, p, 1.0, factorize=False)  # fresh solve every round
            out += [solver.solve(lin, np.broadcast_to(w, (n, d))) for _ in range(rounds)]
        return out

    return loop, factorized


def client_step_bound(d: int, rounds: int, outer: int = 1, n: int = 10) -> float:
    """The lower bound of one call of :func:`_client_rounds` (bench/bounds.py): n Cholesky
    factorizations (``d^3/3`` flops each, once per call: the factors are reused by every
    outer iteration) and two triangular solves per client and round (``d^2`` flops each),
    which read their factor's triangle (``4 d^2`` bytes) from beyond L2 when the n factors
    do not fit there (a solve's flops are two per entry read: memory, not arithmetic, bounds
    it); forming ``Q = A + beta CᵀC`` reads A and writes Q (``16 d^2`` bytes per client).
    """
    solves = 2 * n * rounds * outer
    streamed = 8 * n * d * d > l2_bytes()
    traffic = (solves * 4 * d * d if streamed else 0) + 16 * n * d * d   # + read A, write Q
    return bound_seconds(flops=solves * d * d, bytes_=traffic, chol_flops=n * d ** 3 / 3)


@benchmark("constrfl.client_step", Target(
    "the 10 clients' LCQP steps over the ADMM rounds the case names",
    "≤ 3× its flop / traffic bound at d=300 (the loop-oracle ratio is reported beside it)",
    where="d=300", max_bound=3.0))
def _client_step() -> list[dict]:
    rows = []
    for rounds in ROUNDS:
        for d in (100, 300, 500):
            loop, fast = _client_rounds(d, rounds)
            rows.append(compare_timings(
                f"LCQP client step, n=10, one outer iteration (factor computed), {rounds} "
                f"rounds, d={d}", loop, fast, repeat=3))
            rows[-1]["bound_s"] = client_step_bound(d, rounds)
    for d in (100, 300, 500):
        loop, fast = _client_rounds(d, ROUNDS[0], OUTER)
        rows.append(compare_timings(
            f"LCQP client step, n=10, one run ({OUTER} outer x {ROUNDS[0]} rounds, factor "
            f"reused), d={d}", loop, fast, repeat=1))
        rows[-1]["bound_s"] = client_step_bound(d, ROUNDS[0], OUTER)
    return rows


@benchmark("constrfl.table4_cell", Target("one Table 4 cell: cProx-AL + Algorithm 1",
    "no numeric target (per-table wall-time sample)"))
def _table4_cell() -> list[dict]:
    from repro.constrfl.experiments._lcqp import solve_cell

    return [compare_timings(
        "Table 4 cell (n=10, d=300, m=3, trial 0, reference mode): cProx-AL + Algorithm 1",
        lambda: solve_cell(10, 300, 3, 0, "reference", backend="loop"),
        lambda: solve_cell(10, 300, 3, 0, "reference"), repeat=1)]


def _cell_prefix(table: str, solver: str, k_max: int):
    """Algorithm 1 on one Table 1 / Table 2 cell for the first ``k_max`` outer iterations:
    ``solver`` = the batched Newton (all clients of a round at once) or ``"lbfgsb"`` with the
    loop backend (one scipy L-BFGS-B per client and round, the oracle).
    """
    from repro.constrfl.experiments import _fair as fair_cells
    from repro.constrfl.experiments import _np as np_cells
    from repro.constrfl.problem import unit_sphere_w0
    from repro.constrfl.proxal import FedProxAL
    from repro.constrfl.start import ProxALInit

    if table == "table1":         # adult-a, n = 20, trial 0: the Table 1 target cell
        problem, _, _ = np_cells.np_problem("adult-a", 20, False)
        cfg = np_cells.config_for("paper", k_max, 300)
        w0 = unit_sphere_w0(problem.d, 0)
    else:                         # adult-b, n = 5, trial 1, the paper's hyperparameters
        problem = fair_cells.fair_problem(5, 0)[0]
        cfg = fair_cells.config_for("paper", k_max, 50)
        w0 = unit_sphere_w0(problem.d, 1)
    backend = "loop" if solver == "lbfgsb" else "vectorized"
    cfg = cfg.replace(solver=solver)

    def run():
        return FedProxAL(problem, cfg, init=ProxALInit(w0), backend=backend).run()

    return run


def cell_flops(run) -> tuple[int, int, float]:
    """``(matrix-product flops, ADMM rounds, CPU seconds)`` of one call of ``run``."""
    import time

    from repro.constrfl.blocks import count_flops

    with count_flops() as fc:
        t0 = time.process_time()
        st = run()
        cpu = time.process_time() - t0
    return fc.flops, int(sum(st.admm_rounds)), cpu


@benchmark("constrfl.table_cells", Target(
    "Algorithm 1's first outer iterations of the cell the case names",
    "whole cells: Table 2 <= 3 min, Table 1 adult-a n=20 <= 2 min on one core ("
    "the case gives the batched run's flops and rate)"))
def _table_cells() -> list[dict]:
    """Whole cells, timed: one Table 1 cell (adult-a n = 20) and one Table 2 cell (n = 5, the
    paper's hyperparameters), oracle vs batched, over the first outer iterations (the full
    oracle run takes hours); the case names the batched run's flop count and achieved rate.
    """
    rows = []
    for table, solver, k, label in (
            ("table1", "newton", 1, "Table 1 adult-a n=20 trial 0, K=1 (300 ADMM rounds)"),
            ("table2", "newton_clip", 3, "Table 2 adult-b n=5 trial 1 paper set, K=3 "
                                         "(150 ADMM rounds)")):
        fast, oracle = _cell_prefix(table, solver, k), _cell_prefix(table, "lbfgsb", k)
        row = compare_timings(label, oracle, fast, repeat=1)
        flops, rounds, cpu = cell_flops(fast)
        row["bound_s"] = bound_seconds(flops=flops)
        row["case"] += (f": batched {flops / 1e9:.3g} GFlop of matrix products in {cpu:.3g} "
                        f"CPU s = {flops / cpu / 1e9:.3g} GFlop/s, "
                        f"{1e3 * cpu / rounds:.3g} ms per ADMM round")
        rows.append(row)
    return rows
