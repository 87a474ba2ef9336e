"""The vectorized engine's hand-written backpropagation computes exactly (bitwise) what the
autograd formulation computes; its fused in-place local SGD step equals the autograd step
within the step's float32 round-off bound (docs/design.md#tolerances-of-the-vectorized-paths);
the per-client evaluation oracle equals the segment sums; the topk minibatch draw equals the
argsort formulation.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.relfair.client_batch import ClientEngine
from repro.relfair.clients import draw_round
from repro.relfair.instances import gaussian_clients
from repro.relfair.models import (
    cross_entropy_per_client,
    forward_stacked,
    init_params,
    stack,
    stacked_loss_and_grads,
)
from repro.relfair.roundoff import step_bound

D_IN, N_CLIENTS, BATCH = 40, 12, 16


@pytest.fixture(scope="module")
def data():
    # client 0 smaller than the batch: drawn with replacement
    return gaussian_clients(8, 2000, D_IN, N_CLIENTS, small_client=9)


def _autograd_loss_and_grads(params, X, y, mask):
    """The formulation the engine used before (autograd through forward_stacked)."""
    P = tuple(p.detach().clone().requires_grad_(True) for p in params)
    losses = cross_entropy_per_client(forward_stacked(P, X, mask), y)
    grads = torch.autograd.grad(losses.sum(), P)
    return losses.detach(), grads


def _autograd_local_sgd(data, theta, lr, draws, steps, correction):
    """Reference local SGD: ``u <- u - lr (g + correction)`` with autograd gradients."""
    u = stack(theta, data.n)
    for s in steps:
        idx = draws.idx[s]
        _, g = _autograd_loss_and_grads(u, data.X_train[idx], data.y_train[idx], draws.mask[s])
        if correction is not None:
            g = tuple(gi + ci for gi, ci in zip(g, correction, strict=True))
        u = tuple(ui - lr * gi for ui, gi in zip(u, g, strict=True))
    return u


@pytest.mark.parametrize("with_mask", [True, False])
def test_handwritten_backprop_is_bitwise_autograd(data, with_mask):
    theta = init_params(D_IN, 50, 10, torch.Generator().manual_seed(1))
    params = tuple(p + 0.01 * torch.randn(data.n, *p.shape, generator=torch.Generator()
                                          .manual_seed(k)) for k, p in enumerate(theta))
    draws = draw_round(data, 1, BATCH, 50, 0.5 if with_mask else 0.0,
                       torch.Generator().manual_seed(2))
    X, y = data.X_train[draws.idx[0]], data.y_train[draws.idx[0]]
    mask = draws.mask[0] if with_mask else None
    l1, g1 = stacked_loss_and_grads(params, X, y, mask)
    l2, g2 = _autograd_loss_and_grads(params, X, y, mask)
    assert torch.equal(l1, l2)
    assert all(torch.equal(a, b) for a, b in zip(g1, g2, strict=True))


@pytest.mark.parametrize("with_mask", [True, False])
def test_gradients_at_a_broadcast_model_are_bitwise_the_stacked_copies(data, with_mask):
    """The gradients at one broadcast model (one product over all clients' rows, no stacked
    copies of the model) are those of the stacked path, hence of autograd, bit for bit.
    """
    theta = init_params(D_IN, 50, 10, torch.Generator().manual_seed(3))
    draws = draw_round(data, 2, BATCH, 50, 0.5 if with_mask else 0.0,
                       torch.Generator().manual_seed(5))
    engine = ClientEngine(data, "vectorized")
    l1, g1 = engine.gradients_at(theta, draws, 1)
    X, y = data.X_train[draws.idx[1]], data.y_train[draws.idx[1]]
    l2, g2 = _autograd_loss_and_grads(stack(theta, data.n), X, y,
                                      draws.mask[1] if with_mask else None)
    assert torch.equal(l1, l2)
    assert all(torch.equal(a, b) for a, b in zip(g1, g2, strict=True))
    assert all(not torch.equal(g, torch.zeros_like(g)) for g in g1)


def _oracle_step(data, u, lr, idx, mask, correction):
    """One autograd step of every client from the stacked models ``u`` (the loop oracle)."""
    _, g = _autograd_loss_and_grads(u, data.X_train[idx], data.y_train[idx], mask)
    if correction is not None:
        g = tuple(gi + ci for gi, ci in zip(g, correction, strict=True))
    return tuple(ui - lr * gi for ui, gi in zip(u, g, strict=True))


@pytest.mark.parametrize("corrected", [True, False])
def test_fused_local_sgd_equals_the_autograd_step_within_its_roundoff_bound(data, corrected):
    """Every iterate of the fused in-place local SGD (4 steps, a snapshot after 2) is within
    :func:`step_bound` of the autograd step taken from the previous iterate; the snapshot is a
    copy, not ``u``.
    """
    theta = init_params(D_IN, 50, 10, torch.Generator().manual_seed(3))
    draws = draw_round(data, 4, BATCH, 50, 0.5, torch.Generator().manual_seed(4))
    correction = None
    if corrected:
        gen = torch.Generator().manual_seed(5)
        correction = tuple(0.1 * torch.randn(data.n, *p.shape, generator=gen) for p in theta)
    eng = ClientEngine(data, "vectorized")
    lr = 0.05
    prev = stack(theta, data.n)
    for j in range(1, 5):
        u, _ = eng.local_sgd(theta, lr, draws, range(j), correction)
        s = j - 1
        idx, mask = draws.idx[s], draws.mask[s]
        ref = _oracle_step(data, prev, lr, idx, mask, correction)
        # the fused path from ``prev`` (its own iterate j - 1): one step, compared entrywise
        mine = tuple(p.clone() for p in prev)
        eng._sgd_step(mine, idx, mask, eng._buffers(mine, BATCH), lr,
                      None if correction is None else tuple(lr * c for c in correction))
        bound = step_bound(prev, data.X_train[idx], data.y_train[idx], mask, lr, correction)
        for a, b, e in zip(mine, ref, bound, strict=True):
            assert bool(((a.double() - b.double()).abs() <= e).all())
        for a, b in zip(mine, u, strict=True):      # local_sgd's iterate j is that step
            assert torch.equal(a, b)
        prev = u
    u, snap = eng.local_sgd(theta, lr, draws, range(4), correction, snapshot_at=2)
    u2, _ = eng.local_sgd(theta, lr, draws, range(2), correction)
    assert all(torch.equal(a, b) for a, b in zip(snap, u2, strict=True))
    assert not torch.equal(snap[0], u[0])


def test_step_bound_is_tight_enough_to_catch_a_wrong_step(data):
    """The bound is round-off sized: a step with lr (1 + 1e-3) falls outside it."""
    theta = init_params(D_IN, 50, 10, torch.Generator().manual_seed(3))
    draws = draw_round(data, 1, BATCH, 50, 0.5, torch.Generator().manual_seed(4))
    u = stack(theta, data.n)
    idx, mask = draws.idx[0], draws.mask[0]
    ref = _oracle_step(data, u, 0.05, idx, mask, None)
    bad = _oracle_step(data, u, 0.05 * (1 + 1e-3), idx, mask, None)
    bound = step_bound(u, data.X_train[idx], data.y_train[idx], mask, 0.05, None)
    assert not bool(((bad[0].double() - ref[0].double()).abs() <= bound[0]).all())


def test_loop_evaluation_oracle_equals_segment_sums(data):
    theta = init_params(D_IN, 50, 10, torch.Generator().manual_seed(6))
    for split in ("train", "val"):
        la, aa = ClientEngine(data, "loop").evaluate(theta, split)
        lb, ab = ClientEngine(data, "vectorized").evaluate(theta, split)
        assert float(np.abs(la - lb).max()) <= 1e-6
        assert float(np.abs(aa - ab).max()) <= 1e-12  # same argmax on the same rows


def test_topk_draw_equals_argsort_formulation(data):
    """draw_round keeps the argsort-of-uniform-keys definition of a minibatch
    (specs/relfair.md §10).
    """
    draws = draw_round(data, 3, BATCH, 50, 0.5, torch.Generator().manual_seed(7))
    gen = torch.Generator().manual_seed(7)
    sizes = torch.from_numpy(data.train_sizes)
    nmax = int(sizes.max())
    keys = torch.rand(3, data.n, nmax, generator=gen, dtype=torch.float64)
    keys = keys.masked_fill(torch.arange(nmax) >= sizes[:, None], 2.0)
    ref = torch.argsort(keys, dim=-1)[..., :BATCH] + torch.from_numpy(data.train_offsets[:-1])[
        :, None]
    big = sizes >= BATCH
    assert int((~big).sum()) == 1
    assert torch.equal(draws.idx[:, big], ref[:, big])


def _padded_draw(data, steps, batch, hidden, dropout, generator):
    """draw_round's former one-tensor formulation: every client's keys padded
    to the largest client with 2.0, one topk over the padded rows, and the dropout mask as
    ``(u >= p).to(float32) / (1 - p)`` (the oracle of the per-client topk and the in-place mask).
    """
    sizes = torch.from_numpy(data.train_sizes)
    n, nmax = len(sizes), int(sizes.max())
    keys = torch.rand(steps, n, nmax, generator=generator, dtype=torch.float64)
    keys = keys.masked_fill(torch.arange(nmax) >= sizes[:, None], 2.0)
    local = (torch.topk(keys, batch, dim=-1, largest=False, sorted=True).indices
             if nmax >= batch else None)
    small = sizes < batch
    if small.any() or local is None:
        repl = (torch.rand(steps, n, batch, generator=generator, dtype=torch.float64)
                * sizes[:, None]).long()
        local = repl if local is None else torch.where(small[:, None], repl, local)
    idx = local + torch.from_numpy(data.train_offsets[:-1])[:, None]
    mask = None
    if dropout > 0:
        keep = torch.rand(steps, n, batch, hidden, generator=generator) >= dropout
        mask = keep.to(torch.float32) / (1.0 - dropout)
    return idx, mask


@pytest.mark.parametrize(("batch", "dropout"), [(16, 0.5), (16, 0.3), (16, 0.0), (8, 0.5),
                                                (400, 0.5)])
def test_per_client_topk_draw_is_bitwise_the_padded_draw(data, batch, dropout):
    """Uneven client sizes, one client smaller than the batch (16, 8: drawn with replacement),
    every client smaller than the batch (400); the generator ends in the same state.
    """
    g1, g2 = torch.Generator().manual_seed(11), torch.Generator().manual_seed(11)
    draws = draw_round(data, 6, batch, 50, dropout, g1)
    idx, mask = _padded_draw(data, 6, batch, 50, dropout, g2)
    assert len(set(data.train_sizes.tolist())) > 1
    assert torch.equal(draws.idx, idx)
    assert (mask is None) == (draws.mask is None) == (dropout == 0)
    if mask is not None:
        assert torch.equal(draws.mask, mask)
        assert draws.mask.dtype == torch.float32
        assert 0.3 < float((draws.mask == 0).double().mean()) / dropout < 1.7
    assert torch.equal(torch.rand(3, generator=g1), torch.rand(3, generator=g2))


@pytest.mark.parametrize("batch", [16, 8])
def test_draw_of_the_needed_minibatches_only(data, batch):
    """With ``needed`` the needed minibatches are the full draw's, the others hold the client's
    first row, the masks are the full draw's and the generator ends in the same state.
    """
    needed = np.random.default_rng(3).random((7, data.n)) < 0.4
    needed[:, 1] = False  # a client that reads nothing
    needed[:, 2] = True  # one that reads everything
    g1, g2 = torch.Generator().manual_seed(13), torch.Generator().manual_seed(13)
    part = draw_round(data, 7, batch, 50, 0.5, g1, needed)
    full = draw_round(data, 7, batch, 50, 0.5, g2)
    small = data.train_sizes < batch
    assert small.sum() == 1 and needed.sum() > 0 and (~needed).sum() > 0
    keep = torch.from_numpy(needed | small[None, :])
    assert torch.equal(part.idx[keep], full.idx[keep])
    first = torch.from_numpy(data.train_offsets[:-1]).expand(7, -1)[~keep]
    assert torch.equal(part.idx[~keep], first[:, None].expand(-1, batch))
    assert not torch.equal(full.idx[~keep], part.idx[~keep])
    assert torch.equal(part.mask, full.mask)
    assert torch.equal(torch.rand(3, generator=g1), torch.rand(3, generator=g2))
    with pytest.raises(ValueError, match=r"needed must be a \(7, 12\) bool array"):
        draw_round(data, 7, batch, 50, 0.5, g1, needed[:3])


def test_scheduled_reads_are_what_the_methods_read():
    from repro.relfair.federated import scheduled_reads

    steps = np.array([2, 0, 3])
    assert scheduled_reads(None, 4) is None
    expect = np.array([[1, 0, 1], [1, 0, 1], [0, 0, 1], [0, 0, 0]], bool)
    assert np.array_equal(scheduled_reads(steps, 4), expect)  # FedAvg: draws 0..c_i-1
    ia = scheduled_reads(steps, 4, first=1)  # Scaff-PD-IA: draw 0 (controls), then 1..c_i
    assert np.array_equal(ia, np.array([[1, 1, 1], [1, 0, 1], [1, 0, 1], [0, 0, 1]], bool))
    drfa = scheduled_reads(steps, 4, last=1)  # DRFA: draws 0..c_i-1, and draw J (losses)
    assert np.array_equal(drfa, expect | np.array([[0], [0], [0], [1]], bool))


@pytest.mark.parametrize("method", ["FedAvg", "Scaff-PD-IA", "DRFA"])
@pytest.mark.parametrize("backend", ["vectorized", "loop"])
def test_scheduled_round_is_bitwise_the_round_on_the_full_draw(data, method, backend):
    """The `epochs` reading selects only the minibatches a round reads (``scheduled_reads``);
    its rounds are bitwise those on the full draw of every minibatch (the draw before).
    """
    from repro.relfair.federated import ClientProblem, TrainSetup
    from repro.relfair.methods import build

    problem = ClientProblem(data, TrainSetup(batch=BATCH, hidden=50, dropout=0.5))
    theta0 = init_params(D_IN, 50, 10, torch.Generator().manual_seed(1))
    algs = [build(method, problem, init=theta0, rng=torch.Generator().manual_seed(9),
                  backend=backend, local_work="epochs", local_steps=2) for _ in range(2)]
    full = algs[1]
    every = type(full)._draws
    full._draws = lambda steps, needed=None: every(full, steps)  # the full draw, as before
    per = algs[0].config.plan(problem)[1]
    assert per.min() < per.max()  # a real per-client schedule
    for _ in range(2):
        for alg in algs:
            alg.step()
    for a, b in zip(algs[0].state.theta, algs[1].state.theta, strict=True):
        assert torch.equal(a, b)
    assert np.array_equal(algs[0].state.lam, algs[1].state.lam)


@pytest.mark.parametrize("chunk", [1, 3, 8, 64])
def test_chunked_key_draw_is_bitwise_the_one_tensor_draw(data, chunk, monkeypatch):
    """draw_round draws the keys ``_KEY_CHUNK`` steps at a time: over 19 steps (several chunks,
    a last partial one), with and without ``needed``, it equals the one-tensor padded draw and
    ends the generator in the same state.
    """
    import repro.relfair.clients as clients

    monkeypatch.setattr(clients, "_KEY_CHUNK", chunk)
    needed = np.random.default_rng(5).random((19, data.n)) < 0.6
    for sel in (None, needed):
        g1, g2 = torch.Generator().manual_seed(17), torch.Generator().manual_seed(17)
        draws = draw_round(data, 19, BATCH, 50, 0.5, g1, sel)
        idx, mask = _padded_draw(data, 19, BATCH, 50, 0.5, g2)
        keep = torch.ones(19, data.n, dtype=torch.bool) if sel is None else torch.from_numpy(
            sel | (data.train_sizes < BATCH)[None, :])
        assert torch.equal(draws.idx[keep], idx[keep])
        assert torch.equal(draws.mask, mask)
        assert torch.equal(torch.rand(3, generator=g1), torch.rand(3, generator=g2))


def test_masks_drawn_into_a_kept_tensor_are_the_fresh_draw(data):
    g1, g2 = torch.Generator().manual_seed(11), torch.Generator().manual_seed(11)
    fresh = draw_round(data, 3, BATCH, 50, 0.5, g1)
    out = torch.full((3, data.n, BATCH, 50), 7.0)
    kept = draw_round(data, 3, BATCH, 50, 0.5, g2, mask_out=out)
    assert kept.mask is out and torch.equal(kept.mask, fresh.mask)
    assert torch.equal(kept.idx, fresh.idx)
    assert torch.equal(torch.rand(3, generator=g1), torch.rand(3, generator=g2))
    with pytest.raises(ValueError, match="mask_out must be a float32 tensor of shape"):
        draw_round(data, 2, BATCH, 50, 0.5, g2, mask_out=out)


@pytest.mark.parametrize("backend", ["loop", "vectorized"])
@pytest.mark.parametrize("scheduled", [False, True])
def test_a_local_term_of_the_clients_rows_is_the_correction_it_equals(data, backend, scheduled):
    """A method's per-step term reaches each client's own row: a constant per-client term,
    read by ``rows``, gives bitwise the iterates of the same constant as Scaffold's correction
    (full rounds, and a per-client schedule whose active clients are a reordered prefix); the
    proximal term sums with it (:func:`sum_terms`) and moves the iterates toward theta.
    """
    from repro.relfair.client_batch import proximal, sum_terms

    theta = init_params(D_IN, 50, 10, torch.Generator().manual_seed(3))
    draws = draw_round(data, 4, BATCH, 50, 0.5, torch.Generator().manual_seed(4))
    gen = torch.Generator().manual_seed(5)
    const = tuple(0.1 * torch.randn(data.n, *p.shape, generator=gen) for p in theta)
    steps = np.array([4, 1, 3, 0, 2, 4, 4, 1, 2, 3, 4, 1]) if scheduled else None
    eng = ClientEngine(data, backend)

    def shift(u, rows):
        return tuple(c.index_select(0, rows) for c in const)

    by_term, _ = eng.local_sgd(theta, 0.05, draws, range(4), client_steps=steps,
                               local_term=shift)
    by_corr, _ = eng.local_sgd(theta, 0.05, draws, range(4), const, client_steps=steps)
    assert all(torch.equal(a, b) for a, b in zip(by_term, by_corr, strict=True))
    both, _ = eng.local_sgd(theta, 0.05, draws, range(4), client_steps=steps,
                            local_term=sum_terms(shift, proximal(theta, 5.0)))
    dist = [sum(float((p[i] - t).norm() ** 2) for p, t in zip(u, theta, strict=True))
            for u in (both, by_corr) for i in range(data.n)]
    moved = [i for i in range(data.n) if steps is None or steps[i] > 1]  # (0 at step 1)
    assert all(dist[i] < dist[data.n + i] for i in moved)   # pulled toward theta
    if scheduled:   # a client with no step keeps theta
        assert all(torch.equal(p[3], t) for p, t in zip(both, theta, strict=True))
