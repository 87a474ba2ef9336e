"""The package's schedules equal the paper's, as written in ``theory.constrfl.schedule``
(the checks compute tau_k, eps_{t+1} and the stop floor from the paper, and this
test shows the package's own values equal them).
"""

from __future__ import annotations

import math

from repro.constrfl.admm import InexactADMM
from repro.constrfl.config import ProxALConfig
from theory.constrfl.schedule import admm_tolerance, outer_floor, tau


def test_tau_schedule_equals_the_papers():
    for s_bar in (1e-2, 0.1, 1.0, 2.0):
        cfg = ProxALConfig(s_bar=s_bar)
        for k in range(2000):
            assert cfg.tau(k) == tau(s_bar, k)            # bitwise: s_bar / (k+1)^2
    assert tau(1e-2, 0) == 1e-2 and tau(1e-2, 9) == 1e-4
    assert abs(sum(tau(1.0, k) for k in range(100_000)) - math.pi ** 2 / 6) < 1e-5


def test_admm_tolerance_equals_the_papers():
    admm = InexactADMM.__new__(InexactADMM)   # eps() reads only q and eps_floor
    for q in (0.3, 0.5, 0.9):
        admm.q, admm.eps_floor = q, 0.0
        for t in range(300):
            assert admm.eps(t) == admm_tolerance(q, t)


def test_outer_floor_is_exact():
    # sqrt(s_bar/eps) an integer: K_floor = that integer (the printed floor + 1 is one more)
    assert outer_floor(1e-2, 1e-4) == 10
    assert outer_floor(1e-2, 1e-2) == 1
    assert outer_floor(1.0, 0.25) == 2
    # otherwise the ceiling
    assert outer_floor(1e-2, 3e-4) == 6 and outer_floor(1e-2, 3e-3) == 2
    for s_bar, eps in ((1e-2, 1e-3), (0.1, 7e-4), (2.0, 1e-3)):
        K = outer_floor(s_bar, eps)
        assert s_bar / K ** 2 <= eps < s_bar / (K - 1) ** 2 if K > 1 else s_bar <= eps
