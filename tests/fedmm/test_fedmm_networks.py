"""Models, DA losses, client allocation, minibatch streams and the vectorized problem."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from repro.fedmm.adaptation import (
    MDD_EPS,
    classification_loss,
    domain_loss,
    objective,
    player_sign,
)
from repro.fedmm.blocks import Block
from repro.fedmm.clients import BatchStream, allocate_split_clients, allocate_two_clients
from repro.fedmm.instances import random_da_problem
from repro.fedmm.methods import build
from repro.fedmm.models import MnistNet, OfficeHeads

F64 = torch.float64


def _zero_last_adv(net, flat):
    p = net.unflatten(flat)
    last = net.adversary_layers - 1
    p[f"adv.{last}.weight"].zero_()
    p[f"adv.{last}.bias"].fill_(0.3)
    return flat


@pytest.mark.parametrize("method, n_params", [
    # conv 2432 + 38448; DANN cls 235300+10100+1010, head 235300+202
    ("DANN", {"omega": 2432 + 38448 + 235300 + 10100 + 1010, "psi": 235300 + 202}),
    ("CDAN", {"omega": 2432 + 38448 + 235300 + 10100 + 1010, "psi": 2352100 + 202}),
    ("MDD", {"omega": 2432 + 38448 + 470600 + 40200 + 2010, "psi": 470600 + 40200 + 2010}),
])
def test_mnist_net_sizes_and_init(method, n_params):
    net = MnistNet(method)
    assert net.sizes == n_params
    flat = net.init(torch.Generator().manual_seed(0))
    p = net.unflatten(flat)
    w = p["conv1.weight"]
    assert w.abs().max() <= 0.2 and abs(float(w.std()) - 0.088) < 0.01  # trunc N(0, .1^2)
    assert torch.all(p["conv1.bias"] == 0.1)
    x = torch.randint(0, 256, (5, 28, 28, 3), dtype=torch.uint8)
    z = net.features(p, x)
    assert z.shape == (5, 2352)
    assert net.classify(p, z).shape == (5, 10)


def test_losses_closed_forms():
    x = torch.randint(0, 256, (6, 28, 28, 3), dtype=torch.uint8)
    y = torch.tensor([1, 2, 3, 0, 0, 0])
    src = torch.tensor([True, True, True, False, False, False])
    for method in ("DANN", "CDAN"):
        net = MnistNet(method)
        flat = _zero_last_adv(net, net.init(torch.Generator().manual_seed(1), F64))
        p = net.unflatten(flat)
        z = net.features(p, x)
        logits = net.classify(p, z)
        # equal domain logits: CE = log 2 for every row
        assert abs(float(domain_loss(net, p, z, logits, src, None)) - math.log(2)) < 1e-12
    net = MnistNet("MDD")
    flat = _zero_last_adv(net, net.init(torch.Generator().manual_seed(1), F64))
    p = net.unflatten(flat)
    z = net.features(p, x)
    logits = net.classify(p, z)
    expected = (3 * -math.log(0.1) + 3 * -math.log(1 + MDD_EPS - 0.1)) / 6
    assert abs(float(domain_loss(net, p, z, logits, src, None)) - expected) < 1e-12
    ce = torch.nn.functional.cross_entropy(logits[:3], y[:3])
    assert abs(float(classification_loss(logits, y, src)) - float(ce)) < 1e-12


def test_target_only_client_has_no_classification_term():
    net = MnistNet("DANN")
    flat = net.init(torch.Generator().manual_seed(2), F64).requires_grad_(True)
    x = torch.randint(0, 256, (4, 28, 28, 3), dtype=torch.uint8)
    src = torch.zeros(4, dtype=torch.bool)
    f, _ = objective(net, 1.0, flat, x, torch.zeros(4, dtype=torch.long), src)
    p = net.unflatten(flat)
    z = net.features(p, x)
    dl = domain_loss(net, p, z, net.classify(p, z), src, None)
    assert abs(float(f.detach()) + float(dl.detach())) < 1e-12  # f_i = -nu L_adv
    (g,) = torch.autograd.grad(f, flat)
    cls_last = net.specs.index(next(s for s in net.specs if s.name == "cls.2.weight"))
    off = sum(s.numel for s in net.specs[:cls_last])
    # the label predictor's last layer gets no gradient without source rows (DANN head reads z)
    assert torch.count_nonzero(g[off:off + 1000]) == 0


def test_player_gradient_signs():
    net = MnistNet("DANN")
    flat = net.init(torch.Generator().manual_seed(3), F64).requires_grad_(True)
    x = torch.randint(0, 256, (6, 28, 28, 3), dtype=torch.uint8)
    y = torch.tensor([1, 2, 3, 0, 0, 0])
    src = torch.tensor([True, True, True, False, False, False])
    f, _ = objective(net, 0.7, flat, x, y, src)
    (g,) = torch.autograd.grad(f, flat)
    G = player_sign(net, F64) * g
    p = net.unflatten(flat)
    z = net.features(p, x)
    adv = 0.7 * domain_loss(net, p, z, net.classify(p, z), src, None)
    (ga,) = torch.autograd.grad(adv, flat)
    n_omega = net.sizes["omega"]
    torch.testing.assert_close(G[n_omega:], ga[n_omega:], rtol=0, atol=1e-12)


def test_allocation_counts():
    c1, c2 = allocate_two_clients(1000, 900, 0.7)
    assert (len(c1.source), len(c1.target), len(c2.source), len(c2.target)) == (700, 270, 300,
                                                                                 630)
    assert c1.batch_split(64) == (64 * 700 // 970, 64 - 64 * 700 // 970)
    a, b = allocate_two_clients(10, 10, 1.0)
    assert (len(a.source), len(a.target), len(b.source), len(b.target)) == (10, 0, 0, 10)
    assert a.batch_split(64) == (64, 0) and b.batch_split(64) == (0, 64)
    cs = allocate_split_clients(10, 7, 2, 3)
    assert [len(c.source) for c in cs] == [5, 5, 0, 0, 0]
    assert [len(c.target) for c in cs] == [0, 0, 3, 2, 2]
    with pytest.raises(ValueError, match="p must be"):
        allocate_two_clients(10, 10, 1.5)


def test_batch_stream_drops_tail_and_reshuffles():
    s = BatchStream(np.arange(10), 4, np.random.default_rng(0))
    b1, b2, b3 = s.next(), s.next(), s.next()
    assert len(set(b1) | set(b2)) == 8  # consecutive, disjoint
    assert len(set(b3)) == 4  # restarted on a new permutation: 2 rows of the tail dropped
    ref = np.random.default_rng(0)
    first = ref.permutation(np.arange(10))
    second = ref.permutation(np.arange(10))
    assert np.array_equal(np.concatenate([b1, b2]), first[:8])
    assert np.array_equal(b3, second[:4])


_problem = random_da_problem


@pytest.mark.parametrize("method", ["DANN", "MDD"])
def test_vmapped_clients_equal_loop(method):
    net = MnistNet(method)
    theta0 = net.init(torch.Generator().manual_seed(0))
    blocks = (Block("omega", net.sizes["omega"], 0.01), Block("psi", net.sizes["psi"], 0.01))
    a = build("FedMM", _problem(net, n=32, batch=4, p=0.75), init=theta0, blocks=blocks,
              local_steps=2)
    b = build("FedMM", _problem(net, n=32, batch=4, p=0.75), init=theta0, blocks=blocks,
              local_steps=2, backend="loop")
    a.run(1)
    b.run(1)
    torch.testing.assert_close(a.state.theta0, b.state.theta0, rtol=0, atol=2e-5)


def test_fedsgda_equals_fedavg_one_step_on_the_network():
    net = MnistNet("CDAN")
    theta0 = net.init(torch.Generator().manual_seed(0))
    blocks = (Block("omega", net.sizes["omega"], 0.01), Block("psi", net.sizes["psi"], 0.01))
    a = build("FedSGDA", _problem(net, n=32, batch=4), init=theta0, blocks=blocks,
              local_steps=20)
    b = build("FedAvgGDA", _problem(net, n=32, batch=4), init=theta0, blocks=blocks,
              local_steps=1)
    a.run(2)
    b.run(2)
    assert torch.equal(a.state.theta0, b.state.theta0)


def test_office_heads_shapes_and_bn():
    for method, psi in (("DANN", 1024 * 1024 + 1024 + 1024 * 2 + 2),
                        ("CDAN", 31 * 1024 * 1024 + 1024 + 1024 * 2 + 2),
                        ("MDD", 1024 * 1024 + 1024 + 1024 * 31 + 31)):
        net = OfficeHeads(method, feature_in=1280)
        assert net.sizes["psi"] == psi
    net = OfficeHeads("DANN", feature_in=12, n_classes=3, width=8)
    p = net.unflatten(net.init(torch.Generator().manual_seed(0), F64))
    x = torch.randn(16, 12, dtype=F64)
    stats = {}
    h = net.features(p, x, stats=stats)
    pre = x @ p["bott.weight"].T + p["bott.bias"]
    ref = torch.relu((pre - pre.mean(0)) / torch.sqrt(pre.var(0, unbiased=False) + 1e-5))
    torch.testing.assert_close(h, ref, rtol=0, atol=1e-12)
    torch.testing.assert_close(stats["batch_var"], pre.var(0, unbiased=True))
