"""Fair VFL algorithm: message discipline, gradients, special cases of specs/fairvfl.md §2.3."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from scipy.special import expit

from repro.core.roundoff import gamma
from repro.core.validation import DivergenceError
from repro.fairvfl.fair_vfl import FairVFL, FairVFLConfig, VFLRoundMessages
from repro.fairvfl.instances import linear_blocks, synthetic_instance
from repro.fairvfl.messages import ActiveBroadcast, PassiveBroadcast, Upload
from repro.fairvfl.models import LinearBlock, MLPBlock
from repro.fairvfl.parties import ActiveParty, PassiveParty
from repro.fairvfl.problem import VFLProblem


def payload_floats(message: ActiveBroadcast | PassiveBroadcast | Upload) -> int:
    """Number of floats a message carries (docs/decisions.md#fairvfl-roles table: n + 2, n, n)."""
    if isinstance(message, ActiveBroadcast):
        return message.z.size + message.lam.size
    if isinstance(message, PassiveBroadcast):
        return message.nu.size
    return message.u.size


def _instance(seed=0, n=200, m=9, K=3):
    return synthetic_instance(np.random.default_rng(seed), n=n, m=m, K=K)


def _lm(X, y, s, blocks, **kw):
    return FairVFL(VFLProblem(linear_blocks(X, blocks), y, s), FairVFLConfig(**kw), rng=7)


def _closed_form_nu(y, s, z, lam):
    """[J](12) written out independently: w_i from the definition, o_i = -y sigma(-y z)."""
    n = len(y)
    na, nb = np.sum((y == 1) & s), np.sum((y == 1) & ~s)
    w = np.empty(n)
    for i in range(n):
        if y[i] == 1 and s[i]:
            w[i] = 1 / n + (lam[0] - lam[1]) / na
        elif y[i] == 1 and not s[i]:
            w[i] = 1 / n - (lam[0] - lam[1]) / nb
        else:
            w[i] = 1 / n
    return w * (-y / (1 + np.exp(y * z)))


def test_passive_party_never_receives_labels_or_groups():
    X, y, s, blocks = _instance()
    alg = _lm(X, y, s, blocks, roles="journal", eps=0.01, eta=5.0, beta=1.0)
    for _ in range(20):
        msgs = alg.step()
        assert len(msgs.to_active) == 1 and len(msgs.to_passive) == 2
        assert all(isinstance(u, Upload) and payload_floats(u) == len(y) for u in msgs.uplink)
        assert payload_floats(msgs.to_active[0]) == len(y) + 2
        assert payload_floats(msgs.to_passive[0]) == len(y)
    assert isinstance(alg.parties[0], ActiveParty)
    for p in alg.parties[1:]:
        assert isinstance(p, PassiveParty)
        assert len(p.inbox) == 20
        assert all(type(m) is PassiveBroadcast for m in p.inbox)
        assert [f.name for f in dataclasses.fields(PassiveBroadcast)] == ["nu"]
        held = [v for v in vars(p).values() if isinstance(v, np.ndarray)]
        assert not any(v.shape == y.shape and np.array_equal(v, y) for v in held)
        assert not any(v.shape == s.shape and np.array_equal(v, s) for v in held)
        assert not hasattr(p, "groups")
    assert all(type(m) is ActiveBroadcast for m in alg.parties[0].inbox)
    assert all(type(m) is Upload for m in alg.server.inbox)


def test_passive_message_is_the_masked_formula_of_j12():
    X, y, s, blocks = _instance(1)
    alg = _lm(X, y, s, blocks, roles="journal", eps=0.0, eta=2.0, beta=5.0)
    for _ in range(15):
        z, lam = alg.server.z.copy(), alg.server.lam.copy()
        msgs = alg.step()
        np.testing.assert_allclose(msgs.to_passive[0].nu, _closed_form_nu(y, s, z, lam),
                                   rtol=1e-12, atol=1e-15)
    assert alg.server.lam[0] > 0  # the weights were exercised with lam != 0


def test_passive_party_rejects_active_message():
    X, y, s, blocks = _instance()
    alg = _lm(X, y, s, blocks, roles="journal")
    with pytest.raises(TypeError, match="PassiveBroadcast"):
        alg.parties[1].local_update(alg.server.broadcast_active(), 0.1)


def test_linear_vjp_vectorized_equals_loop():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((500, 7))
    nu, th = rng.standard_normal(500), rng.standard_normal(7)
    blk = LinearBlock(X)
    np.testing.assert_allclose(blk.vjp(th, nu), blk.vjp_loop(th, nu), rtol=0, atol=1e-10)
    import scipy.sparse as sp
    sparse = LinearBlock(sp.csr_matrix(np.where(X > 0.5, 1.0, 0.0)))
    dense = LinearBlock(np.where(X > 0.5, 1.0, 0.0))
    np.testing.assert_allclose(sparse.vjp(th, nu), dense.vjp_loop(th, nu), atol=1e-10)
    np.testing.assert_allclose(sparse.forward(th), dense.forward(th), atol=1e-12)


def test_sparse_products_by_the_stored_csc_are_bitwise_the_csr_products():
    """``LinearBlock`` keeps a sparse ``X`` as CSC and ``(X^k)^T`` as its CSR view: the forward
    pass is bitwise scipy's CSR ``X @ theta`` (a row's terms summed over the columns in
    ascending order in both), the VJP bitwise ``X.T @ nu`` (a feature's terms from row 0 up)
    and the per-sample loop's sum in the same order, on general (non 0/1) entries with empty
    rows and columns.
    """
    import scipy.sparse as sp

    rng = np.random.default_rng(11)
    X = rng.standard_normal((3000, 12)) * (rng.random((3000, 12)) < 0.2)
    X[:, 4] = 0.0
    X[7] = 0.0
    blk = LinearBlock(sp.csr_matrix(X))
    for _ in range(3):
        nu, th = rng.standard_normal(3000) * 1e-3, rng.standard_normal(12)
        got = blk.vjp(th, nu)
        assert np.array_equal(got, np.asarray(sp.csr_matrix(X).T @ nu))
        assert np.array_equal(got, blk.vjp_loop(th, nu))
        assert np.array_equal(blk.forward(th), np.asarray(sp.csr_matrix(X) @ th))
    assert blk._XT.format == "csr" and blk._XT.shape == (12, 3000)
    assert blk._Xc.format == "csc" and blk.X.format == "csr"


def _mlp_vjp_bound(blk, th, nu):
    """Entrywise bound on ``|vjp - vjp_loop|`` (docs/design.md#tolerances-of-the-vectorized-
    paths): first-order forward error analysis in the block's dtype (gamma_k of
    repro.core.roundoff) on the exact (float64) magnitudes, twice the one-path bound::

        Z1 = b0 + X W0ᵀ     e_Z1 = gamma_{m+1} (|b0| + |X||W0|ᵀ),   e_A1 = e_Z1
        Z2 = b1 + A1 W1ᵀ    e_Z2 = gamma_{h1+1} (|b1| + |A1||W1|ᵀ) + e_A1 |W1|ᵀ,  e_A2 = e_Z2
        dZ2 = nu W2 1[Z2>0] e_dZ2 = gamma_1 |nu||W2|, and |nu||W2| in full where |Z2| <= e_Z2
        dZ1 = dZ2 W1 1[Z1>0] e_dZ1 = gamma_{h2} |dZ2||W1| + e_dZ2 |W1|, in full where
                             |Z1| <= e_Z1
        dW = Dᵀ A (a sum over the N rows): gamma_N |D|ᵀ|A| + e_Dᵀ|A| + |D|ᵀ e_A
    """
    dt = str(blk.dtype).replace("torch.", "")
    N, m = blk.X.shape
    h1, h2 = blk.shapes[0][0], blk.shapes[2][0]
    W = [t.double() for t in blk._weights(th)]
    X = blk.X.double().numpy()
    W0, b0, W1, b1, W2 = (w.numpy() for w in W[:5])
    nu = np.asarray(nu, dtype=float)[:, None]
    gm = {k: gamma(k, dt) for k in (1, N, m + 1, h1 + 1, h2)}
    Z1 = b0 + X @ W0.T
    e_Z1 = gm[m + 1] * (np.abs(b0) + np.abs(X) @ np.abs(W0).T)
    A1 = np.maximum(Z1, 0)
    Z2 = b1 + A1 @ W1.T
    e_Z2 = gm[h1 + 1] * (np.abs(b1) + A1 @ np.abs(W1).T) + e_Z1 @ np.abs(W1).T
    A2 = np.maximum(Z2, 0)
    full2 = np.abs(nu) @ np.abs(W2)
    dZ2 = np.where(Z2 > 0, full2, 0)
    e_dZ2 = gm[1] * dZ2 + full2 * (np.abs(Z2) <= e_Z2)
    full1 = dZ2 @ np.abs(W1)
    dZ1 = np.where(Z1 > 0, full1, 0)
    e_dZ1 = (gm[h2] * full1 + e_dZ2 @ np.abs(W1)) * (Z1 > 0) + (full1 + e_dZ2 @ np.abs(W1)) * (
        np.abs(Z1) <= e_Z1)

    def prod(D, e_D, A, e_A):
        return gm[N] * D.T @ np.abs(A) + e_D.T @ np.abs(A) + D.T @ e_A

    zero = np.zeros_like
    parts = [prod(dZ1, e_dZ1, X, zero(X)), gm[N] * dZ1.sum(0) + e_dZ1.sum(0),
             prod(dZ2, e_dZ2, A1, e_Z1), gm[N] * dZ2.sum(0) + e_dZ2.sum(0),
             prod(np.abs(nu), zero(nu), A2, e_Z2), gm[N] * np.abs(nu).sum(0)]
    return 2 * np.concatenate([p.ravel() for p in parts])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_mlp_vjp_vectorized_equals_loop_within_its_roundoff_bound(dtype):
    """The hand-written backward pass on the kept activations against the per-sample autograd
    loop, entrywise within :func:`_mlp_vjp_bound`, at a fresh point and at the point of the
    last forward (the kept activations), and after a forward at another point (not reused).
    """
    rng = np.random.default_rng(4)
    X = rng.standard_normal((300, 5))
    blk = MLPBlock(X, (8, 6), dtype)
    th = blk.init(torch.Generator().manual_seed(0))
    th2 = th + 0.1 * torch.as_tensor(rng.standard_normal(blk.dim), dtype=th.dtype)
    nu = rng.standard_normal(300)
    for prior in (None, th, th2):
        if prior is not None:
            blk.forward(prior)
        got, ref = blk.vjp(th, nu).double().numpy(), blk.vjp_loop(th, nu).double().numpy()
        assert np.all(np.abs(got - ref) <= _mlp_vjp_bound(blk, th, nu))


def _torch_lagrangian(thetas, forwards, y, s, lam, eps, mu):
    z = sum(f(t) for f, t in zip(forwards, thetas, strict=True))
    yt = torch.as_tensor(y)
    loss = torch.nn.functional.softplus(-yt * z).mean()
    reg = 0.5 * mu * sum((t ** 2).sum() for t in thetas)
    pos = torch.nn.functional.softplus(-z)
    a = torch.as_tensor((y == 1) & s)
    b = torch.as_tensor((y == 1) & ~s)
    D = pos[a].mean() - pos[b].mean()
    return loss + reg + lam[0] * (D - eps) - lam[1] * (D + eps)


@pytest.mark.parametrize("model", ["LM", "MLP"])
def test_masked_gradient_equals_autograd(model):
    """[J](12): sum_i nu_i dg_k/dtheta_k + mu theta_k = autograd grad_k f, to 1e-10."""
    X, y, s, blocks = _instance(5, n=120)
    lam, eps, mu = np.array([0.7, 0.2]), 0.05, 2 / 120
    if model == "LM":
        blks = linear_blocks(X, blocks)
        thetas = [np.random.default_rng(k).standard_normal(len(b)) * 0.3
                  for k, b in enumerate(blocks)]
        tensors = [torch.as_tensor(X[:, b]) for b in blocks]
        forwards = [lambda t, Xk=Xk: Xk @ t for Xk in tensors]
    else:
        blks = [MLPBlock(X[:, b], (6, 5), "float64") for b in blocks]
        thetas = [bk.init(torch.Generator().manual_seed(k)).numpy()
                  for k, bk in enumerate(blks)]
        forwards = [lambda t, bk=bk: bk._net(t, bk.X) for bk in blks]
    tt = [torch.tensor(t, dtype=torch.float64, requires_grad=True) for t in thetas]
    f = _torch_lagrangian(tt, forwards, y, s, lam, eps, mu)
    grads = torch.autograd.grad(f, tt)
    z = sum(bk.forward(torch.as_tensor(t) if model == "MLP" else t)
            for bk, t in zip(blks, thetas, strict=True))
    nu = _closed_form_nu(y, s, z, lam)
    for bk, t, g in zip(blks, thetas, grads, strict=True):
        th = torch.as_tensor(t) if model == "MLP" else t
        ours = np.asarray(bk.vjp(th, nu)) + mu * t
        np.testing.assert_allclose(ours, g.numpy(), rtol=0, atol=1e-10)


def _centralized_gda(X, y, s, eta, beta, c, eps, rounds, fair=True):
    """Plain full-gradient descent-ascent, [C](9)-(10) with Q = 1 (specs/fairvfl.md §2.3)."""
    n = len(y)
    mu = 2 / n
    theta, lam = np.zeros(X.shape[1]), np.zeros(2)
    a, b = (y == 1) & s, (y == 1) & ~s
    out = []
    for _ in range(rounds):
        z = X @ theta
        nu = _closed_form_nu(y, s, z, lam)
        theta = theta - (X.T @ nu + mu * theta) / eta
        z = X @ theta
        D = np.log1p(np.exp(-z[a])).mean() - np.log1p(np.exp(-z[b])).mean()
        if fair:
            lam = np.maximum(0, lam + beta * (np.array([D - eps, -D - eps]) - c * lam))
        out.append((theta.copy(), lam.copy()))
    return out


@pytest.mark.parametrize("roles", ["conf", "journal"])
def test_q1_distributed_equals_centralized(roles):
    X, y, s, blocks = _instance(2)
    alg = _lm(X, y, s, blocks, roles=roles, eps=0.01, eta=4.0, beta=1.0, c=1e-3)
    ref = _centralized_gda(X, y, s, 4.0, 1.0, 1e-3, 0.01, 150)
    assert ref[-1][1][0] > 0  # the constraint is active, lam moves
    for theta_ref, lam_ref in ref:
        alg.step()
        theta = np.concatenate(alg.thetas())
        assert np.linalg.norm(theta - theta_ref) <= 1e-12 * np.linalg.norm(theta_ref)
        assert np.linalg.norm(alg.server.lam - lam_ref) <= 1e-12 * max(
            1.0, np.linalg.norm(lam_ref))


def test_q_local_steps_are_block_jacobi_with_stale_reads():
    """Q > 1: each block takes Q steps with the others frozen at theta^(t) ([C](11))."""
    X, y, s, blocks = _instance(3)
    Q, eta, beta, c, eps = 3, 4.0, 1.0, 1e-3, 0.01
    alg = _lm(X, y, s, blocks, Q=Q, eps=eps, eta=eta, beta=beta, c=c)
    n, mu = len(y), 2 / len(y)
    thetas = [np.zeros(len(b)) for b in blocks]
    lam = np.zeros(2)
    a, bb = (y == 1) & s, (y == 1) & ~s
    for _ in range(40):
        z0 = sum(X[:, b] @ t for b, t in zip(blocks, thetas, strict=True))
        new = []
        for b, t in zip(blocks, thetas, strict=True):
            th = t.copy()
            for _q in range(Q):
                z = z0 - X[:, b] @ t + X[:, b] @ th
                th = th - (X[:, b].T @ _closed_form_nu(y, s, z, lam) + mu * th) / eta
            new.append(th)
        thetas = new
        z = sum(X[:, b] @ t for b, t in zip(blocks, thetas, strict=True))
        D = np.log1p(np.exp(-z[a])).mean() - np.log1p(np.exp(-z[bb])).mean()
        lam = np.maximum(0, lam + beta * (np.array([D - eps, -D - eps]) - c * lam))
        msgs = alg.step()
        assert alg.state.kappa == Q * len(blocks)
        # [C] Alg. 1 line 7: every party uploads after each of its Q local steps
        assert len(msgs.uplink) == Q * len(blocks)
    np.testing.assert_allclose(np.concatenate(alg.thetas()), np.concatenate(thetas),
                               rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(alg.server.lam, lam, rtol=1e-11, atol=1e-13)
    assert n == len(alg.server.z)


class _LastUploadOnly(ActiveParty):
    """The former message discipline: one upload per round, after the last step."""

    def local_update(self, message, n_steps, step):
        return super().local_update(message, n_steps, step)[-1:]


@pytest.mark.parametrize("roles,mode", [("conf", "exact"), ("conf", "random"),
                                        ("journal", "exact")])
def test_upload_after_every_local_step_as_printed(roles, mode):
    """[C] Alg. 1 line 7 / [J] Alg. 2 line 8 send u_k inside the while loop: an active party
    sends Q_k^(t) uploads per round (each its contribution after that step), a passive party
    ([J] Alg. 3 line 6) one. The iterates are bitwise those of one upload per round.
    """
    X, y, s, blocks = _instance(5)
    kw = dict(roles=roles, mode=mode, Q=3, eps=0.01, eta=4.0, beta=1.0)
    alg = _lm(X, y, s, blocks, **kw)
    old = _lm(X, y, s, blocks, **kw)
    old.parties = [_LastUploadOnly(p.index, p.block, p.theta, p.mu, p.groups)
                   if isinstance(p, ActiveParty) else p for p in old.parties]
    counts_seen = set()
    for _ in range(30):
        msgs, msgs_old = alg.step(), old.step()
        q = [p.last_steps for p in alg.parties]
        per_party = [sum(u.party == k for u in msgs.uplink) for k in range(len(blocks))]
        expected = [q_k if isinstance(p, ActiveParty) else 1
                    for p, q_k in zip(alg.parties, q, strict=True)]
        assert per_party == expected
        assert len(msgs.uplink) == alg.state.kappa == sum(expected)
        assert len(msgs_old.uplink) == len(blocks)
        counts_seen.add(tuple(per_party))
        # the last upload of every party is its new contribution X^k theta_k^(t+1)
        for k, (p, th) in enumerate(zip(alg.parties, alg.thetas(), strict=True)):
            last = [u for u in msgs.uplink if u.party == k][-1]
            np.testing.assert_array_equal(last.u, p.block.forward(th))
        for a, b in zip(alg.thetas(), old.thetas(), strict=True):
            assert np.array_equal(a, b)  # bitwise
        assert np.array_equal(alg.server.lam, old.server.lam)
        assert np.array_equal(alg.server.z, old.server.z)
    if mode == "random":
        assert len(counts_seen) > 1  # Q_k^(t) varied, and the counts followed it
    else:
        assert counts_seen == {tuple(3 if roles == "conf" or k == 0 else 1
                                     for k in range(len(blocks)))}


def test_intermediate_uploads_are_the_local_iterates():
    """The q-th upload of a party is X^k theta_k^(t,q) of the stale-read steps [C](11)."""
    X, y, s, blocks = _instance(6)
    alg = _lm(X, y, s, blocks, Q=2, eps=0.01, eta=4.0, beta=1.0)
    alg.step()
    z0, lam = alg.server.z.copy(), alg.server.lam.copy()
    thetas0 = alg.thetas()
    mu = 2 / len(y)
    msgs = alg.step()
    for k, b in enumerate(blocks):
        ups = [u.u for u in msgs.uplink if u.party == k]
        th = thetas0[k]
        for q in range(2):
            z = z0 - X[:, b] @ thetas0[k] + X[:, b] @ th
            th = th - (X[:, b].T @ _closed_form_nu(y, s, z, lam) + mu * th) / 4.0
            np.testing.assert_allclose(ups[q], X[:, b] @ th, rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="at least one local step"):
        alg.parties[0].local_update(alg.server.broadcast_active(), 0, 0.1)


@pytest.mark.parametrize("model", ["LM", "MLP"])
def test_inactive_constraint_is_identical_to_fedbcd(model):
    """Claim J1b: if lam stays 0 the run equals FedBCD (here exactly, to 1e-10 asserted)."""
    X, y, s, blocks = _instance(4)

    def make(fair):
        if model == "LM":
            blks = linear_blocks(X, blocks)
        else:
            blks = [MLPBlock(X[:, b], (6, 5), "float64") for b in blocks]
        return FairVFL(VFLProblem(blks, y, s),
                       FairVFLConfig(eps=5.0, eta=3.0, fair=fair, roles="journal"), rng=0)

    fair, base = make(True), make(False)
    for _ in range(100):
        fair.step()
        base.step()
        assert np.all(fair.server.lam == 0)
        assert abs(fair.state.loss - base.state.loss) <= 1e-10
        assert np.max(np.abs(fair.server.z - base.server.z)) <= 1e-10
    for a, b in zip(fair.thetas(), base.thetas(), strict=True):
        assert np.max(np.abs(a - b)) <= 1e-10


def test_random_mode_kappa_range_and_determinism():
    X, y, s, blocks = _instance(6)

    def run():
        alg = FairVFL(VFLProblem(linear_blocks(X, blocks), y, s),
                      FairVFLConfig(Q=4, mode="random", eta=5.0), rng=11)
        kappas = []
        for _ in range(30):
            alg.step()
            kappas.append(alg.state.kappa)
        return kappas, np.concatenate(alg.thetas())

    k1, t1 = run()
    k2, t2 = run()
    assert k1 == k2 and np.array_equal(t1, t2)
    assert min(k1) >= 3 and max(k1) <= 12 and len(set(k1)) > 1


@pytest.mark.parametrize(("field", "value", "match"), [
    ("eps", -0.1, r"eps must be in \[0, inf\)"), ("eta", 0.0, r"eta must be in \(0, inf\)"),
    ("beta", -1.0, r"beta must be in \(0"), ("Q", 0, r"Q must be in \[1"),
    ("mode", "async", "mode must be one of"), ("roles", "x", "roles must be one of"),
    ("c", -1e-3, r"c must be in \[0")])
def test_invalid_hyperparameters_name_the_parameter(field, value, match):
    with pytest.raises(ValueError, match=match):
        FairVFLConfig(**{field: value})


def test_divergence_names_the_round():
    X, y, s, blocks = _instance(0)
    alg = _lm(X * 1e3, y, s, blocks, eta=1e-6)
    with pytest.raises(DivergenceError, match="round"), np.errstate(all="ignore"):
        alg.run(50)


def test_dual_step_matches_c9_closed_form():
    X, y, s, blocks = _instance(8)
    alg = _lm(X, y, s, blocks, eps=0.02, beta=0.5, c=0.1, eta=3.0)
    for _ in range(10):
        lam = alg.server.lam.copy()
        alg.step()
        D = alg.state.d
        expect = np.maximum(0, (1 - 0.5 * 0.1) * lam + 0.5 * np.array([D - 0.02, -D - 0.02]))
        np.testing.assert_allclose(alg.server.lam, expect, rtol=1e-14, atol=1e-15)
    # D is the loss-based DEO of Definition 1 on the server's z
    z = alg.server.z
    a, b = (y == 1) & s, (y == 1) & ~s
    assert abs(alg.state.d - (np.log1p(expit(z[a]) ** -1 - 1).mean()
                              - np.log1p(expit(z[b]) ** -1 - 1).mean())) < 1e-12


def test_round_messages_name_their_parts():
    """step() returns the core RoundMessages (round, downlink, uplink); downlink holds
    one broadcast per party in party order, ``to_active`` / ``to_passive`` are its views.
    """
    X, y, s, blocks = _instance(2)
    alg = _lm(X, y, s, blocks, roles="journal", Q=2, eta=5.0)
    seen = []
    state = alg.run(3, callback=lambda r, st, m: seen.append((r, st.t, m)))
    assert state is alg.state and [(r, t) for r, t, _ in seen] == [(1, 1), (2, 2), (3, 3)]
    for r, _, m in seen:
        assert isinstance(m, VFLRoundMessages) and m.round == r
        assert [type(b) for b in m.downlink] == [ActiveBroadcast, PassiveBroadcast,
                                                 PassiveBroadcast]
        assert m.to_active == m.downlink[:1] and m.to_passive == m.downlink[1:]
        assert [u.party for u in m.uplink] == [0, 0, 1, 2]  # Q = 2 uploads of the active party
    assert alg.run(10, stop=lambda st: st.t >= 5).t == 5
    with pytest.raises(ValueError, match="needs rounds= or stop="):
        alg.run()


def test_schedules_give_eta_t_and_c_t_of_round_t():
    """eta_schedule / c_schedule (Theorem 2's eta_t, c_t) are called with the round t being
    taken; a constant schedule is bitwise the constant, and the dual step uses c_t ([C](9)).
    """
    X, y, s, blocks = _instance(8)
    const = _lm(X, y, s, blocks, eps=0.02, beta=0.5, c=0.1, eta=3.0)
    sched = _lm(X, y, s, blocks, eps=0.02, beta=0.5, eta_schedule=lambda t: 3.0,
                c_schedule=lambda t: 0.1)
    const.run(5)
    sched.run(5)
    assert all(np.array_equal(a, b) for a, b in zip(const.thetas(), sched.thetas(), strict=True))
    assert np.array_equal(const.server.lam, sched.server.lam)
    calls = []

    def c_t(t):
        calls.append(t)
        return 0.5 / t

    alg = _lm(X, y, s, blocks, eps=0.02, beta=0.5, eta=3.0, c_schedule=c_t)
    for t in range(1, 8):
        lam = alg.server.lam.copy()
        alg.step()
        D = alg.state.d
        expect = np.maximum(0, (1 - 0.5 * 0.5 / t) * lam
                            + 0.5 * np.array([D - 0.02, -D - 0.02]))
        np.testing.assert_allclose(alg.server.lam, expect, rtol=1e-14, atol=1e-15)
    assert calls == list(range(1, 8))
    assert alg.server.lam.max() > 0  # the dual step (and so c_t) acted


@pytest.mark.parametrize("roles", ["conf", "journal"])
def test_one_masked_message_per_round_with_one_local_step(roles, monkeypatch):
    """With Q = 1 every party of a round reads ``nu(z^(t), lam^(t))``: it is computed once per
    round, in [J] too, where the passive broadcast carries it and the active party
    reuses it (the same values: the passive payload equals the active party's own ``nu``).
    """
    from repro.fairvfl.problem import FairnessGroups

    calls = []
    original = FairnessGroups.loss_derivative
    monkeypatch.setattr(FairnessGroups, "loss_derivative",
                        lambda self, z: calls.append(1) or original(self, z))
    X, y, s, blocks = _instance(4)
    alg = _lm(X, y, s, blocks, roles=roles, eps=0.01, eta=4.0, beta=1.0, c=1e-3)
    for _ in range(5):
        calls.clear()
        msgs = alg.step()
        assert len(calls) == 1
    active = alg.parties[0]
    nu = active.groups.masked_message(msgs.downlink[0].z, msgs.downlink[0].lam)
    np.testing.assert_allclose(
        nu, _closed_form_nu(y, s, msgs.downlink[0].z, msgs.downlink[0].lam), rtol=1e-12, atol=0)
    for m in msgs.to_passive:
        assert np.array_equal(m.nu, nu)
    assert len(msgs.to_passive) == (len(blocks) - 1 if roles == "journal" else 0)
