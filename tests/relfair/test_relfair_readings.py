"""relfair's readings: App. J.2's "J = 5 local epochs" as the primary, the
per-client epoch schedule, Delta u normalised by eta J epochs, the readings' cells.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from repro.engine.run.runner import plan
from repro.relfair.client_batch import ClientEngine
from repro.relfair.clients import draw_round
from repro.relfair.federated import ClientProblem, TrainSetup, epoch_schedule
from repro.relfair.instances import gaussian_clients
from repro.relfair.messages import DeltaReport
from repro.relfair.methods import build
from repro.relfair.models import init_params
from repro.relfair.roundoff import step_bound

D_IN, N_CLIENTS, BATCH = 20, 6, 16


@pytest.fixture(scope="module")
def data():
    return gaussian_clients(3, 600, D_IN, N_CLIENTS)


def test_epoch_schedule_is_five_ceil_n_over_b(data):
    sizes = data.train_sizes
    expected = [5 * math.ceil(int(n) / BATCH) for n in sizes]
    got = epoch_schedule(sizes, 5, BATCH)
    assert got.tolist() == expected
    assert len(set(expected)) > 1  # a per-client schedule, not a uniform count
    assert epoch_schedule([16, 17, 1], 5, 16).tolist() == [5, 10, 5]
    with pytest.raises(ValueError, match="train_sizes"):
        epoch_schedule([0, 3], 5, 16)


@pytest.mark.parametrize("backend", ["loop", "vectorized"])
def test_each_client_takes_exactly_its_own_count_of_steps(data, backend):
    per = epoch_schedule(data.train_sizes, 1, BATCH)
    S = int(per.max())
    theta = init_params(D_IN, 50, 10, torch.Generator().manual_seed(1))
    draws = draw_round(data, S, BATCH, 50, 0.5, torch.Generator().manual_seed(2))
    eng = ClientEngine(data, backend)
    u, _ = eng.local_sgd(theta, 0.05, draws, range(S), client_steps=per)
    for i, k in enumerate(per.tolist()):
        ref_k, _ = eng.local_sgd(theta, 0.05, draws, range(k))
        ref_km1, _ = eng.local_sgd(theta, 0.05, draws, range(k - 1))
        assert all(torch.equal(a[i], b[i]) for a, b in zip(u, ref_k, strict=True))  # k steps
        assert not torch.equal(u[0][i], ref_km1[0][i])  # ... and not k - 1


def _spy(monkeypatch, eng, seen):
    real = eng.local_sgd

    def spy(theta, lr, draws, steps, correction=None, snapshot_at=None, client_steps=None):
        out = real(theta, lr, draws, steps, correction, snapshot_at, client_steps)
        seen.update(steps=steps, client_steps=client_steps, u=out[0])
        return out

    monkeypatch.setattr(eng, "local_sgd", spy)


def test_scaffold_type_delta_is_normalised_by_eta_times_epochs(data, monkeypatch):
    seen = {}
    problem = ClientProblem(data, TrainSetup(batch=BATCH))
    theta0 = init_params(D_IN, 50, 10, torch.Generator().manual_seed(1))
    alg = build("Scaff-PD-IA", problem, init=theta0, rng=torch.Generator().manual_seed(2),
                local_steps=5, local_work="epochs")
    _spy(monkeypatch, alg.engine, seen)
    msgs = alg.step()
    per = epoch_schedule(data.train_sizes, 5, BATCH)
    assert seen["client_steps"].tolist() == per.tolist()
    assert seen["steps"] == range(1, int(per.max()) + 1)
    delta = next(m for m in msgs.uplink if isinstance(m, DeltaReport)).deltas
    expect = (theta0[0].unsqueeze(0) - seen["u"][0]) / (1e-2 * 5)
    assert torch.allclose(delta[0], expect, rtol=0, atol=1e-6)
    # SAFL ignores the schedule: one FedSGD step per round under every reading
    safl = build("SAFL", problem, init=theta0, rng=torch.Generator().manual_seed(2),
                 local_work="epochs")
    _spy(monkeypatch, safl.engine, seen)
    seen.clear()
    safl.step()
    assert seen == {}
    with pytest.raises(ValueError, match="local_work"):
        build("FedAvg", problem, local_work="epoch")


def test_table1_readings_touch_the_cells_they_name():
    from repro.engine.registry import load_all

    exp = load_all()["relfair.table1"]
    assert exp.primary_reading.id == "epochs"
    assert "local epochs J of all the algorithms except for SAFL to be 5" in \
        exp.primary_reading.basis
    readings = {r.id: r for r in exp.select_readings("all")}
    base = exp.configs("smoke")
    prim, steps = plan(exp, "smoke"), plan(exp, "smoke", readings["steps"])
    summed = plan(exp, "smoke", readings["summed-loss"])
    for c, p, s, m in zip(base, prim, steps, summed, strict=True):
        assert s.config == c  # `steps` is the package's former reading: today's cells
        assert (p.key != s.key) == (c["method"] != "SAFL")
        assert p.seed == s.seed  # readings share the cell's randomness
        assert m.key == p.key  # the metric reading reuses the primary's runs
    assert readings["summed-loss"].metrics == {"R_AB": "R_AB_summed", "gini": "gini_summed"}


def test_scheduled_local_sgd_computes_only_active_clients_and_equals_the_loop_oracle(data):
    """The vectorized per-client schedule (clients still stepping form a prefix in step-count
    order) equals the loop oracle, which steps every client and zeroes the finished ones'
    updates, on every iterate: iterate j of the scheduled run is the oracle's step from
    iterate j - 1 within the step's round-off bound (repro.relfair.roundoff.step_bound) for
    the clients still stepping, and bitwise iterate j - 1 for the others; with a correction
    term and a mid-round snapshot (DRFA). It computes sum_i active_i client gradients, not
    n max_i active_i.
    """
    per = epoch_schedule(data.train_sizes, 1, BATCH)
    S = int(per.max())
    theta = init_params(D_IN, 50, 10, torch.Generator().manual_seed(4))
    draws = draw_round(data, S, BATCH, 50, 0.5, torch.Generator().manual_seed(5))
    g = torch.Generator().manual_seed(6)
    corr = tuple(0.01 * torch.randn((N_CLIENTS, *p.shape), generator=g) for p in theta)
    t = int(per.min()) + 1  # a snapshot after some clients have stopped
    vec, loop = ClientEngine(data, "vectorized"), ClientEngine(data, "loop")
    calls = []
    real = vec._sgd_step
    vec._sgd_step = lambda u, idx, *a: calls.append(idx.shape[0]) or real(u, idx, *a)
    u, snap = vec.local_sgd(theta, 0.05, draws, range(S), correction=corr, snapshot_at=t,
                            client_steps=per)
    assert sum(calls) == int(per.sum()) < N_CLIENTS * S  # only the active clients' gradients
    assert calls == [int((per >= j).sum()) for j in range(1, S + 1)]
    vec._sgd_step = real
    prev = tuple(p.unsqueeze(0).expand(N_CLIENTS, *p.shape).clone() for p in theta)
    for j in range(1, S + 1):
        cur, _ = vec.local_sgd(theta, 0.05, draws, range(j), correction=corr,
                               client_steps=np.minimum(per, j))
        on = torch.from_numpy(per >= j)
        _, grads = loop.gradients(prev, draws.idx[j - 1], draws.mask[j - 1])
        ref = tuple(p - 0.05 * (gr + c) for p, gr, c in zip(prev, grads, corr, strict=True))
        X, y = data.X_train[draws.idx[j - 1]], data.y_train[draws.idx[j - 1]]
        bound = step_bound(prev, X, y, draws.mask[j - 1], 0.05, corr)
        for a, r, p, e in zip(cur, ref, prev, bound, strict=True):
            assert bool(((a[on].double() - r[on].double()).abs() <= e[on]).all())
            assert torch.equal(a[~on], p[~on])          # finished clients keep their model
        if j == t:
            assert all(torch.equal(a, b) for a, b in zip(snap, cur, strict=True))
        prev = cur
    assert all(torch.equal(a, b) for a, b in zip(u, prev, strict=True))
