"""Two points in one pass over the rows (the clients' trial point and the broadcast w of (22)):
the value and per-row parts bit for bit those of each point alone, the gradients within the
round-off bound of their row sums; the products held to the plain ``Xw`` / ``Xᵀv`` within
theirs (docs/design.md#tolerances-of-the-vectorized-paths).
"""

from __future__ import annotations

import numpy as np
import pytest

from repro.constrfl import blocks
from repro.constrfl.admm import ClientSide
from repro.constrfl.blocks import LogisticBlock
from repro.constrfl.config import ProxALConfig
from repro.constrfl.data import synthetic_fairness
from repro.constrfl.instances import np_small
from repro.constrfl.merit import Merit
from repro.constrfl.messages import Broadcast
from repro.constrfl.problem import fairness
from repro.core.roundoff import gamma


@pytest.fixture(autouse=True)
def _paired(monkeypatch):
    """The test blocks (tens of rows per party) take the two-row products like paper-size
    blocks do.
    """
    monkeypatch.setattr(blocks, "PAIRED_MIN_ROWS", 0)


def _block(kind, rng):
    if kind == "np":
        return np_small(rng, d=5, n=4).clients[0]
    Xc, yc, Xs, ys = synthetic_fairness(rng, 3, per_class=40, server_per_class=60, d=6)
    return fairness(Xc, yc, Xs, ys, r=0.02).clients[0]


@pytest.mark.parametrize("kind", ["np", "fairness"])
def test_paired_evaluation_is_each_point_alone(kind):
    rng = np.random.default_rng(5)
    blk = _block(kind, rng)
    merit = Merit(blk, np.abs(rng.standard_normal((blk.size, blk.m))),
                  rng.standard_normal(blk.d), 3.0, 0.1)
    for scale in (0.1, 3.0, 30.0):
        W, V = (scale * rng.standard_normal((blk.size, blk.d)) for _ in range(2))
        val, g, parts, gV = merit.value_grad_and_grad_at(W, V)
        val1, g1, parts1 = merit.value_grad_parts(W)
        assert np.array_equal(val, val1)
        for a, b in zip(parts, parts1, strict=True):
            assert np.array_equal(a, b)
        # the gradients: one product for both points, within the bound of a length-M sum
        # of the row weights (recovered from the single-point pass) times the rows
        for P, got in ((W, g), (V, gV)):
            phi, dphi, _ = blk._loss_parts(P, False)
            weights = merit._value_and_row_weights(P, phi, dphi)[1]
            bound = 2 * gamma(blk.X.shape[1]) * np.einsum("bm,bmd->bd", np.abs(weights),
                                                          np.abs(blk.X))
            assert np.all(np.abs(got - merit.grad(P)) <= bound)
        assert merit.value_grad_and_grad_at(W, V, parts=False)[2] is None
        assert np.array_equal(merit.hess_from_parts(parts), merit.hess(W))


@pytest.mark.parametrize("kind", ["np", "fairness"])
def test_two_row_products_within_the_round_off_bound_of_the_plain_ones(kind):
    rng = np.random.default_rng(6)
    blk = _block(kind, rng)
    b, M, d = blk.X.shape
    W = 10 * rng.standard_normal((b, d))
    v = rng.standard_normal((b, M))
    z_plain = np.einsum("bmd,bd->bm", blk.X, W)
    bound_z = 2 * gamma(d) * np.einsum("bmd,bd->bm", np.abs(blk.X), np.abs(W))
    assert np.all(np.abs(blk._z(W) - z_plain) <= bound_z)
    r_plain = np.einsum("bm,bmd->bd", v, blk.X)
    bound_r = 2 * gamma(M) * np.einsum("bm,bmd->bd", np.abs(v), np.abs(blk.X))
    assert np.all(np.abs(blk._rows_t(v) - r_plain) <= bound_r)
    # a planted error of a few units in the last place of the larger entries is caught
    assert not np.all(np.abs(blk._z(W) * (1 + 1e-12) - z_plain) <= bound_z)


