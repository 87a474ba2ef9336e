"""Hyperparameters as cell fields: a cell that names one reaches the method's configuration,
a cell that names none configures exactly what it did before the fields existed, and a bad
value is refused naming the field.
"""

from __future__ import annotations

import pytest

from repro.constrfl.experiments import _lcqp
from repro.constrfl.experiments._sweep import sweep_fields


def test_constrfl_fields_override_only_what_the_cell_names():
    assert sweep_fields(_lcqp.HYPER, {"n": 5, "d": 100}, only=True) == {}
    assert sweep_fields(_lcqp.HYPER, {"rho": 2, "n": 5}, only=True) == {"rho": 2.0}
    assert _lcqp.config_for("paper") == _lcqp.config_for("paper", rho=1.0)
    cfg = _lcqp.config_for("paper", rho=0.5, beta=20.0)
    assert (cfg.rho, cfg.beta, cfg.s_bar) == (0.5, 20.0, 0.1)
    with pytest.raises(ValueError, match="cell field 'rho' must be a number"):
        sweep_fields(_lcqp.HYPER, {"rho": "1"}, only=True)
    with pytest.raises(ValueError, match=r"unknown hyperparameter\(s\) \['rhoo'\]"):
        _lcqp.config_for("paper", rhoo=1.0)


def test_relfair_cell_fields_become_the_methods_options():
    from repro.relfair.experiments._training import _options
    from repro.relfair.methods import METHODS, tiny_problem

    plain = {"local_steps": 2}
    swept = {"local_steps": 2, "eta": 0.05, "dro_alpha": 0.3, "phi": 0.1, "sigma": 2e-3,
             "tau": 0.5, "alpha": 0.9}   # a cell's ``alpha`` is a partition's, not the set's
    assert _options(plain) == {"alpha": 0.2, "phi": 0.2, "local_steps": 2,
                               "local_work": "steps"}
    opts = _options(swept)
    assert opts == {"alpha": 0.3, "phi": 0.1, "local_steps": 2, "local_work": "steps",
                    "eta": 0.05, "sigma": 2e-3, "tau": 0.5}
    problem = tiny_problem(0)
    cfg = METHODS["Scaff-PD-IA"].config_for(problem, **opts)
    assert (cfg.eta, cfg.sigma, cfg.tau) == (0.05, 2e-3, 0.5)
    assert (cfg.ambiguity.alpha, cfg.ambiguity.phi) == (0.3, 0.1)
    # at the paper's values the configuration is the one of a cell without the fields
    default = METHODS["Scaff-PD-IA"].config_for(problem, **_options(plain))
    same = _options({"local_steps": 2, "eta": default.eta, "sigma": default.sigma,
                     "tau": default.tau, "dro_alpha": 0.2, "phi": 0.2})
    assert METHODS["Scaff-PD-IA"].config_for(problem, **same) == default


def test_fedmm_run_spec_refuses_a_bad_swept_value():
    from repro.fedmm.training import RunSpec

    assert RunSpec("FedMM", 2, 1, 1).eta is None   # None: the preset's (the paper's) values
    assert RunSpec("FedMM", 2, 1, 1, eta=0.02, mu=0.0).mu == 0.0
    with pytest.raises(ValueError, match="eta"):
        RunSpec("FedMM", 2, 1, 1, eta=0.0)
    with pytest.raises(ValueError, match="mu"):
        RunSpec("FedMM", 2, 1, 1, mu=-1.0)
