"""Every FedMM theory check fails on a bug planted in repro/ and passes without it.

Each test runs the check clean (it must pass: margin >= 0; a finding at the paper's own setting
is allowed), plants one plausible one-line bug in the package (a monkeypatch of a repro/
method, never of theory/), runs it again and asserts a failure (verdict ``fail``, or
``diverged`` when every run blows up) with a NEGATIVE margin. Where the statement involves a
step, the step is planted too small and too large. Every check audits the rounds it drives
against the round written in theory/, so a plant the statement itself would tolerate still
fails the check (``NOT_SEEN`` is empty).

The plants (Algorithm 3, repro/fedmm/fedmm.py, one factor changed in one line):

* ``dual x0.5`` / ``dual x2``: (13)/(14) with the dual step mu/2 or 2 mu;
* ``dual sign``: (13)/(14) with the sign flipped (every run diverges);
* ``upload x0.5`` / ``upload x2``: (15) with eta3/(2 mu) or 2 eta3/mu.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
import torch

from repro.fedmm import federated, messages
from repro.fedmm.fedmm import FedMM
from theory import registry


def _fedmm_step(dual: float = 1.0, upload: float = 1.0):
    """FedMM.step of repro/fedmm/fedmm.py with the dual step (13)/(14) scaled by ``dual`` and
    the upload coefficient of (15) by ``upload``; otherwise line for line the package's.
    """

    def step(self):
        s = self.state
        t = s.round
        down = messages.Broadcast(t, s.theta0.clone())
        local = self.local_solver(down.theta0, t, self.eta, self.scale, self.mu, s.duals)
        duals = s.duals + dual * self.mu * (local - down.theta0)
        c = self.config.eta3 if self.config.eta3_constant else self.config.eta3 ** t
        shifted = local + upload * (c / self.mu) * duals
        uploads = tuple(messages.Upload(i, shifted[i]) for i in range(self.n_clients))
        self.state = federated.FedState(t + 1, self.aggregate(uploads), local, duals)
        return messages.RoundMessages(t + 1, (down,), uploads)

    return lambda mp: mp.setattr(FedMM, "step", step)


PLANT = {
    "dual x0.5": _fedmm_step(dual=0.5), "dual x2": _fedmm_step(dual=2.0),
    "dual sign": _fedmm_step(dual=-1.0),
    "upload x0.5": _fedmm_step(upload=0.5), "upload x2": _fedmm_step(upload=2.0),
}

# Every check audits the rounds of Algorithm 3 it drives against the round written in
# theory/fedmm/reference.py: a plant the statement itself would tolerate (a fixed point does
# not depend on the dual step's scale; a descent lemma holds for a smaller dual step) fails the
# audit ("Algorithm 3 round (11)-(16)"), so no plant is left unseen.
PLANTS = {
    "fedmm.theorem1_remark_fixed_point": ("dual x0.5", "dual x2", "upload x0.5", "dual sign"),
    "fedmm.sec3_1_drift_bias": ("dual x0.5", "dual x2", "upload x0.5"),
    "fedmm.propositions1_4": ("dual x0.5", "dual x2", "upload x0.5", "upload x2"),
    "fedmm.lemma1_gradient_bound": ("dual x0.5", "dual x2", "upload x0.5", "upload x2",
                                    "dual sign"),
    "fedmm.lemmas5_8": ("dual x0.5", "dual x2", "upload x0.5", "upload x2"),
    "fedmm.lemma3_descent": ("dual x0.5", "dual x2", "upload x0.5", "upload x2",
                             "dual sign"),
    "fedmm.theorem1_inexact": ("dual x2",),
    "fedmm.theorem1_tolerance_gda": ("dual x2",),
    "fedmm.sec4_eta3": ("dual sign",),
    "fedmm.theorem1_toy_dann": ("upload x0.5",),
}
NOT_SEEN: dict[str, tuple[str, ...]] = {}

# Report-only arithmetic of App. A.8 (157)-(159) on the instances' data (verdict "finding"):
# it runs no algorithm of the package, so no bug in Algorithm 3 can reach it.
EXEMPT = {"fedmm.appendix_a8_mu_range"}


def _run(name: str):
    entry = registry.registered()[name]
    torch.set_num_threads(1)
    with np.errstate(all="ignore"):
        return entry.func(registry.seed_for(entry.seed_name or name), "small")


@cache
def _clean(name: str):
    return _run(name)


def test_every_fedmm_check_has_a_plant():
    registry.load_check_modules()
    names = {n for n in registry.registered() if n.startswith("fedmm.")}
    assert names == set(PLANTS) | EXEMPT
    assert all(p in PLANT for ps in (*PLANTS.values(), *NOT_SEEN.values()) for p in ps)


CASES = [(n, p) for n, ps in sorted(PLANTS.items()) for p in ps]


@pytest.mark.parametrize(("name", "plant"), CASES, ids=[f"{n}: {p}" for n, p in CASES])
def test_fedmm_check_fails_on_planted_bug(name, plant, monkeypatch):
    registry.load_check_modules()
    clean = _clean(name)
    # a check may be a finding at the paper's own setting; on its instances it passes
    assert clean.passed and clean.worst_margin >= 0, (name, clean.details)
    PLANT[plant](monkeypatch)
    planted = _run(name)
    monkeypatch.undo()
    assert planted.verdict in ("fail", "diverged"), (name, plant, planted.worst_margin)
    assert planted.worst_margin < 0, (name, plant, planted.worst_margin)
    if plant == "dual sign" and name in ("fedmm.lemma1_gradient_bound",
                                         "fedmm.theorem1_remark_fixed_point"):
        assert planted.verdict == "diverged"  # every run blows up: a named verdict, -inf



