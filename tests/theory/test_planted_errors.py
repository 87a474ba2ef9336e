"""Every theory check of constrfl, relfair and the projections can fail (issue #17; fairvfl:
test_fairvfl_planted.py).

For each check: the error it exists to catch is planted (monkeypatch of the function under
test, or of the formula the check holds the code against), the check is run at size "small"
and must FAIL (``passed`` False, ``worst_margin < 0``); the same test first runs it without
the plant and it must pass. So removing the plant from a test makes that test fail.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

import repro.constrfl.admm as admm
import repro.constrfl.proxal as proxal
import repro.core.projections as P
import theory.constrfl.admm_rate as CA
import theory.constrfl.inner_bounds as CIB
import theory.constrfl.outer as CO
import theory.constrfl.resolvent as CR
import theory.relfair.convergence as RC
import theory.relfair.majorization as RM
import theory.relfair.monotonicity as RMo
import theory.relfair.phi_selection as RPh
import theory.relfair.projection as RPj
from repro.constrfl.config import ProxALConfig
from repro.constrfl.merit import Merit
from repro.relfair.problem import RelativeAmbiguitySet
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


def _mu_update_beta_doubled(orig):
    return lambda block, mu, W, beta: orig(block, mu, W, 2 * beta)


def _stop_test_without(term: str):
    """Algorithm 1's stop test (11) without ``"dmu"`` (its multiplier test) or with only its
    tolerance term (``"tau only"``).
    """
    def make(orig):
        def planted(self):
            k, c, w_old = self.state.k, self.config, self.state.w.copy()
            msgs = orig(self)
            s, tau = self.state, c.tau(k)
            dw = float(np.max(np.abs(s.w - w_old)))
            if term == "tau only":
                s.stopped = tau <= c.eps1
            else:
                s.stopped = dw + c.beta * tau <= c.beta * c.eps1
            return msgs
        return planted
    return make


def _initial_multipliers(orig):
    """Algorithm 1 started from mu^0 = 1 instead of the mu^0 = 0 the check's r_0 assumes."""
    def planted(self, problem, config, w0, **kwargs):
        orig(self, problem, config, w0, **kwargs)
        self.state.mu0 = np.ones_like(self.state.mu0)
        self.state.mus = [np.ones_like(m) for m in self.state.mus]
    return planted


def _client_state_lost(orig):
    """Algorithm 2's clients lose their updates (u_i, lambda_i stay at their start)."""
    def planted(self, msg, eps):
        old = ([u.copy() for u in self.U], [lam.copy() for lam in self.Lam])
        ups = orig(self, msg, eps)
        self.U, self.Lam = old
        return ups
    return planted


def _client_solve_skipped(orig):
    """(19) not solved: the client's Newton solve returns its starting point."""
    def planted(merit, U0, lin, rho, ctr, tol, **kwargs):
        W, info = orig(merit, U0, lin, rho, ctr, tol, **kwargs)
        block = getattr(merit, "block", None)
        return (np.array(U0, dtype=float), info) if block is not None and block.size > 1 \
            else (W, info)
    return planted


_W = RelativeAmbiguitySet.__dict__["w"].func


def _resolvent_wrong_sign(orig):
    """J with a wrong sign in the multiplier half: ``mu+ = [mu_bar - beta c(w+)]_+``."""
    def planted(problem, beta, w_bar, mu_bar, w_start=None):
        w, mu, res = orig(problem, beta, w_bar, mu_bar, w_start)
        return w, np.maximum(mu_bar - beta * CR.constraint_vector(problem, w), 0.0), res
    return planted


