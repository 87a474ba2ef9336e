"""The performance-estimation (PEP) rate checks of paper 003: the SDPs against members of the
class and known closed forms, the replay criterion against a bug planted in the package's
Algorithm 2, and the table they add to theory.md.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import repro.constrfl.admm as admm_mod
import theory.constrfl.pep_inner as PI
from theory.__main__ import render_markdown
from theory.constrfl.pep_admm import admm_pep, quadratic_ratio, quadratic_worst
from theory.constrfl.pep_ppa import (
    firm_pep,
    ppa_last_step_closed_form,
    ppa_last_step_pep,
    ppa_min_step_pep,
)
from theory.core.pep import GAP_BOUND, RateRow, pep_table_lines, solve_pep
from theory.registry import load_check_modules, registered, seed_for
from theory.result import CheckResult

load_check_modules()

N_CLIENTS, SIGMA = 3, 0.125          # n = 3, beta = 2: sigma = 1/((n+1) beta)


def _random_class_members(rng, L, count):
    """Quadratics of F_{sigma, L} in d = 1..3 with random eigenbases (n + 1 Hessians each)."""
    for k in range(count):
        d = 1 + k % 3
        hs = []
        for _ in range(N_CLIENTS + 1):
            Q = np.linalg.qr(rng.standard_normal((d, d)))[0]
            ev = SIGMA + (L - SIGMA) * rng.uniform(size=d) ** rng.choice([0.1, 1.0, 10.0])
            hs.append((Q * ev) @ Q.T)
        yield hs


@pytest.mark.parametrize(("rho", "L"), [(0.3, 236.17), (3.0, 200.86)])
def test_random_members_never_exceed_the_tight_factor(rho, L):
    sol = admm_pep(N_CLIENTS, SIGMA, L, rho)
    assert sol.status == "optimal" and abs(sol.gap) <= GAP_BOUND
    rng = np.random.default_rng(7)
    worst = max(quadratic_ratio(h[0], h[1:], rho) for h in _random_class_members(rng, L, 300))
    assert worst <= sol.value * (1 + 1e-7)
    # ... and the box of one-dimensional quadratics attains it (the SDP's value is met)
    q_val, _ = quadratic_worst(N_CLIENTS, SIGMA, L, rho)
    assert abs(q_val - sol.value) <= 1e-6 * sol.value


def test_random_members_never_exceed_lemma42_tight_value():
    rho, L = 1.0, 224.85
    sol = admm_pep(N_CLIENTS, SIGMA, L, rho, metric="w")
    assert sol.status == "optimal"
    rng = np.random.default_rng(8)
    worst = max(quadratic_ratio(h[0], h[1:], rho, metric="w")
                for h in _random_class_members(rng, L, 200))
    assert worst <= sol.value * (1 + 1e-7)
    assert sol.value < 2 / SIGMA                # below the paper's constant


def test_tight_factor_matches_the_first_measured_values():
    """N = 3, beta = 2, sigma = 0.125 at the rate check's L of each rho, as first measured (to
    5 digits; at rho = 3 the exact value is (L/(L+rho))^2 = 0.9707846, which a 1-D quadratic
    attains, so the first measurement's last digit is granted one unit).
    """
    for rho, L, ref in ((0.3, 236.17072713653965, 0.99746),
                        (1.0, 224.85201286773218, 0.99116),
                        (3.0, 200.86224480601243, 0.97079)):
        sol = admm_pep(N_CLIENTS, SIGMA, L, rho)
        assert sol.status == "optimal"
        assert abs(sol.value - ref) <= 1e-5
        assert abs(sol.value - (L / (L + rho)) ** 2) <= 1e-6


def test_two_rounds_are_the_square_of_one_round():
    rho, L = 3.0, 200.86
    one, two = admm_pep(N_CLIENTS, SIGMA, L, rho), admm_pep(N_CLIENTS, SIGMA, L, rho, steps=2)
    assert abs(two.value - one.value ** 2) <= 1e-6 * one.value ** 2
    # from line 1's common start the worst two rounds are strictly better
    line1 = admm_pep(N_CLIENTS, SIGMA, L, rho, steps=2, start="consensus")
    assert line1.value < two.value - 1e-3


@pytest.mark.parametrize("N", [1, 2, 3, 4, 5, 6])
def test_exact_proximal_point_reproduces_its_closed_form(N):
    sol = ppa_last_step_pep(N, beta=2.0)
    assert sol.status == "optimal"
    assert abs(sol.value - ppa_last_step_closed_form(N)) <= 1e-6 * ppa_last_step_closed_form(N)


def test_firm_nonexpansiveness_constant_is_one():
    sol = firm_pep(beta=2.0)
    assert sol.status == "optimal" and abs(sol.value - 1.0) <= 1e-7


def test_inexact_ppa_is_homogeneous_and_grows_with_the_errors():
    errs = [0.05, 0.02, 0.01]
    a = ppa_min_step_pep(1, 1.0, errs)
    b = ppa_min_step_pep(1, 2.0, [2 * e for e in errs])
    assert abs(b.value - 4 * a.value) <= 1e-6 * b.value
    assert a.value > ppa_min_step_pep(1, 1.0, [0.0, 0.0, 0.0]).value + 1e-3


def test_unbounded_pep_is_not_ok():
    from PEPit import PEP
    from PEPit.functions import SmoothStronglyConvexFunction

    pb = PEP()
    f = pb.declare_function(SmoothStronglyConvexFunction, mu=0.1, L=1.0)
    x = pb.set_initial_point()
    pb.set_performance_metric((x - f.stationary_point()) ** 2)   # no initial condition
    sol = solve_pep(pb)
    assert not sol.ok and sol.status != "optimal"


def test_rate_row_ratios_and_margins():
    row = RateRow("c", "s", "q", "factor", sampled=0.5, tight=0.9, paper=0.99)
    assert abs(row.analysis_slack - math.log(0.9) / math.log(0.99)) <= 1e-12
    assert abs(row.instance_easiness - math.log(0.5) / math.log(0.9)) <= 1e-12
    assert row.margin_sampled > 0 and row.margin_paper > 0
    bad = RateRow("c", "s", "q", "constant", sampled=2.0, tight=1.0, paper=0.5, tight_tol=0.0)
    assert bad.margin_sampled == -1.0 and bad.margin_paper == -1.0
    assert bad.analysis_slack == 0.5 and bad.instance_easiness == 0.5


def test_pep_rows_reach_theory_md():
    row = RateRow("Lemma B.3 (64)-(65)", "rho=1", "S_{t+1}/S_t", "factor", 0.78, 0.991,
                  0.9999988)
    norm = RateRow("Lemma 4.2", "rho=1", "||v||^2 / S_t", "constant", 0.2, 1.0, 16.0)
    r = CheckResult(name="constrfl.x", claim="c", paper="003 constrfl", equation="e",
                    instances=1, worst_margin=0.1, ground_truth={}, passed=True,
                    details={"pep_rows": [row.as_dict(), norm.as_dict()]})
    md = render_markdown([r], {"python": "3"}, "default")
    assert "## Performance estimation" in md
    assert "| constrfl.x | Lemma B.3 (64)-(65) | rho=1 | S_{t+1}/S_t | 0.78 | 0.991 | " \
           "1 - 1.2e-06 |" in md
    assert "| Lemma 4.2 | rho=1 | \\|\\|v\\|\\|^2 / S_t | 0.2 | 1 | 16 |" in md  # pipes escaped
    assert "### Where no PEP is computed" in md
    assert pep_table_lines([]) == []


# ------------------------------------------------------------ the planted bug: (20) damped
def _damped_dual_round(factor):
    """(20) as ``lambda + factor rho (u - w)``: the stored multipliers and the uploads u~."""
    orig = admm_mod.ClientSide.round

    def planted(self, msg, eps):
        old = [lam.copy() for lam in self.Lam]
        ups = orig(self, msg, eps)
        self.Lam = [o + factor * (lam - o) for o, lam in zip(old, self.Lam, strict=True)]
        lam = np.concatenate(self.Lam)
        U = np.concatenate(self.U)
        return [type(u)(u.client, U[i] + lam[i] / self.rho, u.epst) for i, u in enumerate(ups)]
    return planted


def _run_b3():
    PI.inner_runs.cache_clear()
    PI.inner_subproblem.cache_clear()
    entry = registered()["constrfl.pep_lemma_b3_factor"]
    return entry.func(seed_for(entry.seed_name), "small")


@pytest.mark.slow
def test_damped_dual_step_fails_the_replay_criterion(monkeypatch):
    clean = _run_b3()
    assert clean.passed and clean.worst_margin >= 0
    replay_clean = [m["replay"] for m in clean.details["criteria_margins"].values()]
    assert min(replay_clean) >= 0.9          # the replay meets the factor well inside 1e-3
    monkeypatch.setattr(admm_mod.ClientSide, "round", _damped_dual_round(0.9))
    try:
        bugged = _run_b3()
    finally:
        monkeypatch.undo()
        PI.inner_runs.cache_clear()
        PI.inner_subproblem.cache_clear()
    replay_bugged = [m["replay"] for m in bugged.details["criteria_margins"].values()]
    assert max(replay_bugged) < 0            # the replay criterion's own margin fails
    assert not bugged.passed and bugged.worst_margin < 0
