"""constrfl's table of methods: the names the paper's tables print, each built from
``(problem, config, w0)`` into the algorithm the experiments run.
"""

from __future__ import annotations

import numpy as np
import pytest

from repro.constrfl import METHODS, build
from repro.constrfl.config import ProxALConfig
from repro.constrfl.cproxal import CentralProxAL
from repro.constrfl.instances import qp_ball
from repro.constrfl.problem import unit_sphere_w0
from repro.constrfl.proxal import FedProxAL


def test_methods_are_named_as_the_tables_print_them():
    assert METHODS == {"Algorithm 1": FedProxAL, "cProx-AL": CentralProxAL}


@pytest.mark.parametrize("name", sorted(METHODS))
def test_build_gives_the_algorithm_bit_for_bit(name):
    problem = qp_ball(np.random.default_rng(0))
    cfg = ProxALConfig(beta=2.0, s_bar=1e-2, rho=1.0, q=0.5, eps1=1e-3, eps2=1e-3, k_max=5,
                       t_max=50, cprox_k_max=5)
    w0 = unit_sphere_w0(problem.d, 0)
    built = build(name, problem, cfg, w0).run()
    direct = METHODS[name](problem, cfg, w0).run()
    assert built.k == direct.k >= 1
    assert np.array_equal(built.w, direct.w)


def test_build_names_the_methods_on_an_unknown_name():
    problem = qp_ball(np.random.default_rng(0))
    with pytest.raises(ValueError, match="cProx-AL"):
        build("ADMM", problem, ProxALConfig(), np.zeros(problem.d))
