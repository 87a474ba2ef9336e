"""The client-update engine and the six methods: loop oracle == vectorized path, gradients
against torch.nn, messages, reductions, validation and determinism.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.relfair import (
    DRFA,
    METHODS,
    SAFL,
    ClientProblem,
    DRFAConfig,
    FedAvg,
    FedAvgConfig,
    SAFLConfig,
    ScaffPDIA,
    ScaffPDIAConfig,
    TrainSetup,
    make_algorithm,
)
from repro.relfair.client_batch import ClientEngine
from repro.relfair.clients import draw_round
from repro.relfair.instances import gaussian_clients
from repro.relfair.messages import (
    SERVER_TO_CLIENT,
    ControlBroadcast,
    DeltaReport,
    LossControlReport,
    LossReport,
    ModelBroadcast,
    ModelReport,
)
from repro.relfair.metrics import client_metrics
from repro.relfair.models import init_params
from repro.relfair.problem import RelativeAmbiguitySet

D_IN, N_CLIENTS = 30, 10
SETUP = TrainSetup(batch=8, hidden=50, dropout=0.5)


def payload_tensors(message) -> list[torch.Tensor | np.ndarray]:
    """Every array a message carries (DRFA's integer snapshot step is not an array)."""
    out = []
    for value in message.__dict__.values():
        if isinstance(value, tuple):
            out += list(value)
        elif isinstance(value, torch.Tensor | np.ndarray):
            out.append(value)
    return out


@pytest.fixture(scope="module")
def data():
    # learnable Gaussian clusters; one client smaller than the batch: draws with replacement
    return gaussian_clients(5, 1500, D_IN, N_CLIENTS, small_client=6)


def _alg(method, data, backend, seed=3, local_work="steps"):
    theta0 = init_params(D_IN, 50, 10, torch.Generator().manual_seed(11))
    return make_algorithm(method, ClientProblem(data, SETUP), init=theta0,
                          rng=torch.Generator().manual_seed(seed), backend=backend,
                          local_steps=5, local_work=local_work)


@pytest.mark.parametrize("method", METHODS)
def test_loop_oracle_equals_vectorized_after_5_rounds(data, method):
    a, b = _alg(method, data, "loop"), _alg(method, data, "vectorized")
    a.run(5)
    b.run(5)
    diff = max(float((p - q).abs().max()) for p, q in zip(a.state.theta, b.state.theta,
                                                          strict=True))
    assert diff <= 1e-6
    assert np.abs(a.state.lam - b.state.lam).max() <= 1e-6
    assert a.state.round == b.state.round == 6


def test_gradients_match_torch_nn(data):
    theta = init_params(D_IN, 50, 10, torch.Generator().manual_seed(1))
    draws = draw_round(data, 1, SETUP.batch, 50, 0.5, torch.Generator().manual_seed(2))
    losses, grads = ClientEngine(data, "vectorized").gradients_at(theta, draws, 0)
    for i in range(data.n):
        l1, l2 = torch.nn.Linear(D_IN, 50), torch.nn.Linear(50, 10)
        with torch.no_grad():
            l1.weight.copy_(theta[0].T)
            l1.bias.copy_(theta[1])
            l2.weight.copy_(theta[2].T)
            l2.bias.copy_(theta[3])
        idx = draws.idx[0, i]
        h = torch.relu(l1(data.X_train[idx])) * draws.mask[0, i]
        loss = torch.nn.functional.cross_entropy(l2(h), data.y_train[idx])
        loss.backward()
        assert abs(float(loss.detach()) - float(losses[i])) <= 1e-6
        for g, ref in zip(grads, (l1.weight.grad.T, l1.bias.grad, l2.weight.grad.T,
                                  l2.bias.grad), strict=True):
            assert float((g[i] - ref).abs().max()) <= 1e-6


def test_draw_round_indices(data):
    draws = draw_round(data, 4, 8, 50, 0.5, torch.Generator().manual_seed(0))
    assert draws.idx.shape == (4, data.n, 8) and draws.mask.shape == (4, data.n, 8, 50)
    assert set(torch.unique(draws.mask).tolist()) <= {0.0, 2.0}
    offs = data.train_offsets
    for i in range(data.n):
        block = draws.idx[:, i]
        assert int(block.min()) >= offs[i] and int(block.max()) < offs[i + 1]
        if offs[i + 1] - offs[i] >= 8:  # without replacement
            assert all(len(set(row.tolist())) == 8 for row in block)
    assert data.train_sizes[0] == 4 and data.val_sizes[0] == 2  # floor(0.8 * 6) = 4


def test_scaff_pd_ia_messages(data):
    alg = _alg("Scaff-PD-IA", data, "vectorized")
    round_ = alg.step()
    assert round_.round == 1
    assert [type(m) for m in round_.downlink] == [ModelBroadcast, ControlBroadcast]
    assert [type(m) for m in round_.uplink] == [LossControlReport, DeltaReport]
    msgs = round_.downlink + round_.uplink
    model_shapes = [tuple(p.shape) for p in alg.state.theta]
    for m in msgs:
        if isinstance(m, SERVER_TO_CLIENT):  # theta and c^r only: lambda never leaves
            assert [tuple(t.shape) for t in payload_tensors(m)] == model_shapes
        else:  # one row per client; model-sized tensors or one scalar per client, no data
            for t in payload_tensors(m):
                assert t.shape[0] == data.n
                assert tuple(t.shape[1:]) in set(model_shapes) | {()}
    assert round_.uplink[0].losses.shape == (data.n,)


@pytest.mark.parametrize("method", ["FedAvg", "SAFL", "DRFA"])
def test_baseline_messages_carry_models_and_scalars_only(data, method):
    alg = _alg(method, data, "vectorized")
    round_ = alg.step()
    model_shapes = [tuple(p.shape) for p in alg.state.theta]
    assert isinstance(round_.downlink[0], ModelBroadcast)
    assert not any(isinstance(m, SERVER_TO_CLIENT) for m in round_.uplink)
    for m in round_.downlink + round_.uplink:
        for t in payload_tensors(m):
            shape = tuple(t.shape)
            if isinstance(m, SERVER_TO_CLIENT):
                assert shape in model_shapes
            else:
                assert shape[0] == data.n and shape[1:] in set(model_shapes) | {()}


def test_scaffold_keeps_uniform_weights_and_sends_no_losses(data):
    alg = _alg("Scaffold", data, "vectorized")
    for _ in range(3):
        msgs = alg.step()
        assert msgs.uplink[0].losses is None
        assert np.array_equal(alg.state.lam, np.full(data.n, 1 / data.n))


def test_scaff_pd_dual_stays_in_capped_simplex_and_ia_in_lambda_phi(data):
    pd, ia = _alg("Scaff-PD", data, "vectorized"), _alg("Scaff-PD-IA", data, "vectorized")
    pd.run(3)
    ia.run(3)
    assert pd.state.lam.min() >= 0 and pd.state.lam.max() <= 1 / (0.2 * data.n) + 1e-15
    assert RelativeAmbiguitySet(data.n, 0.2, 0.2, 0.2).contains(ia.state.lam)
    assert not np.array_equal(ia.state.lam, np.full(data.n, 1 / data.n))


def test_dual_step_uses_extrapolated_losses(data):
    """Line 8-9: lambda^{r+1} = Proj(lambda^r + sigma ((1+vs) L^r - vs L^{r-1}))."""
    alg = _alg("Scaff-PD-IA", data, "vectorized")
    alg.step()
    lam1, L1 = alg.state.lam.copy(), alg.state.prev_losses.copy()
    msgs = alg.step()
    L2 = msgs.uplink[0].losses
    amb = alg.config.ambiguity
    expected = amb.project(lam1 + 1e-3 * (2 * L2 - L1))
    assert np.abs(alg.state.lam - expected).max() <= 1e-15


def test_same_seed_same_run_and_different_seed_differs(data):
    runs = [_alg("DRFA", data, "vectorized", seed=s) for s in (4, 4, 5)]
    for r in runs:
        r.run(2)
    assert all(torch.equal(p, q) for p, q in zip(runs[0].state.theta, runs[1].state.theta,
                                                 strict=True))
    assert not torch.equal(runs[0].state.theta[0], runs[2].state.theta[0])


@pytest.mark.parametrize("cls,kwargs,name", [
    (ScaffPDIAConfig, {"eta": 0.0}, "eta"), (ScaffPDIAConfig, {"tau": -1.0}, "tau"),
    (ScaffPDIAConfig, {"sigma": 0.0}, "sigma"),
    (ScaffPDIAConfig, {"local_steps": 0}, "local_steps"),
    (FedAvgConfig, {"eta": 0.0}, "eta"), (FedAvgConfig, {"local_work": "epoch"}, "local_work"),
    (SAFLConfig, {"sigma": -1.0}, "sigma"),
    (DRFAConfig, {"gamma": 0.0}, "gamma"), (TrainSetup, {"dropout": 1.0}, "dropout"),
])
def test_config_validation(cls, kwargs, name):
    if cls in (ScaffPDIAConfig, SAFLConfig, DRFAConfig):
        kwargs = {"ambiguity": RelativeAmbiguitySet(10, 0.2, 0.2, 0.2), **kwargs}
    with pytest.raises(ValueError, match=name):
        cls(**kwargs)


def test_wrong_config_type_size_problem_and_option(data):
    problem = ClientProblem(data)
    with pytest.raises(TypeError, match="FedAvgConfig"):
        FedAvg(problem, SAFLConfig(RelativeAmbiguitySet(10, 0.2, 0.2, 0.0)))
    with pytest.raises(TypeError, match="ClientProblem"):
        FedAvg(ClientEngine(data), FedAvgConfig())
    for config in (ScaffPDIAConfig(RelativeAmbiguitySet(7, 0.2, 0.2, 0.2)),
                   DRFAConfig(RelativeAmbiguitySet(7, 0.2, 0.2, 0.0))):
        with pytest.raises(ValueError, match="ambiguity.n must equal the number of clients 10"):
            (ScaffPDIA if isinstance(config, ScaffPDIAConfig) else DRFA)(problem, config)
    with pytest.raises(ValueError, match="method"):
        make_algorithm("FedProx", problem)
    with pytest.raises(ValueError, match=r"DRFA: unknown option\(s\) \['lr'\]"):
        make_algorithm("DRFA", problem, lr=0.5)  # not a common option: refused, never ignored
    assert isinstance(make_algorithm("SAFL", problem), SAFL)
    assert isinstance(make_algorithm("DRFA", problem), DRFA)


def test_defaults_are_app_j2s_primary_reading_written_once():
    """Library defaults follow App. J.2 and its primary reading (J = 5 local epochs): every
    method with local work gets local_work "epochs" and J = 5 from one place (LocalWork); tau
    2.5e-2 only from ScaffPDIAConfig; alpha = phi = 0.2.
    """
    from repro.relfair.federated import LocalWork
    from repro.relfair.methods import tiny_problem

    problem = tiny_problem(0)
    assert (LocalWork().local_steps, LocalWork().local_work) == (5, "epochs")
    six = ("FedAvg", "Scaffold", "SAFL", "DRFA", "Scaff-PD", "Scaff-PD-IA")  # among METHODS
    configs = {name: METHODS[name].configure(problem) for name in six}
    for name, c in configs.items():
        if name != "SAFL":
            assert isinstance(c, LocalWork) and (c.local_steps, c.local_work) == (5, "epochs")
    assert not isinstance(configs["SAFL"], LocalWork)  # App. J.2 excludes SAFL from J
    assert {configs[m].tau for m in ("Scaffold", "Scaff-PD", "Scaff-PD-IA")} == {2.5e-2}
    ia = configs["Scaff-PD-IA"].ambiguity
    assert (ia.alpha, ia.beta, ia.phi) == (0.2, 0.2, 0.2)
    assert configs["Scaff-PD"].ambiguity.phi == 0.0 and configs["SAFL"].ambiguity.alpha == 0.2
    assert configs["Scaffold"].ambiguity.is_singleton
    # an option another method declares is accepted (one call configures any method) and
    # unread; one no method declares is refused
    assert METHODS["FedAvg"].config_for(problem, tau=9.0, phi=0.5) == configs["FedAvg"]
    with pytest.raises(ValueError, match=r"FedAvg: unknown option\(s\) \['taus'\]"):
        METHODS["FedAvg"].config_for(problem, taus=9.0)


def _tamper(monkeypatch, module, cls, field, scale):
    """Replace ``module.cls`` (a message type) by one whose ``field`` arrives scaled."""
    def make(*args, **kwargs):
        msg = cls(*args, **kwargs)
        value = getattr(msg, field)
        value = (tuple(scale * v for v in value) if isinstance(value, tuple)
                 else scale * value)
        return cls(**{**msg.__dict__, field: value})
    monkeypatch.setattr(module, cls.__name__, make)


@pytest.mark.parametrize(("method", "module", "cls", "field"), [
    ("FedAvg", "fedavg", ModelReport, "models"),
    ("SAFL", "safl", "GradientLossReport", "gradients"),
    ("DRFA", "drfa", LossReport, "losses"),
    ("Scaff-PD-IA", "scaff_pd_ia", DeltaReport, "deltas"),
    ("Scaff-PD-IA", "scaff_pd_ia", LossControlReport, "losses"),
])
def test_the_server_aggregates_what_the_messages_carry(data, monkeypatch, method, module, cls,
                                                       field):
    """The typed messages are the channel, not a log: a report altered in transit changes
    the server's update, and the returned messages are those the server read.
    """
    import importlib

    import repro.relfair.messages as messages

    mod = importlib.import_module(f"repro.relfair.{module}")
    cls = getattr(messages, cls) if isinstance(cls, str) else cls
    clean = _alg(method, data, "vectorized")
    clean.step()
    _tamper(monkeypatch, mod, cls, field, 3.0)
    tampered = _alg(method, data, "vectorized")
    round_ = tampered.step()
    sent = next(m for m in round_.uplink if type(m) is cls)
    assert isinstance(getattr(sent, field), tuple | np.ndarray)
    moved = (not all(torch.equal(p, q) for p, q in zip(clean.state.theta,
                                                         tampered.state.theta, strict=True))
             or not np.array_equal(clean.state.lam, tampered.state.lam))
    assert moved
    if method == "FedAvg":  # theta^{r+1} is exactly the mean of the reported models
        assert all(torch.equal(t, m.mean(dim=0))
                   for t, m in zip(tampered.state.theta, sent.models, strict=True))


def test_client_metrics_hand_example():
    losses = np.array([1.0, 2.0, 3.0, 4.0, 10.0])
    accs = np.array([0.9, 0.5, 0.7, 0.1, 1.0])
    m = client_metrics(losses, accs, alpha=0.4)  # floor(0.4 * 5) = 2 clients per group
    assert m["acc_all"] == pytest.approx(0.64, abs=1e-15)
    assert m["acc_worst20"] == pytest.approx(0.3, abs=1e-15)
    assert m["acc_best20"] == pytest.approx(0.95, abs=1e-15)
    assert m["R_AB"] == pytest.approx(7.0 / 1.5, abs=1e-14)
    pair_sum = np.abs(losses[:, None] - losses[None, :]).sum()
    assert m["gini"] == pytest.approx(pair_sum / (2 * 25 * 4.0), abs=1e-14)


def test_phi_zero_ia_is_scaff_pd_for_any_b(data):
    """Phi = 0: Lambda_0(Delta_alpha, B) = Delta_alpha whatever B, so Scaff-PD-IA runs Scaff-PD's
    DRO algorithm bit for bit (specs/relfair.md §1.5, §3.5; A7).
    """
    pd = _alg("Scaff-PD", data, "vectorized")
    theta0 = init_params(D_IN, 50, 10, torch.Generator().manual_seed(11))
    for beta in (0.2, 0.5, 1.0):
        amb = RelativeAmbiguitySet(data.n, 0.2, beta, 0.0)
        k = int(np.floor(0.2 * data.n + 1e-12))
        assert np.array_equal(np.sort(amb.w)[::-1][:k], np.full(k, 1 / (0.2 * data.n)))
        assert np.abs(np.sort(amb.w)[::-1][k:]).max(initial=0.0) <= 1e-15
        ia = ScaffPDIA(ClientProblem(data, SETUP),
                       ScaffPDIAConfig(amb, local_steps=5, local_work="steps"), init=theta0,
                       rng=torch.Generator().manual_seed(3))
        ia.run(3)
        if beta == 0.2:
            pd.run(3)
        assert all(torch.equal(p, q) for p, q in zip(ia.state.theta, pd.state.theta,
                                                     strict=True))
        assert np.array_equal(ia.state.lam, pd.state.lam)


def test_the_local_step_size_is_eta_in_every_config_and_lr_still_works():
    """One name for one hyperparameter across the paper's configs (the paper's eta); the old
    ``lr`` keyword and attribute still work, with a DeprecationWarning, and change no value.
    """
    amb = RelativeAmbiguitySet(10, 0.2, 0.2, 0.0)
    configs = (FedAvgConfig(), SAFLConfig(amb), DRFAConfig(amb), ScaffPDIAConfig(amb))
    assert all(hasattr(c, "eta") for c in configs)
    assert [c.eta for c in configs[:3]] == [0.1, 0.1, 0.1]
    with pytest.warns(DeprecationWarning, match="FedAvgConfig: the keyword lr= is deprecated"):
        old = FedAvgConfig(lr=0.3)
    assert old == FedAvgConfig(eta=0.3)
    with pytest.warns(DeprecationWarning, match="DRFAConfig: the attribute .lr"):
        assert DRFAConfig(amb, eta=0.2).lr == 0.2
    with pytest.warns(DeprecationWarning):
        assert SAFLConfig(amb, lr=0.05).eta == 0.05
    assert SAFLConfig(amb, 0.1, 1e-3).sigma == 1e-3  # positional order unchanged
