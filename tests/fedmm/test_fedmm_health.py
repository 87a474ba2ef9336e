"""FedMM runs that never freeze silently: MDD's loss in log space (finite gradients where the
probability-space formula gives NaN), the device-side finiteness watch of training (no host
read per round; a non-finite state ends the run as a named divergence with its first round),
and the diagnostics logged at each evaluation.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from repro.core.validation import DivergenceError
from repro.fedmm import adaptation, fedmm, health, training
from repro.fedmm.federated import FedState
from repro.fedmm.instances import random_da_problem
from repro.fedmm.models import MnistNet


class _Adversary:
    """Just what :func:`adaptation.domain_loss` reads of an MDD network: its adversary's logits
    are the parameter ``p["adv"]`` itself.
    """

    method = "MDD"

    def adversary(self, p, z, masks=None):
        return p["adv"]


def _mdd_grad(logits: torch.Tensor, yhat_logits: torch.Tensor, is_source: torch.Tensor):
    adv = logits.clone().requires_grad_(True)
    loss = adaptation.domain_loss(_Adversary(), {"adv": adv}, None, yhat_logits, is_source,
                                  None)
    loss.backward()
    return loss.detach(), adv.grad


def test_mdd_gradient_is_finite_where_the_adversary_probability_underflows():
    """A target row whose adversary probability a[yhat] underflows to 0 in float32 (the
    predicted class 110 below another) and a source row with a logit gap of 100 (1/a
    overflows): the probability-space loss has a finite value but a NaN gradient there; the
    log-space loss is finite in both, with the value the formula gives.
    """
    logits = torch.zeros(2, 10)
    logits[0, 3] = 110.0   # target row, yhat = 0: a[0] = exp(-110) underflows to 0
    logits[1, 0] = -100.0  # source row, yhat = 0: a[0] = exp(-100)/9, 1/a overflows
    yhat_logits = F.one_hot(torch.tensor([0, 0]), 10).float()  # the classifier predicts 0
    is_source = torch.tensor([False, True])
    assert F.softmax(logits, 1)[0, 0] == 0.0 and torch.isinf(1 / F.softmax(logits, 1)[1, 0])
    loss, grad = _mdd_grad(logits, yhat_logits, is_source)
    assert torch.isfinite(grad).all() and torch.isfinite(loss)
    # the value: mean of -log(1 + eps - 0) (target) and -log a = 100 + log 9 (source)
    expected = 0.5 * (-torch.log(torch.tensor(1 + adaptation.MDD_EPS, dtype=torch.float64))
                      + 100 + torch.log(torch.tensor(9.0, dtype=torch.float64)))
    assert abs(float(loss) - float(expected)) < 1e-4
    # the probability-space formula this replaces gives NaN there
    adv = logits.clone().requires_grad_(True)
    a = F.softmax(adv, dim=1)[:, 0]
    torch.where(is_source, -torch.log(a), -torch.log(1.0 + adaptation.MDD_EPS - a)
                ).mean().backward()
    assert not torch.isfinite(adv.grad).all()


def test_mdd_log_space_is_the_same_mathematics():
    """Where the probability-space formula is finite, value and gradient agree with it to
    1e-12 (float64, 400 random rows, logits of scale 4).
    """
    g = torch.Generator().manual_seed(0)
    logits = 4 * torch.randn(400, 10, generator=g, dtype=torch.float64)
    yhat_logits = torch.randn(400, 10, generator=g, dtype=torch.float64)
    is_source = torch.rand(400, generator=g) < 0.5
    loss, grad = _mdd_grad(logits, yhat_logits, is_source)
    adv = logits.clone().requires_grad_(True)
    yhat = yhat_logits.argmax(1)
    a = F.softmax(adv, dim=1).gather(1, yhat[:, None]).squeeze(1)
    ref = torch.where(is_source, -torch.log(a), -torch.log(1.0 + adaptation.MDD_EPS - a)).mean()
    ref.backward()
    assert abs(float(loss - ref.detach())) < 1e-12
    assert float((grad - adv.grad).abs().max()) < 1e-12
    assert float(adv.grad.abs().max()) > 1e-4  # the comparison is not of zeros


def test_the_watch_keeps_the_first_nonfinite_round_without_reading_the_device(monkeypatch):
    """:meth:`FiniteWatch.update` reads nothing back to the host (every such read is made to
    raise while it runs); :meth:`check` names the first non-finite round and the tensors.
    """
    watch = health.FiniteWatch(health.WATCHED, "cpu")
    ok = torch.ones(4)
    bad_nan, bad_inf = torch.tensor([1.0, float("nan")]), torch.tensor([float("inf")])

    def no_host_read(*args, **kwargs):
        raise AssertionError("a host read in FiniteWatch.update")

    with monkeypatch.context() as m:
        for name in ("item", "tolist", "__bool__", "__float__", "__int__", "numpy"):
            m.setattr(torch.Tensor, name, no_host_read)
        watch.update(1, [ok, ok, None, ok])
        watch.update(2, [ok, bad_inf, None, ok])        # the first: local iterates, inf
        watch.update(3, [bad_nan, bad_nan, bad_nan, ok])  # later rounds change nothing
    with pytest.raises(DivergenceError) as info:
        watch.check()
    assert (info.value.round, info.value.name) == (2, "local iterates")
    assert info.value.value == float("inf")
    fresh = health.FiniteWatch(health.WATCHED, "cpu")
    fresh.update(5, [bad_nan, ok, bad_nan, ok])
    with pytest.raises(DivergenceError, match=r"diverged at round 5: theta0 and duals = nan"):
        fresh.check()
    quiet = health.FiniteWatch(health.WATCHED, "cpu")
    quiet.update(1, [ok, ok, ok, ok])
    quiet.check()  # finite: nothing raised


def test_state_diagnostics_give_max_theta0_and_each_clients_dual_norms():
    theta0 = torch.tensor([0.5, -3.0, 2.0, 1.0])
    duals = torch.tensor([[3.0, 4.0, 0.0, 2.0], [0.0, 0.0, 1.0, 0.0]])
    s = FedState(1, theta0, theta0.expand(2, -1), duals)
    d = health.state_diagnostics(s, {"omega": 2, "psi": 2})
    assert d == {"theta0_max_abs": 3.0, "lambda_norm_0": 5.0, "beta_norm_0": 2.0,
                 "lambda_norm_1": 0.0, "beta_norm_1": 1.0}
    assert health.state_diagnostics(FedState(1, theta0, theta0[None], None),
                                    {"omega": 2, "psi": 2}) == {"theta0_max_abs": 3.0}


@pytest.mark.parametrize("backend", ["graphed", "loop"])
def test_training_ends_at_the_first_nonfinite_round(monkeypatch, round_log, tmp_path, backend):
    """A NaN planted in theta0 after round 3 (FedMM, MDD, random images): the run logs its
    evaluation of round 2 with the diagnostics, raises at the next read of the watch (the
    checkpoint of round 3) naming round 3, and writes no checkpoint of the non-finite state.
    """
    orig = fedmm.FedMM.step

    def step(self):
        out = orig(self)
        if self.state.round == 3:
            self.state.theta0[0] = float("nan")
        return out

    monkeypatch.setattr(fedmm.FedMM, "step", step)
    net = MnistNet("MDD")
    theta0 = net.init(torch.Generator().manual_seed(0))
    spec = training.RunSpec("FedMM", rounds=6, local_steps=2, eval_every=2,
                            checkpoint_every=3, backend=backend)
    ctx = round_log()
    ckpt = tmp_path / "run.pt"
    with pytest.raises(DivergenceError) as info:
        training.train(random_da_problem(net, n=24, batch=4), net, "mnist", spec, theta0,
                       lambda th: 0.5, ctx, ckpt)
    assert info.value.round == 3 and info.value.name == "theta0"
    assert ctx.curves["round"] == [2.0]
    assert set(ctx.curves) == {"round", "acc", "acc_code_client", "theta0_max_abs",
                               "lambda_norm_0", "lambda_norm_1", "beta_norm_0", "beta_norm_1"}
    assert not ckpt.exists()
