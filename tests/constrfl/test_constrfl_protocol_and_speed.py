"""The paper protocol under SCALE=auto (no reduced scale), the protocol note of a partial
row, the factor cache of the LCQP client step, and the fused
(one pass over the rows) logistic Lagrangian derivatives.
"""

from __future__ import annotations

import numpy as np
import pytest

from repro.constrfl.blocks import sigmoid
from repro.constrfl.config import ProxALConfig, reference_flags
from repro.constrfl.experiments import _np as np_cells
from repro.constrfl.experiments import fig1, fig2, reproduce, table1, table2
from repro.constrfl.instances import np_small
from repro.constrfl.merit import Merit
from repro.constrfl.problem import lcqp_reference, unit_sphere_w0
from repro.constrfl.proxal import FedProxAL
from repro.constrfl.start import ProxALInit
from repro.constrfl.subsolvers import ExactQuadratic, FactorCache, cholesky_factors


def _key(c):
    return tuple(sorted((k, v) for k, v in c.items() if k not in ("trial", "k_max")))


def test_auto_scale_is_the_paper_protocol_and_no_reduced_scale_is_left():
    """Tables 1-2 and Figs. 1-2 run the paper's protocol under SCALE=auto."""
    for exp in (table1.TABLE1, table2.TABLE2, fig1.FIG1, fig2.FIG2):
        assert exp.scales == ("smoke", "paper") and set(exp.cost) == {"smoke", "paper"}
        assert exp.resolve_scale("auto") == "paper"
        with pytest.raises(ValueError):
            exp.resolve_scale("reduced")
    t1 = table1.cells("paper")
    assert len(t1) == 120 and {(c["k_max"], c["t_max"], c["mode"]) for c in t1} == {
        (100, 300, "paper")}
    assert sorted({c["trial"] for c in t1}) == list(range(10))
    t2 = table2.cells("paper")
    assert len(t2) == 80 and {c["hyper"] for c in t2} == {"paper", "script"}
    assert all(c["subsample"] == 0 and c["t_max"] == 50 and c["k_max"] == 300 for c in t2)
    assert sorted({c["trial"] for c in t2}) == list(range(1, 11))
    assert [c["n"] for c in fig2.cells("paper")] == [5, 10, 20]
    assert {c["k_max"] for c in fig1.cells("paper")} == {100}
    assert not hasattr(np_cells, "REDUCED_K") and not hasattr(np_cells, "reduced_protocol")


class _Rec:
    def __init__(self, **config):
        self.config = config


def test_partial_rows_link_the_partial_protocol_entry_first():
    paper = [_Rec(trial=t, k_max=100) for t in range(10)]
    cut = [_Rec(trial=t, k_max=10) for t in range(3)]
    assert reproduce.np_protocol_note(paper, "constrfl-table-1-data") == (
        "docs/deviations.md#constrfl-table-1-data")
    note = reproduce.np_protocol_note(cut, "constrfl-table-1-data")
    assert note.startswith("partial protocol (3 trial(s), K <= 10): "
                           "docs/deviations.md#constrfl-partial-protocol;")
    fair = [_Rec(trial=1, k_max=10, subsample=0)]
    assert "#constrfl-partial-protocol" in reproduce.fair_protocol_note(fair)
    assert reproduce.fair_protocol_note([_Rec(trial=t, k_max=300, subsample=0)
                                   for t in range(1, 11)]).startswith("docs/deviations.md#")


def test_factor_cache_computes_q_and_its_factor_once_per_run_and_changes_no_number():
    problem = lcqp_reference(40, 3, 2)
    cfg = ProxALConfig(reference=reference_flags("lcqp"))
    start = ProxALInit(unit_sphere_w0(40, 0))
    alg = FedProxAL(problem, cfg, init=start)
    st = alg.run()
    # reference mode: the client block and the server slot (D13) as ADMM clients, plus the
    # server's own (18): three factorizations per run, reused by the other K - 1 iterations.
    assert alg.factor_cache.misses == 3
    assert alg.factor_cache.hits == 3 * (st.k - 1)
    loop = FedProxAL(problem, cfg, init=start, backend="loop").run()
    assert loop.admm_rounds == st.admm_rounds
    np.testing.assert_allclose(st.w, loop.w, atol=1e-10, rtol=0)


def test_triangular_solves_equal_the_dense_solve_and_reject_indefinite_matrices():
    rng = np.random.default_rng(4)
    Q = rng.standard_normal((4, 9, 9))
    Q = Q @ Q.transpose(0, 2, 1) + 0.1 * np.eye(9)
    p, lin, ctr = rng.standard_normal((3, 4, 9))
    fast = ExactQuadratic(Q, p, 0.3, factors=cholesky_factors(Q, 0.3)).solve(lin, ctr)
    dense = np.linalg.solve(Q + 0.3 * np.eye(9), (0.3 * ctr - lin - p)[..., None])[..., 0]
    np.testing.assert_allclose(fast, dense, atol=1e-12, rtol=0)
    for j, c in enumerate(cholesky_factors(Q, 0.3)):
        R = np.triu(c)
        np.testing.assert_allclose(R.T @ R, Q[j] + 0.3 * np.eye(9), atol=1e-12)
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        cholesky_factors(-Q, 0.0)
    cache = FactorCache()
    blk = lcqp_reference(5, 2, 1).clients[0]
    m = Merit(blk, np.zeros((2, 1)), np.zeros(5), 10.0, 1 / 30)
    first = cache.get(m, 1.0)
    assert cache.get(Merit(blk, np.ones((2, 1)), np.ones(5), 10.0, 1 / 30), 1.0) is first
    assert (cache.hits, cache.misses) == (1, 1)
    cache.get(m, 2.0)
    assert cache.misses == 2


def test_fused_logistic_derivatives_equal_the_per_row_sums():
    rng = np.random.default_rng(5)
    blk = np_small(rng).clients[0]
    W = rng.standard_normal((blk.size, blk.d))
    a = np.abs(rng.standard_normal((blk.size, blk.m)))
    g_ref = np.zeros_like(W)
    H_ref = np.zeros((blk.size, blk.d, blk.d))
    for b in range(blk.size):
        for j in range(blk.X.shape[1]):
            x = blk.X[b, j]
            z = x @ W[b]
            s = 1 / (1 + np.exp(-z))
            wt = blk.fw[b, j] + a[b] @ blk.Gw[b, :, j]
            g_ref[b] += wt * (s - blk.y[b, j]) * x
            H_ref[b] += wt * s * (1 - s) * np.outer(x, x)
    np.testing.assert_allclose(blk.lagrangian_grad(W, a), g_ref, atol=1e-12, rtol=0)
    H, J = blk.lagrangian_hess(W, a)
    np.testing.assert_allclose(H, H_ref, atol=1e-12, rtol=0)
    np.testing.assert_allclose(J, blk.jac_c(W), atol=1e-14, rtol=0)
    np.testing.assert_allclose(blk.grad_f(W) + np.einsum("bkd,bk->bd", blk.jac_c(W), a),
                               g_ref, atol=1e-12, rtol=0)
    np.testing.assert_allclose(blk.hess_f(W) + blk.hess_c_weighted(W, a), H_ref, atol=1e-12)
    z = np.array([-800.0, -40.0, 0.0, 40.0, 800.0])
    np.testing.assert_allclose(sigmoid(z), [0.0, np.exp(-40) / (1 + np.exp(-40)), 0.5,
                                            1 / (1 + np.exp(-40)), 1.0], rtol=1e-15, atol=0)
