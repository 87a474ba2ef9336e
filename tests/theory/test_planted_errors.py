"""Every theory check of constrfl, relfair, fairvfl and the projections can fail (issue #17).

For each check: the error it exists to catch is planted (monkeypatch of the function under
test, or of the formula the check holds the code against), the check is run at size "small"
and must FAIL (``passed`` False, ``worst_margin < 0``); the same test first runs it without
the plant and it must pass. So removing the plant from a test makes that test fail.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import repro.core.projections as P
import theory.fairvfl.lemmas as FL
import theory.fairvfl.rate as FR
from repro.fairvfl.messages import PassiveBroadcast
from repro.fairvfl.models import LinearBlock
from repro.fairvfl.parties import Server
from repro.fairvfl.problem import FairnessGroups, softplus
from theory.registry import load_check_modules, registered, seed_for

load_check_modules()


# ----------------------------------------------------------------------------- the plants
def _wrap(mp, owner, name, make):
    """Replace ``owner.name`` by ``make(original)``."""
    mp.setattr(owner, name, make(getattr(owner, name)))


def _shifted(orig):
    """A projection off by 1e-6 in its first coordinate."""
    def planted(*args, **kwargs):
        x = np.array(orig(*args, **kwargs), dtype=float)
        x.flat[0] += 1e-6
        return x
    return planted


def _kappa_quartered(orig):
    """kappa(t) counting a quarter of the local steps of the round."""
    def planted(self, **kwargs):
        out = orig(self, **kwargs)
        self.state.kappa = max(self.state.kappa // 4, 1)
        return out
    return planted


def _sign_masked_nu(orig):
    """A server that masks nu with random signs before sending it to the passive parties."""
    rng = np.random.default_rng(0)

    def planted(self):
        b = orig(self)
        return PassiveBroadcast(b.nu * rng.choice((-1.0, 1.0), size=b.nu.shape))
    return planted


def _coef_unnormalized(orig):
    """[J](12) weights without the 1/|N^s|: coef = +1 on N^a, -1 on N^b."""
    def planted(y, s):
        g = orig(y, s)
        return dataclasses.replace(g, coef=g.in_a.astype(float) - g.in_b.astype(float))
    return staticmethod(planted)


def _planted_deo_sum(self, c_t):
    """The server's dual step with a DEO missing its 1/|N^s| (sums, not means)."""
    g = self.groups
    d = float(softplus(-self.z[g.in_a]).sum() - softplus(-self.z[g.in_b]).sum())
    if self.fair:
        from repro.fairvfl.problem import dual_gradient
        self.lam = np.maximum(self.lam + self.beta * dual_gradient(d, self.lam, self.eps, c_t),
                              0.0)
    return d


PLANTS = {
    # ---- fairvfl
    "fairvfl.theorem2_fixed_point_kkt":
        ("DEO without its 1/|N^s| in the server's dual step",
         lambda mp: mp.setattr(Server, "dual_step", _planted_deo_sum)),
    "fairvfl.lemma1_primal_progress":
        ("primal steps of 2/eta while Lemma 1 is evaluated at eta",
         lambda mp: _wrap(mp, FL.FairVFL, "step", lambda f: lambda self, eta_t=None, c_t=None:
                          f(self, eta_t=(self.eta if eta_t is None else eta_t) / 2, c_t=c_t))),
    "fairvfl.lemma2_dual_progress":
        ("Lemma 2 with beta = the dual step as printed (not 1/step)",
         lambda mp: mp.setattr(FL, "_readings", lambda s: {"A_beta_is_step": s,
                                                           "B_beta_is_inverse_step": s})),
    "fairvfl.lemma3_lyapunov":
        ("Lemma 3 with beta = the dual step as printed (not 1/step)",
         lambda mp: mp.setattr(FL, "_readings", lambda s: {"A_beta_is_step": s,
                                                           "B_beta_is_inverse_step": s})),
    "fairvfl.assumption2_constants":
        ("L_L without its 1/4 bound on the logistic curvature (half the true constant)",
         lambda mp: _wrap(mp, FL, "smoothness_constants", lambda f: lambda *a: dataclasses.replace(
             f(*a), L_L=f(*a).L_L / 2))),
    "fairvfl.theorem2_rate_gap_bounds":
        ("kappa(t) counting a quarter of the round's local steps",
         lambda mp: _wrap(mp, FR.FairVFL, "step", _kappa_quartered)),
    "fairvfl.theorem1_rotation_invariance":
        ("parties start from theta = 1 instead of 0 (not rotation-equivariant)",
         lambda mp: mp.setattr(LinearBlock, "init", lambda self, g=None: np.ones(self.dim))),
    "fairvfl.theorem1_masked_weights_tuple":
        ("[J](12) weights without the 1/|N^s| (FairnessGroups.coef = 1 on N^a, -1 on N^b)",
         lambda mp: _wrap(mp, FairnessGroups, "from_labels", _coef_unnormalized)),
    "fairvfl.theorem1_label_leak":
        ("passive parties receive nu with a random sign mask (no leak to find)",
         lambda mp: _wrap(mp, Server, "broadcast_passive", _sign_masked_nu)),
    # ---- projections
    **{f"projections.{k}": (f"{fn} off by 1e-6",
                            lambda mp, fn=fn: _wrap(mp, P, fn, _shifted))
       for k, fn in (("orthant", "nonneg_projection"), ("box", "box_projection"),
                     ("ball", "ball_projection"), ("simplex", "simplex_projection"),
                     ("capped_simplex", "capped_simplex_projection"))},
}

# constrfl and relfair: tests/theory/test_constrfl_planted.py, test_relfair_planted.py
MINE = sorted(n for n in registered() if n.split(".")[0] in {"fairvfl", "projections"})


def _run(name):
    entry = registered()[name]
    return entry.func(seed_for(entry.seed_name or name), "small")


def test_every_check_has_a_plant():
    assert set(PLANTS) == set(MINE)


@pytest.mark.parametrize("name", MINE)
def test_check_fails_on_its_planted_error(name, monkeypatch):
    clean = _run(name)
    assert clean.passed and clean.worst_margin >= 0, (name, clean.details)
    _what, plant = PLANTS[name]
    plant(monkeypatch)
    planted = _run(name)
    monkeypatch.undo()
    assert not planted.passed, (name, _what, planted.worst_margin)
    assert planted.worst_margin < 0 or math.isnan(planted.worst_margin), (name, _what)
