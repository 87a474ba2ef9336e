"""The ``graphed`` local-step backend: a whole round's minibatches drawn up front,
the same update as ``vectorized``; on the CPU (no graph captured) bitwise equal to it, for
every method, DA loss, imbalance and client setting, the Office heads' BatchNorm included;
checkpoint resume stays exact; wrong uses are errors.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.fedmm import training
from repro.fedmm.clients import allocate_split_clients
from repro.fedmm.graphed import CapturedCall
from repro.fedmm.instances import QuadOracle, gen_Q, random_da_problem
from repro.fedmm.local_gda import LocalGDA
from repro.fedmm.methods import METHODS, build
from repro.fedmm.models import DA_METHODS, MnistNet, OfficeHeads
from repro.fedmm.problem import DAProblem
from repro.fedmm.training import ETA3_BASE, blocks_for


@pytest.fixture(autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _run(make_problem, net, algorithm, backend, rounds=2, local_steps=3, task="mnist"):
    theta = net.init(torch.Generator().manual_seed(0))
    alg = build(algorithm, make_problem(), init=theta, backend=backend,
                blocks=blocks_for(net, task, "paper"), local_steps=local_steps,
                eta3=ETA3_BASE[net.method])
    for _ in range(rounds):
        alg.step()
    return alg


def _assert_same_state(a, b):
    assert torch.equal(a.state.theta0, b.state.theta0)
    assert torch.equal(a.state.local, b.state.local)
    assert (a.state.duals is None) == (b.state.duals is None)
    if a.state.duals is not None:
        assert torch.equal(a.state.duals, b.state.duals)


@pytest.mark.parametrize("method", DA_METHODS)
@pytest.mark.parametrize("algorithm", sorted(METHODS))
def test_graphed_equals_vectorized_bitwise(method, algorithm):
    net = MnistNet(method)
    for p in (1.0, 0.5):
        runs = [_run(lambda p=p: random_da_problem(net, n=32, batch=6, p=p), net, algorithm,
                     backend) for backend in ("vectorized", "graphed")]
        _assert_same_state(*runs)
        # and the loop oracle agrees to float32 rounding after one step (the adversarial game
        # amplifies last-bit differences over rounds, docs/deviations.md#fedmm-backend)
    one = [_run(lambda: random_da_problem(net, n=32, batch=6), net, algorithm, backend,
                rounds=1, local_steps=1) for backend in ("loop", "graphed")]
    torch.testing.assert_close(one[0].state.theta0, one[1].state.theta0, rtol=0, atol=1e-5)


def test_graphed_equals_vectorized_with_split_clients():
    """Fig. 5's 2 + 2 setting: four single-domain clients."""
    net = MnistNet("CDAN")

    def make():
        g = torch.Generator().manual_seed(1)
        sx = torch.randint(0, 256, (40, 28, 28, 3), dtype=torch.uint8, generator=g)
        sy = torch.randint(0, 10, (40,), generator=g)
        tx = torch.randint(0, 256, (36, 28, 28, 3), dtype=torch.uint8, generator=g)
        clients = allocate_split_clients(40, 36, 2, 2)
        rngs = [(np.random.default_rng([1, i, 0]), np.random.default_rng([1, i, 1]))
                for i in range(4)]
        gens = [torch.Generator().manual_seed(7 + i) for i in range(4)]
        return DAProblem(net, 1.0, clients, sx, sy, tx, 6, rngs, gens)

    _assert_same_state(*[_run(make, net, "FedMM", b) for b in ("vectorized", "graphed")])


def test_graphed_equals_vectorized_with_batchnorm_running_stats():
    """Office heads: the BN running statistics, updated per local step, are equal too."""
    net = OfficeHeads("MDD", feature_in=12, n_classes=3, width=8)

    def make():
        g = torch.Generator().manual_seed(2)
        sx, tx = torch.randn(30, 12, generator=g), torch.randn(30, 12, generator=g)
        sy = torch.randint(0, 3, (30,), generator=g)
        from repro.fedmm.clients import allocate_two_clients
        rngs = [(np.random.default_rng([2, i, 0]), np.random.default_rng([2, i, 1]))
                for i in range(2)]
        gens = [torch.Generator().manual_seed(3 + i) for i in range(2)]
        return DAProblem(net, 0.1, allocate_two_clients(30, 30, 0.5), sx, sy, tx, 8, rngs,
                         gens)

    probs = {}
    for backend in ("vectorized", "graphed"):
        probs[backend] = make()
        theta = net.init(torch.Generator().manual_seed(0))
        alg = build("FedMM", probs[backend], init=theta, backend=backend,
                    blocks=blocks_for(net, "office", "paper"), local_steps=4,
                    eta3=ETA3_BASE["MDD"])
        for _ in range(3):
            alg.step()
            probs[backend].sync_buffers()
        probs[backend] = (alg.state, probs[backend].running)
    (sv, rv), (sg, rg) = probs["vectorized"], probs["graphed"]
    assert torch.equal(sv.theta0, sg.theta0) and torch.equal(rv, rg)
    assert not torch.equal(rv, torch.stack([torch.zeros(2, 8), torch.ones(2, 8)], dim=1))


