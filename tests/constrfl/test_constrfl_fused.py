"""constrfl's speed paths equal their plain forms bitwise.

* the in-place one-pass logistic kernel (``LogisticBlock._loss_parts``) against the formulas of
  :meth:`LogisticBlock.loss_parts` written out plainly;
* the single-constraint mixed weights (elementwise) against the general matmul;
* Algorithm 2's server step started from its cached ``(P_0, grad P_0)`` at its last output
  against the same run that evaluates the start every round: same history, bit for bit, and
  exactly one merit evaluation fewer per round after the first.
"""

from __future__ import annotations

import numpy as np
import pytest

from repro.constrfl.admm import ClientSide, InexactADMM, ServerSide
from repro.constrfl.config import ProxALConfig
from repro.constrfl.data import synthetic_fairness
from repro.constrfl.instances import np_small
from repro.constrfl.merit import Merit
from repro.constrfl.problem import fairness


def _plain_parts(blk, W):
    """The formulas of ``loss_parts`` with fresh temporaries, on the block's own ``z = Xw``
    (its product is held to the plain one in tests/constrfl/test_constrfl_pairs.py).
    """
    z = blk._z(W)
    e = np.exp(-np.abs(z))
    inv = 1.0 / (1.0 + e)
    phi = np.maximum(z, 0.0) + np.log1p(e) - blk.y * z
    dphi = np.where(z >= 0, inv, e * inv) - blk.y
    return phi, dphi, e * inv * inv


def _fair_problem(rng):
    Xc, yc, Xs, ys = synthetic_fairness(rng, 3, per_class=40, server_per_class=60, d=6)
    return fairness(Xc, yc, Xs, ys, r=0.02)


@pytest.mark.parametrize("kind", ["np", "fairness"])
def test_in_place_kernel_is_bitwise_the_plain_formulas(kind):
    rng = np.random.default_rng(3)
    blk = (np_small(rng, d=5, n=4) if kind == "np" else _fair_problem(rng)).clients[0]
    for scale in (0.1, 1.0, 8.0, 40.0):                    # |z| up to ~200: both tails
        W = scale * rng.standard_normal((blk.size, blk.d))
        ref = _plain_parts(blk, W)
        got = blk.loss_parts(W)
        for a, b in zip(got, ref, strict=True):
            assert a.dtype == b.dtype and np.array_equal(a, b)
        phi, dphi, none = blk._loss_parts(W, False)
        assert none is None
        assert np.array_equal(phi, ref[0]) and np.array_equal(dphi, ref[1])


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_single_constraint_mixed_weights_equal_the_matmul_bitwise(sign):
    rng = np.random.default_rng(4)
    blk = np_small(rng, d=5, n=4).clients[0]
    assert blk.m == 1
    a = sign * np.abs(rng.standard_normal((blk.size, 1)))
    a[0] = 0.0
    ref = np.matmul(a[:, None, :], blk.Gw)[:, 0, :]
    got = blk._mixed_weights(a)
    assert got.shape == ref.shape and np.array_equal(got, ref)
    assert np.count_nonzero(got) == np.count_nonzero(ref) > 0


def _admm(problem, cfg, fresh_start: bool, calls: list):
    rng = np.random.default_rng(8)
    prox = 1.0 / ((problem.n + 1) * cfg.beta)
    center = rng.standard_normal(problem.d) / np.sqrt(problem.d)
    mu0 = np.abs(rng.standard_normal((1, problem.server.m)))
    mus = [np.abs(rng.standard_normal((b.size, b.m))) for b in problem.clients]

    class CountingMerit(Merit):
        def _value_grad(self, W, second):      # the one pass of value_grad(_parts)
            if self.block is problem.server:
                calls.append(1)
            return super()._value_grad(W, second)

    server_m = CountingMerit(problem.server, mu0, center, cfg.beta, prox)
    clients = [Merit(b, m, center, cfg.beta, prox)
               for b, m in zip(problem.clients, mus, strict=True)]
    cl = ClientSide(clients, cfg.rho, cfg, "vectorized")
    sv = ServerSide(server_m, cfg.rho, cl.n, cfg, "vectorized")
    if fresh_start:                      # the plain form: the start evaluated every round
        orig = sv.aggregate

        def aggregate(eps):
            sv._cache, sv._W = {}, None
            return orig(eps)
        sv.aggregate = aggregate
    admm = InexactADMM(sv, cl, 1e-300, center, q=cfg.q, t_max=cfg.t_max, keep_history=True)
    admm.run()
    return admm


def test_server_warm_start_from_its_cached_merit_gives_the_same_run():
    problem = _fair_problem(np.random.default_rng(9))
    cfg = ProxALConfig(beta=5.0, rho=1.0, q=0.5, t_max=12, solver="newton_clip")
    cached_calls, fresh_calls = [], []
    a = _admm(problem, cfg, False, cached_calls)
    b = _admm(problem, cfg, True, fresh_calls)
    assert a.t == b.t == 12
    for ha, hb in zip(a.history, b.history, strict=True):
        for key in ("server_residual", "sum_epst", "epst"):
            assert ha[key] == hb[key]
        assert np.array_equal(ha["w"], hb["w"])
        for x, y in zip(ha["U"] + ha["Lam"], hb["U"] + hb["Lam"], strict=True):
            assert np.array_equal(x, y)
    # the start of rounds 2..12 is the previous output: one evaluation saved in each
    assert len(fresh_calls) - len(cached_calls) == 11


