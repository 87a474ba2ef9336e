"""Every relfair theory check fails on plausible one-line bugs planted in ``repro/``.

Each test runs the check clean (it must pass with a margin >= 0), plants one bug (a
monkeypatch of a function, method or property of ``repro``; never of ``theory/``, except for
(13), a formula of the paper the package does not implement), runs it again (it must fail
with a margin < 0), all in the same test. Step sizes get two plants: too small and too large.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import repro.core.metrics as metrics
import repro.core.projections as projections
import repro.relfair.scaff_pd_ia as spd
import theory.relfair.phi_selection as RPh
from repro.relfair.client_batch import ClientEngine
from repro.relfair.problem import RelativeAmbiguitySet
from theory.registry import load_check_modules, registered, seed_for

load_check_modules()


def _run(name):
    entry = registered()[name]
    return entry.func(seed_for(entry.seed_name or name), "small")


def _wrap(mp, owner, attr, make):
    mp.setattr(owner, attr, make(getattr(owner, attr)))


def _server_step(factor):
    """Line 15 as ``theta - factor tau sum_i lambda_i Delta u_i``."""
    def make(orig):
        def planted(self):
            h = self.config
            self.config = replace(h, tau=factor * h.tau)
            try:
                return orig(self)
            finally:
                self.config = h
        return planted
    return make


def _local_lr(factor):
    """Alg. 2's local steps with ``factor eta`` while Delta u_i divides by eta."""
    def make(orig):
        def planted(self, theta, lr, *args, **kwargs):
            return orig(self, theta, factor * lr, *args, **kwargs)
        return planted
    return make


def _shifted(orig):
    def planted(*args, **kwargs):
        x = np.array(orig(*args, **kwargs), dtype=float)
        x.flat[0] += 1e-6
        return x
    return planted


_W = RelativeAmbiguitySet.__dict__["w"].func

PLANTS = {
    "relfair.theorem3_convergence": {
        "server step with tau/2": lambda mp: _wrap(mp, spd.ScaffPDIA, "step", _server_step(0.5)),
        "server step with 2 tau": lambda mp: _wrap(mp, spd.ScaffPDIA, "step", _server_step(2.0)),
        "local steps with eta/2": lambda mp: _wrap(mp, ClientEngine, "local_sgd",
                                                   _local_lr(0.5)),
        "local steps with 2 eta": lambda mp: _wrap(mp, ClientEngine, "local_sgd",
                                                   _local_lr(2.0)),
        "dual step descending (wrong sign of s)": lambda mp: _wrap(
            mp, spd, "dual_step", lambda f: lambda lam, s, sigma, amb: f(lam, -s, sigma, amb)),
    },
    "relfair.proposition9_majorization_bounds": {
        "top CVaR over one entry too many (k + 1)": lambda mp: _wrap(
            mp, metrics, "top_cvar",
            lambda f: lambda v, a: f(v, min(1.0, a + 1.0 / np.shape(v)[-1]))),
        "bottom CVaR ignoring beta (0.2)": lambda mp: _wrap(
            mp, metrics, "bottom_cvar", lambda f: lambda v, b: f(v, 0.2)),
    },
    "relfair.theorem4_generalization_terms": {
        "generating vector w without its 1/(1 - phi)": lambda mp: mp.setattr(
            RelativeAmbiguitySet, "w", property(lambda self: (1 - self.phi) * _W(self))),
    },
    "relfair.theorem1_2_monotonicity": {
        "R_{A,B} inverted (F_B / F_A)": lambda mp: _wrap(
            mp, metrics, "relative_fairness_ratio",
            lambda f: lambda losses, a, *r, **k: 1.0 / f(losses, a, *r, **k)),
    },
    "relfair.equation13_phi_selection": {
        # (13) is a formula of the paper the package does not implement: planted in the
        # printed formula the check holds against the minimiser of (12)
        "(13) with c (1 - 0.5) in the denominator": lambda mp: mp.setattr(
            RPh, "printed_13",
            lambda a, b, c: (np.sqrt(b ** 2 + 1.5 * a * c) - b) / (c * 0.5)),
    },
    "relfair.algorithm1_dual_step_projection": {
        "permutohedron projection off by 1e-6": lambda mp: _wrap(
            mp, projections, "permutohedron_projection", _shifted),
    },
    "relfair.proposition5_skewness": {
        "skewness as printed in Prop. 5": lambda mp: mp.setattr(
            RelativeAmbiguitySet, "skewness", property(
                lambda self: float(self.n * np.sum(self.w ** 2)) + 2 * self.alpha - 1)),
    },
}

def test_every_relfair_check_has_plants():
    assert set(PLANTS) == {n for n in registered() if n.startswith("relfair.")}


@pytest.mark.parametrize("name", sorted(PLANTS))
def test_check_fails_on_each_planted_bug(name, monkeypatch):
    """Clean pass, then every plant of this check (one at a time) fails with margin < 0."""
    clean = _run(name)
    assert clean.passed and clean.worst_margin >= 0, (name, clean.details)
    missed = {}
    for plant, apply in PLANTS[name].items():
        with monkeypatch.context() as mp:
            apply(mp)
            planted = _run(name)
        if planted.passed or not planted.worst_margin < 0:
            missed[plant] = planted.worst_margin
    assert not missed, (name, missed)