def test_round_inputs_are_the_per_step_draws():
    """round_inputs(M) holds, per client, the rows and masks M calls of draw(i) give."""
    net = MnistNet("MDD")
    a, b = (random_da_problem(net, n=40, batch=8, p=0.5) for _ in range(2))
    got = a.round_inputs(5)
    assert got["rows"].shape == (5, 2, 8)
    x_pool, y_pool, flags = a._pools()
    for i in range(2):
        for m in range(5):
            x, y, s, masks = b.draw(i)
            rows = got["rows"][m, i]
            assert torch.equal(x_pool[rows], x) and torch.equal(y_pool[rows], y)
            assert torch.equal(flags[i], s)
            for k, v in masks.items():
                assert torch.equal(got[f"mask:{k}"][m, i], v)


def test_checkpoint_resume_with_graphed_is_exact(tmp_path, round_log):
    net = MnistNet("CDAN")
    theta0 = net.init(torch.Generator().manual_seed(0))
    spec = training.RunSpec("FedMM", rounds=4, local_steps=2, eval_every=1,
                            checkpoint_every=2, backend="graphed")
    Ctx = round_log

    def problem():
        return random_da_problem(net, n=24, batch=4)

    full = Ctx()
    state = training.train(problem(), net, "mnist", spec, theta0, lambda th: float(th.sum()),
                           full)
    calls = {"n": 0}

    def interrupted(th):
        calls["n"] += 1
        if calls["n"] == 5:  # round 3's first evaluation, after the round-2 checkpoint
            raise KeyboardInterrupt
        return float(th.sum())

    ckpt = tmp_path / "ck.pt"
    with pytest.raises(KeyboardInterrupt):
        training.train(problem(), net, "mnist", spec, theta0, interrupted, Ctx(), ckpt)
    resumed = Ctx()
    state2 = training.train(problem(), net, "mnist", spec, theta0, lambda th: float(th.sum()),
                            resumed, ckpt)
    assert torch.equal(state2.theta0, state.theta0) and torch.equal(state2.duals, state.duals)
    assert resumed.curves == full.curves


def test_graphed_needs_a_round_oracle_and_a_fixed_update():
    inst = gen_Q(0, N=2, d1=2, d2=2)
    with pytest.raises(ValueError, match="round_inputs.*'vectorized' or 'loop'"):
        LocalGDA(QuadOracle(inst), 2, "graphed")
    net = MnistNet("DANN")
    solver = LocalGDA(random_da_problem(net, n=24, batch=4), 1, "graphed")
    th = net.init(torch.Generator().manual_seed(0))
    ones = torch.ones(net.dim)
    solver(th, 0, 0.01 * ones, ones, None, None)
    with pytest.raises(ValueError, match="prox=False, dual=False"):
        solver(th, 1, 0.01 * ones, ones, ones, None)


def test_captured_call_runs_eagerly_off_cuda_and_restores_kept_tensors():
    box = torch.zeros(3)
    calls = []

    def fn():
        calls.append(1)
        box.add_(1)

    call = CapturedCall(fn, torch.device("cpu"), keep=(box,))
    call()
    call()
    assert len(calls) == 2 and torch.equal(box, torch.full((3,), 2.0)) and not call.captured


def test_graphed_takes_new_step_sizes_when_the_caller_passes_other_tensors():
    """The run's constants are copied in once, and again whenever other tensors come."""
    net = MnistNet("DANN")
    th = net.init(torch.Generator().manual_seed(0))
    ones = torch.ones(net.dim)
    out = {}
    for backend in ("vectorized", "graphed"):
        solver = LocalGDA(random_da_problem(net, n=24, batch=4), 2, backend)
        out[backend] = [solver(th, t, eta * ones, ones, None, None)
                        for t, eta in enumerate((0.01, 0.01, 0.05))]
    for a, b in zip(out["vectorized"], out["graphed"], strict=True):
        assert torch.equal(a, b)