def test_diagonal_add_and_row_take_equal_their_plain_forms():
    import dataclasses

    from repro.constrfl.merit import _add_to_diagonal
    from repro.constrfl.rows import take_many as _take_many

    rng = np.random.default_rng(6)
    H = rng.standard_normal((4, 5, 5))
    for arr in (H.copy(), H.copy().transpose(0, 2, 1)):          # contiguous and not
        ref = arr.copy()
        ref[:, np.arange(5), np.arange(5)] += 0.3
        _add_to_diagonal(arr, 0.3)
        assert np.array_equal(arr, ref)
    for blk in (np_small(rng, d=5, n=4).clients[0], _fair_problem(rng).server):
        idx = np.array([0]) if blk.size == 1 else np.array([2, 0])
        got = _take_many(blk, idx)
        ref = dataclasses.replace(blk, **{f.name: getattr(blk, f.name)[idx]
                                          for f in dataclasses.fields(blk)
                                          if isinstance(getattr(blk, f.name), np.ndarray)})
        assert type(got) is type(ref)
        for f in dataclasses.fields(blk):
            a, b = getattr(got, f.name), getattr(ref, f.name)
            assert np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b


def test_cholesky_factors_are_backward_stable_and_agree_with_lapack_within_its_bound():
    """The cached factors (their upper triangles; potrf leaves the lower one unread) and a
    fresh LAPACK ``potrf`` of each party both meet the backward
    error bound ``|RᵀR - (Q + rho I)| <= gamma_{d+1} |Rᵀ||R|`` (Higham, Thm. 10.3), entrywise;
    ``Q`` is bitwise the plain formula; a non-positive-definite matrix names its party.
    """
    import scipy.linalg.lapack

    from repro.constrfl.problem import lcqp_reference
    from repro.constrfl.subsolvers import cholesky_factors
    from repro.core.roundoff import gamma

    blk = lcqp_reference(40, 3, 2).clients[0]
    rng = np.random.default_rng(7)
    merit = Merit(blk, rng.standard_normal((3, 2)), rng.standard_normal(40), 10.0, 1 / 40)
    Q = merit.quadratic_matrix()
    plain = 10.0 * np.matmul(blk.G.transpose(0, 2, 1), blk.G) + blk.A
    plain[:, np.arange(40), np.arange(40)] += 1 / 40
    # Q = A + beta GᵀG + prox I by one batched product: the plain form's round-off, m + 3
    # roundings of each entry's terms (m products, the scaling, the two additions), twice
    Ga = np.abs(blk.G)
    scale = 10.0 * np.matmul(Ga.transpose(0, 2, 1), Ga) + np.abs(blk.A) + 1 / 40
    assert np.all(np.abs(Q - plain) <= 2 * gamma(blk.m + 3) * scale)
    for rho in (1.0, 1e-3):
        got = cholesky_factors(Q, rho)
        for Qj, c in zip(Q, got, strict=True):
            A = Qj + rho * np.eye(40)
            ref, info = scipy.linalg.lapack.dpotrf(A, lower=False, clean=True)
            assert info == 0
            for R in (np.triu(c), ref):
                assert np.all(np.abs(R.T @ R - A) <= gamma(41) * np.abs(R.T) @ np.abs(R)
                              + 2 * gamma(40) * np.abs(R.T) @ np.abs(R))
    with pytest.raises(np.linalg.LinAlgError, match="Q_0 .*not positive definite"):
        cholesky_factors(-Q, 0.0)


@pytest.mark.parametrize("kind", ["np", "fairness"])
def test_hessian_from_kept_parts_gives_the_same_run_with_fewer_passes(kind, monkeypatch):
    """The Newton Hessian made from the per-row parts of the pass that evaluated its point
    (subsolvers.PARTS_MIN_ROWS = 0: every block keeps them) against the run that evaluates
    the point again (the threshold above every block): the same Algorithm-2 history, bit for
    bit, and fewer passes over the rows.
    """
    import repro.constrfl.blocks as blocks
    import repro.constrfl.subsolvers as subsolvers

    rng = np.random.default_rng(11)
    if kind == "np":
        problem = np_small(rng, d=5, n=4)
        cfg = ProxALConfig(beta=5.0, rho=0.5, q=0.5, t_max=10, solver="newton")
    else:
        problem = _fair_problem(rng)
        cfg = ProxALConfig(beta=5.0, rho=1.0, q=0.5, t_max=10, solver="newton_clip")
    passes = []
    orig = blocks.LogisticBlock._loss_parts

    def counting(self, W, second):
        passes.append(1)
        return orig(self, W, second)

    monkeypatch.setattr(blocks.LogisticBlock, "_loss_parts", counting)
    runs = {}
    for keep in (True, False):
        monkeypatch.setattr(subsolvers, "PARTS_MIN_ROWS", 0 if keep else 10**9)
        passes.clear()
        runs[keep] = (_admm(problem, cfg, False, []), len(passes))
    (a, pa), (b, pb) = runs[True], runs[False]
    assert a.t == b.t == 10
    for ha, hb in zip(a.history, b.history, strict=True):
        for key in ("server_residual", "sum_epst", "epst"):
            assert ha[key] == hb[key]
        assert np.array_equal(ha["w"], hb["w"])
        for x, y in zip(ha["U"] + ha["Lam"], hb["U"] + hb["Lam"], strict=True):
            assert np.array_equal(x, y)
    assert pa < pb