PLANTS = {
    # ---- constrfl
    "constrfl.lemma_a2_resolvent_firm_nonexpansive":
        ("wrong sign in the resolvent's multiplier update",
         lambda mp: _wrap(mp, CR, "resolvent", _resolvent_wrong_sign)),
    "constrfl.lemma_a1_a2_iterates":
        ("Algorithm 1's multiplier update with beta doubled",
         lambda mp: _wrap(mp, proxal, "multiplier_update", _mu_update_beta_doubled)),
    "constrfl.theorem41_42_admm_linear_rate":
        ("certificate (22) computed with lambda^{t+1} (D2)",
         lambda mp: mp.setattr(CA, "ProxALConfig",
                               functools.partial(ProxALConfig, epst_lambda="new"))),
    "constrfl.lemma42_admm_bounds":
        ("client step (19) not solved (u_i^{t+1} = u_i^t)",
         lambda mp: _wrap(mp, CIB, "newton_solve", _client_solve_skipped)),
    "constrfl.theorem32_inner_total":
        ("Algorithm 2's clients lose their state updates",
         lambda mp: _wrap(mp, admm.ClientSide, "round", _client_state_lost)),
    "constrfl.lemma41_local_lipschitz":
        ("grad P_0 missing the factor 2 of d/dw [mu + beta c]_+^2 / (2 beta)",
         lambda mp: _wrap(mp, Merit, "grad", lambda g: lambda self, W: 0.5 * g(self, W))),
    "constrfl.mistyped_statements":
        ("tau_k = s_bar / k^2 (off by one: tau_0 = inf)",
         lambda mp: mp.setattr(ProxALConfig, "tau",
                               lambda self, k: self.s_bar / max(k, 1e-3) ** 2)),
    "constrfl.theorem31_output":
        ("stop test (11) without its multiplier-change term",
         lambda mp: _wrap(mp, proxal.FedProxAL, "step", _stop_test_without("dmu"))),
    "constrfl.lemma31_bounded_iterates":
        ("Algorithm 1 started from mu^0 = 1 (not the mu^0 = 0 of Lemma 3.1's r_0)",
         lambda mp: _wrap(mp, proxal.FedProxAL, "__init__", _initial_multipliers)),
    "constrfl.theorem32_outer_complexity":
        ("stop test (11) reduced to its tolerance term tau_k <= eps1",
         lambda mp: _wrap(mp, proxal.FedProxAL, "step", _stop_test_without("tau only"))),
    # ---- relfair
    "relfair.theorem3_convergence":
        ("dual step descending instead of ascending (wrong sign of s)",
         lambda mp: _wrap(mp, RC, "dual_step",
                          lambda f: lambda lam, s, sigma, amb: f(lam, -s, sigma, amb))),
    "relfair.theorem4_generalization_terms":
        ("generating vector w without its 1/(1 - phi)",
         lambda mp: mp.setattr(RelativeAmbiguitySet, "w", property(
             lambda self: (1 - self.phi) * _W(self)))),
    "relfair.proposition9_majorization_bounds":
        ("F_A computed as a bottom CVaR (F_A >= phi F_B no longer holds)",
         lambda mp: mp.setattr(RM, "top_cvar", RM.bottom_cvar)),
    "relfair.theorem1_2_monotonicity":
        ("R_{A,B} inverted (F_B / F_A)",
         lambda mp: _wrap(mp, RMo, "relative_fairness_ratio",
                          lambda f: lambda losses, a: 1.0 / f(losses, a))),
    "relfair.equation13_phi_selection":
        ("(13) with c (1 - 0.5) in the denominator",
         lambda mp: mp.setattr(RPh, "printed_13", lambda a, b, c: (
             np.sqrt(b ** 2 + 1.5 * a * c) - b) / (c * 0.5))),
    "relfair.algorithm1_dual_step_projection":
        ("permutohedron projection off by 1e-6",
         lambda mp: _wrap(mp, RPj, "permutohedron_projection", _shifted)),
    "relfair.proposition5_skewness":
        ("skewness as printed in Prop. 5 (missing 1 - 2 alpha)",
         lambda mp: mp.setattr(RelativeAmbiguitySet, "skewness", property(
             lambda self: float(self.n * np.sum(self.w ** 2)) + 2 * self.alpha - 1))),
    # ---- projections
    **{f"projections.{k}": (f"{fn} off by 1e-6",
                            lambda mp, fn=fn: _wrap(mp, P, fn, _shifted))
       for k, fn in (("orthant", "nonneg_projection"), ("box", "box_projection"),
                     ("ball", "ball_projection"), ("simplex", "simplex_projection"),
                     ("capped_simplex", "capped_simplex_projection"))},
}

# fairvfl: tests/theory/test_fairvfl_planted.py (issue #30)
MINE = sorted(n for n in registered() if n.split(".")[0] in
              {"constrfl", "relfair", "projections"})


def _run(name):
    if name.startswith("constrfl.") and hasattr(CO.sweep, "cache_clear"):
        CO.sweep.cache_clear()  # the three Algorithm-1 sweep checks share a cached run
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
    if name.startswith("constrfl."):
        CO.sweep.cache_clear()
    assert not planted.passed, (name, _what, planted.worst_margin)
    assert planted.worst_margin < 0 or math.isnan(planted.worst_margin), (name, _what)
