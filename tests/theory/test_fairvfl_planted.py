"""Every Fair VFL theory check fails on a bug planted in repro/ and passes without it.

Each test runs the check clean (it must pass), plants one plausible one-line bug in the package
(a monkeypatch of a repro/ function or method, never of theory/), runs it again and asserts a
failure with a negative margin. Where the statement involves a step size, the step is planted
both too small and too large; a plant the statement alone cannot see (a descent lemma is true
for a smaller step) fails the audit of the rounds against the round written in theory/.
"""

from __future__ import annotations

import dataclasses
from functools import cache

import numpy as np
import pytest

import repro.fairvfl.analysis as analysis
from repro.fairvfl.fair_vfl import FairVFL
from repro.fairvfl.messages import PassiveBroadcast
from repro.fairvfl.models import LinearBlock
from repro.fairvfl.parties import PassiveParty, Server, _Party
from repro.fairvfl.problem import FairnessGroups, dual_gradient, softplus
from theory.registry import load_check_modules, registered, seed_for

load_check_modules()


def _run(name):
    entry = registered()[name]
    return entry.func(seed_for(entry.seed_name or name), "small")


@cache
def _clean(name):
    return _run(name)


# ----------------------------------------------------------------------------- the plants
def _dual_step_scaled(factor):
    """The server's dual step [C](9) with beta * factor (a mis-scaled step size)."""
    original = Server.dual_step

    def planted(self, c_t):
        beta = self.beta
        self.beta = beta * factor
        try:
            return original(self, c_t)
        finally:
            self.beta = beta
    return lambda mp: mp.setattr(Server, "dual_step", planted)


def _primal_step_scaled(factor):
    """Every party's gradient step [C](11) / [J](14) with the primal step 1/eta multiplied by
    ``factor``.
    """
    original = _Party._gradient_step

    def planted(self, th, nu, step):
        return original(self, th, nu, step * factor)
    return lambda mp: mp.setattr(_Party, "_gradient_step", planted)


def _constant_scaled(key, factor):
    """repro.fairvfl.analysis.smoothness_constants with one constant off by ``factor``
    (e.g. L_L without the 1/4 bound on the logistic curvature: x4).
    """
    original = analysis.smoothness_constants

    def planted(*args, **kwargs):
        c = original(*args, **kwargs)
        return dataclasses.replace(c, **{key: getattr(c, key) * factor})
    return lambda mp: mp.setattr(analysis, "smoothness_constants", planted)


def _one_step_too_many(mp):
    """Mode random drawing Q_k^(t) from [1, Q + 1] (an off-by-one in the upper bound)."""
    def planted(self):
        out = []
        for p in self.parties:
            if isinstance(p, PassiveParty):
                out.append(1)
            elif self.config.mode == "exact":
                out.append(self.config.Q)
            else:
                out.append(int(self.rng.integers(1, self.config.Q + 2)))
        return out
    mp.setattr(FairVFL, "local_steps", planted)


def _deo_sum(mp):
    """The server's dual step with a DEO missing its 1/|N^s| (sums, not means)."""
    def planted(self, c_t):
        g = self.groups
        d = float(softplus(-self.z[g.in_a]).sum() - softplus(-self.z[g.in_b]).sum())
        if self.fair:
            self.lam = np.maximum(self.lam + self.beta * dual_gradient(d, self.lam, self.eps,
                                                                       c_t), 0.0)
        return d
    mp.setattr(Server, "dual_step", planted)


def _coef_unnormalized(mp):
    """[J](12) weights without the 1/|N^s|: coef = +1 on N^a, -1 on N^b."""
    original = FairnessGroups.from_labels

    def planted(y, s):
        g = original(y, s)
        return dataclasses.replace(g, coef=g.in_a.astype(float) - g.in_b.astype(float))
    mp.setattr(FairnessGroups, "from_labels", staticmethod(planted))


def _sign_masked_nu(mp):
    """A server that masks nu with random signs before sending it to the passive parties."""
    original = Server.broadcast_passive
    rng = np.random.default_rng(0)

    def planted(self):
        b = original(self)
        return PassiveBroadcast(b.nu * rng.choice((-1.0, 1.0), size=b.nu.shape))
    mp.setattr(Server, "broadcast_passive", planted)


PLANTS = {
    ("fairvfl.lemma1_primal_progress", "primal step 2/eta (too large)"): _primal_step_scaled(2.0),
    # the package's ascent beyond the exact worst case over L-smooth functions at 1/eta
    ("fairvfl.pep_lemma1_block_descent", "primal step 2/eta (too large)"):
        _primal_step_scaled(2.0),
    # a descent lemma holds for a smaller step; the audit of the round does not
    ("fairvfl.lemma1_primal_progress", "primal step 1/(2 eta) (too small)"):
        _primal_step_scaled(0.5),
    ("fairvfl.lemma2_dual_progress", "dual step beta/2 (too small)"): _dual_step_scaled(0.5),
    ("fairvfl.lemma2_dual_progress", "dual step 2 beta (too large)"): _dual_step_scaled(2.0),
    ("fairvfl.lemma3_lyapunov", "dual step beta/2 (too small)"): _dual_step_scaled(0.5),
    ("fairvfl.lemma3_lyapunov", "dual step 2 beta (too large)"): _dual_step_scaled(2.0),
    ("fairvfl.assumption2_constants", "package L_L with l'' <= 1/8 (too small)"):
        _constant_scaled("L_L", 0.5),
    ("fairvfl.assumption2_constants", "package L_D without its 1/4 (too large)"):
        _constant_scaled("L_D", 4.0),
    ("fairvfl.theorem2_rate_gap_bounds", "dual step beta/2 (too small)"): _dual_step_scaled(0.5),
    ("fairvfl.theorem2_rate_gap_bounds", "dual step 2 beta (too large)"): _dual_step_scaled(2.0),
    ("fairvfl.theorem2_rate_gap_bounds", "Q_k^(t) drawn from [1, Q + 1]"):
        _one_step_too_many,
    ("fairvfl.theorem2_fixed_point_kkt", "DEO without its 1/|N^s| in the dual step"): _deo_sum,
    ("fairvfl.theorem1_rotation_invariance", "parties start from theta = 1, not 0"):
        lambda mp: mp.setattr(LinearBlock, "init", lambda self, g=None: np.ones(self.dim)),
    ("fairvfl.theorem1_masked_weights_tuple", "[J](12) weights without 1/|N^s|"):
        _coef_unnormalized,
    ("fairvfl.theorem1_label_leak", "nu masked with random signs (no leak to find)"):
        _sign_masked_nu,
}



def test_every_fairvfl_check_has_a_plant():
    names = {n for n in registered() if n.startswith("fairvfl.")}
    assert names == {name for name, _ in PLANTS}


@pytest.mark.parametrize("key", sorted(PLANTS), ids=lambda k: f"{k[0]}: {k[1]}")
def test_fairvfl_check_fails_on_planted_bug(key, monkeypatch):
    name, what = key
    clean = _clean(name)
    assert clean.passed and clean.worst_margin >= 0, (name, clean.details)
    PLANTS[key](monkeypatch)
    planted = _run(name)
    monkeypatch.undo()
    assert planted.verdict in ("fail", "diverged"), (name, what, planted.worst_margin)
    assert planted.worst_margin < 0, (name, what, planted.worst_margin)