def test_clients_round_takes_the_broadcast_gradient_from_the_solve_pass():
    """ClientSide.round asks the solve for grad P_i(w^{t+1}) of (22) and gets it from the first
    trial's pass (no separate Merit.grad): its epst within the round-off bound of the
    gradient's row sums of the formula with a separate evaluation.
    """
    rng = np.random.default_rng(7)
    blk = _block("fairness", rng)
    cfg = ProxALConfig(beta=5.0, rho=1.0, q=0.5, t_max=10, solver="newton_clip")
    mu = np.abs(rng.standard_normal((blk.size, blk.m)))
    center = rng.standard_normal(blk.d) / np.sqrt(blk.d)
    calls = {"grad": 0, "pair": 0}

    class Counting(Merit):
        def grad(self, W):
            calls["grad"] += 1
            return super().grad(W)

        def value_grad_and_grad_at(self, W, V, parts=True):
            calls["pair"] += 1
            return super().value_grad_and_grad_at(W, V, parts)

    merit = Counting(blk, mu, center, 5.0, 0.05)
    side = ClientSide([merit], 1.0, cfg, "vectorized")
    side.start(center)
    U_old, lam_old = side.U[0].copy(), side.Lam[0].copy()
    w = center + 0.1 * rng.standard_normal(blk.d)
    ups = side.round(Broadcast(w), 1e-6)
    assert calls == {"grad": 0, "pair": 1}
    W = np.broadcast_to(w, U_old.shape)
    lam_e = side.Lam[0] if cfg.reference.epst_lambda == "new" else lam_old
    u_e = side.U[0] if cfg.reference.epst_u == "new" else U_old
    ref = np.max(np.abs(Merit.grad(merit, W) + lam_e - cfg.rho * (W - u_e)), axis=1)
    phi, dphi, _ = blk._loss_parts(W, False)
    weights = merit._value_and_row_weights(W, phi, dphi)[1]
    bound = 2 * gamma(blk.X.shape[1]) * np.einsum("bm,bmd->bd", np.abs(weights), np.abs(blk.X))
    epst = np.array([u.epst for u in ups])
    assert np.all(np.abs(epst - ref) <= bound.max(axis=1))
    assert np.all(epst > 0)


def test_row_products_are_bitwise_the_same_at_any_operand_alignment():
    """The row products of the logistic blocks (torch's BLAS) give the same bits wherever
    their operands lie (the engine's workers keep freed memory in the heap, so arrays land at
    other offsets than fresh pages would give them).
    """
    rng = np.random.default_rng(9)
    X = rng.standard_normal((3, 4000, 38))
    blk = LogisticBlock(38, X, (rng.random((3, 4000)) < 0.5).astype(float),
                        np.full((3, 4000), 1e-3), np.abs(rng.standard_normal((3, 1, 4000))),
                        np.zeros((3, 1)))
    W, V, v = (rng.standard_normal(s) for s in ((3, 38), (3, 38), (3, 4000)))
    v2 = rng.standard_normal((3, 2, 4000))
    ref = [blk._z_pair(W, V), blk._z(W), blk._rows_t(v), blk._rows_t_pair(v2)]

    def shifted(a, off):      # the same values at another address (8-byte steps)
        raw = np.empty(a.size * 8 + 128, dtype=np.uint8)
        base = (-raw.ctypes.data) % 64 + off
        out = raw[base:base + a.size * 8].view(np.float64).reshape(a.shape)
        out[...] = a
        return out

    for off in (8, 24, 40, 56):
        moved = LogisticBlock(38, shifted(X, off), blk.y, blk.fw, blk.Gw, blk.r)
        o2 = 64 - off - 8
        got = [moved._z_pair(shifted(W, o2), shifted(V, off)), moved._z(shifted(W, off)),
               moved._rows_t(shifted(v, o2)), moved._rows_t_pair(shifted(v2, off))]
        assert all(np.array_equal(g, r) for g, r in zip(got, ref, strict=True))


def test_blocks_of_few_rows_keep_the_matrix_vector_products(monkeypatch):
    monkeypatch.setattr(blocks, "PAIRED_MIN_ROWS", 256)
    rng = np.random.default_rng(10)
    blk = _block("np", rng)
    assert not blk.paired
    W = rng.standard_normal((blk.size, blk.d))
    assert np.array_equal(blk._z(W), np.matmul(blk.X, W[:, :, None])[:, :, 0])
