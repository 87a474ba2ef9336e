"""FedMM theory checks (specs/fedmm.md §9.2 T1-T4, T8, T10) at size "small"
(N = 2, d1 = 3, d2 = 2).
"""

from __future__ import annotations

import json

from theory import registry


def _run(name):
    (r,) = [r for r in registry.run_checks(name, "small") if r.name == name]
    assert r.passed, (r.name, r.details)
    assert r.worst_margin >= 0 and r.instances > 0
    assert r.ground_truth["solver"] == "closed form"
    json.dumps(r.to_dict(), allow_nan=False)
    return r


def test_fedmm_theorem1_remark_fixed_point_is_the_global_saddle():
    r = _run("fedmm.theorem1_remark_fixed_point")
    assert r.details["settled_runs"] >= 10
    assert r.details["contractions_not_settled"] == 0
    assert max(r.details["worst_errors"].values()) <= 1e-9


def test_fedmm_propositions1_4_counterexamples_are_shown():
    r = _run("fedmm.propositions1_4")
    m = r.details["margins"]
    for fam in ("Q", "NL"):  # affine and nonlinear (Newton-solved) instances
        assert m[f"{fam} prop34_fails_t0"] > 0.1  # Props 3/4 at t = 0: residual >> 1e-6
        assert m[f"{fam} eta3_half_prop12_fails_t_2_3"] > 0  # eta3 = 0.5 breaks Props 1/2
        assert r.details["per_seed"][f"{fam} seed 0"]["prop12"] <= 1e-10
    assert r.instances == 12


def test_fedmm_sec3_1_drift_bias_grows_with_p():
    r = _run("fedmm.sec3_1_drift_bias")
    e = r.details["relative_errors"]
    assert e["FedAvgGDA M=20 p=0.5"] <= 1e-9 < 1e-3 <= e["FedAvgGDA M=20 p=0.75"]
    assert e["FedAvgGDA M=20 p=0.75"] < e["FedAvgGDA M=20 p=1.0"]
    assert e["FedMM M=20 p=1.0"] <= 1e-9


def test_fedmm_lemma1_false_as_printed_true_index_corrected():
    r = _run("fedmm.lemma1_gradient_bound")
    assert r.details["nonlinear_runs"] >= 5  # (c) is checked where it is not Cauchy-Schwarz
    assert r.details["violations_literal_exact"] == r.details["runs"] > 0
    assert r.details["violations_literal_surrogate"] > 0
    for k in ("c13_index_corrected_dual", "c16_index_corrected_centre"):
        assert max(g[k] for g in r.details["max_gap_per_run"].values()) <= 1e-10
    assert 0 < r.nontrivial <= 1 and r.measured <= r.bound and r.looseness >= 1


def test_fedmm_lemma1_constants_are_the_packages():
    """Lemma 1's L12, psi* and gradients are written in theory/; the package's NLInstance
    gives the same numbers (so the check's bound is not read from repro/).
    """
    import numpy as np

    from repro.fedmm.instances import gen_NL
    from theory.fedmm import lemma1_gradient_bound as m

    inst = gen_NL(2, N=3, d1=4, d2=3, gamma=0.5)
    assert abs(inst.L12() - m.l12(inst)) <= 1e-12 * m.l12(inst)
    rng = np.random.default_rng(0)
    for _ in range(3):
        w, p = rng.standard_normal(4), rng.standard_normal(3)
        np.testing.assert_allclose(inst.psi_star(w), m.psi_star(inst, w), rtol=1e-12)
        np.testing.assert_allclose(inst.dpsi_star(w), m.dpsi_star(inst, w), rtol=1e-12)
        for i in range(3):
            np.testing.assert_allclose(inst.grad_w(i, w, p), m.grad_w(inst, i, w, p),
                                       rtol=1e-12, atol=1e-13)
            np.testing.assert_allclose(inst.grad_p(i, w, p), m.grad_p(inst, i, w, p),
                                       rtol=1e-12, atol=1e-13)


def test_fedmm_appendix_a8_sufficient_mu_range_is_astronomical():
    r = _run("fedmm.appendix_a8_mu_range")
    assert r.verdict == "finding" and not r.applies  # not a pass: the theory does not apply
    assert "do not cover the experiments' mu = 1" in r.finding and r.bound > 1e14
    for row in r.details["per_instance"].values():
        assert abs(row["mu2_low"] - row["mu2_high"]) <= 1e-9 * row["mu2_low"]  # one point
        assert abs(row["l"] * row["B"] - max(row["L12"], row["L22"])) <= 1e-12
        assert row["mu1_min"] > 1e14


def test_fedmm_toy_dann_one_pass_oracle_equals_weighted_analytic_gradients():
    import numpy as np
    import torch

    from theory.fedmm.theorem1_toy_dann import (
        ToyOracle,
        analytic_grads,
        losses,
        make_data,
        mixed_grads,
    )

    data = make_data(0)
    th = np.random.default_rng(3).standard_normal((2, 17))
    g_s, g_t = analytic_grads(th, data)
    t = torch.from_numpy(th).requires_grad_(True)
    f_s, f_t = losses(t, data)
    auto_s = torch.autograd.grad(f_s.sum(), t)[0].numpy()
    assert np.abs(g_s - auto_s).max() <= 1e-12
    for p in (0.5, 0.75, 1.0):
        o = ToyOracle(data, p)
        ref = o.w[:, :1] * g_s + o.w[:, 1:] * g_t
        assert np.abs(mixed_grads(th, o.x, o.ys, o.w) - ref).max() <= 1e-14


def test_fedmm_truths_written_in_theory_equal_the_packages():
    """The saddle point and grad Phi the checks hold FedMM against are computed in theory/; the
    package's QuadInstance gives the same numbers, and z* is stationary.
    """
    import numpy as np

    from repro.fedmm.instances import gen_Q
    from theory.fedmm.trajectory import grad_phi, psi_star, saddle

    inst = gen_Q(1, N=3, d1=4, d2=3)
    z = saddle(inst)
    np.testing.assert_allclose(z, inst.saddle(), rtol=1e-12, atol=1e-13)
    assert np.linalg.norm(grad_phi(inst, z[:4])) <= 1e-12
    np.testing.assert_allclose(psi_star(inst, z[:4]), z[4:], rtol=1e-12, atol=1e-13)
    w = np.random.default_rng(0).standard_normal(4)
    np.testing.assert_allclose(grad_phi(inst, w), inst.grad_phi(w), rtol=1e-12, atol=1e-13)
