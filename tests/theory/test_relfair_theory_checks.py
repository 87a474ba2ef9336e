"""relfair theory checks (specs/relfair.md §8) at size "small"."""

from __future__ import annotations

import numpy as np

from theory import registry
from theory.relfair.majorization import counterexample
from theory.relfair.skewness import exact_limit, printed_prop5

NAMES = {"relfair.algorithm1_dual_step_projection", "relfair.proposition9_majorization_bounds",
         "relfair.proposition5_skewness", "relfair.theorem1_2_monotonicity",
         "relfair.equation13_phi_selection", "relfair.theorem3_convergence",
         "relfair.theorem4_generalization_terms"}


def test_relfair_checks_pass_small():
    results = {r.name: r for r in registry.run_checks("relfair.", "small")}
    assert set(results) == NAMES
    for r in results.values():
        assert r.passed, (r.name, r.details)
        assert r.worst_margin >= 0
    dual_step = results["relfair.algorithm1_dual_step_projection"]
    assert dual_step.ground_truth["statuses"] == {"optimal": 12}
    # the package's Scaff-PD-IA against the closed-form round; CVaRs vs the
    # Rockafellar-Uryasev form; both state a non-zero share of non-trivial instances
    conv = results["relfair.theorem3_convergence"]
    rounds = [k for k in conv.criteria if k.startswith("Alg. 1 lines 10-15 round")]
    assert len(rounds) == 7 and all(conv.criteria[k] > 0.9 for k in rounds)
    assert all(i["theta_error"] <= i["theta_tolerance"] and i["dual_certificate"] <= 1e-10
               for i in conv.details["identity_rounds"])
    assert all(r["max_norm"] < 5.0 for r in conv.details["runs"].values())
    assert all(abs(i["tau_applied_over_tau"] - 1) < 1e-3
               for i in conv.details["identity_rounds"] if i["step"] > 1e-6)
    maj = results["relfair.proposition9_majorization_bounds"].details
    assert maj["cvar_identity_max_relative_error"] <= 1e-12 and maj["nontrivial_share"] > 0.5


def test_prop5_erratum_values():
    """specs/relfair.md §8b table: exact 5 / 8.125 / 25 vs printed 4.4 / 7.525 / 24.4 at
    alpha = 0.2.
    """
    for phi, exact, printed in ((0.0, 5.0, 4.4), (0.2, 8.125, 7.525), (0.5, 25.0, 24.4)):
        assert abs(exact_limit(0.2, phi) - exact) <= 1e-12
        assert abs(printed_prop5(0.2, phi) - printed) <= 1e-12
    assert abs(exact_limit(0.5, 0.2) - printed_prop5(0.5, 0.2)) <= 1e-12
    assert abs(exact_limit(0.7, 0.2) - 1.8112) <= 1e-4


def test_majorization_counterexample():
    ce = counterexample()
    assert np.allclose(ce["R"], [0.1, 0.2]) and np.allclose(ce["lower"], [0.1, 0.35])
    assert np.allclose(ce["upper"], [-0.3, 0.2])
    assert ce["lower_violated"] and ce["upper_violated"]


def test_named_checks_state_their_closest_instance():
    """The skewness formula and the majorization bounds name the instance
    that came closest to violating them, with its numbers.
    """
    results = {r.name: r for r in registry.run_checks("relfair.proposition[59]_*", "small")}
    sk = results["relfair.proposition5_skewness"].closest
    assert sk["criterion"] and sk["tolerance"] > 0 and "alpha" in sk
    mj = results["relfair.proposition9_majorization_bounds"].closest
    assert mj["bound"] in ("lower", "upper")
    assert mj["F_A - phi F_B"] >= 0  # the condition Prop. 9 needs, at the closest instance
    assert mj["lower"] - 1e-12 <= mj["R"] <= mj["upper"] + 1e-12
