"""How a run of Algorithm 1 ended, Table 2's solver-tolerance readings, and the
rho = 1e8 diagnostic at smoke scale.
"""

from __future__ import annotations

import numpy as np
import pytest

from repro.constrfl.config import ProxALConfig, reference_flags
from repro.constrfl.experiments import reproduce, table2
from repro.constrfl.experiments._fair import config_for
from repro.constrfl.instances import qp_ball
from repro.constrfl.proxal import (
    STOP_CAP,
    STOP_CERTIFIED,
    STOP_CODES,
    STOP_UNCERTIFIED,
    FedProxAL,
)
from repro.constrfl.start import ProxALInit
from repro.engine.records.records import RunRecord
from repro.engine.run.runner import plan


def _run(**kw):
    p = qp_ball(np.random.default_rng(5))
    return FedProxAL(p, ProxALConfig(**kw), init=ProxALInit(np.zeros(p.d))).run()


def test_a_run_whose_every_admm_call_hits_the_cap_is_an_uncertified_stop():
    # T = 10 rounds cannot meet (23) on this instance (the first call needs 45), and with
    # eps = 0.05 the outer test (11) fires anyway: at K = 8
    st = _run(t_max=10, eps1=0.05, eps2=0.05, k_max=30)
    assert st.stopped and st.k == 8
    assert st.admm_rounds == [10] * 8 and st.admm_certified == [False] * 8
    assert all(c > 0.1 / (k + 1) ** 2 for k, c in enumerate(st.admm_certificates))
    assert st.stop_status == STOP_UNCERTIFIED == "(11) on an uncertified call"
    assert st.certified_stop is False
    assert STOP_CODES[st.stop_status] == 1


def test_certified_stop_and_cap():
    st = _run()                                    # the paper's algorithm, no binding cap
    assert st.stopped and st.k == 10 and all(st.admm_certified)
    assert max(r for r in st.admm_rounds) < 10_001
    # (23): every certificate at most its tau_k = 0.1/(k+1)^2
    assert all(c <= 0.1 / (k + 1) ** 2 for k, c in enumerate(st.admm_certificates))
    assert st.stop_status == STOP_CERTIFIED and st.certified_stop is True
    capped = _run(t_max=5, eps1=0.2, eps2=0.2, k_max=30)
    assert not capped.stopped and capped.k == 30
    assert capped.stop_status == STOP_CAP and capped.certified_stop is False
    two = _run(k_max=2)                            # certified calls, stopped by the K cap
    assert two.admm_certified == [True, True] and two.stop_status == STOP_CAP


def test_table2_readings_apply_the_fairness_flags_to_the_script_set_only():
    assert table2.TABLE2.primary_reading is table2.SCRIPT_TOLERANCE
    prim = plan(table2.TABLE2, "paper", table2.SCRIPT_TOLERANCE)
    alt = plan(table2.TABLE2, "paper", table2.CRITERION_TOLERANCE)
    assert len(prim) == len(alt) == 80
    flagged = [c for c in prim if c.config.get("ref_flags") == "fairness"]
    assert len(flagged) == 40 and {c.config["hyper"] for c in flagged} == {"script"}
    assert not any("ref_flags" in c.config for c in alt)
    # the paper set's cells (and seeds) are shared; the script set's seeds are paired
    shared = {c.key for c in prim} & {c.key for c in alt}
    assert len(shared) == 40
    assert {c.seed for c in prim} == {c.seed for c in alt}
    ref = config_for("script", 300, 50, flags="fairness")
    plain = config_for("script", 300, 50)
    assert ref.reference == reference_flags("fairness") and plain.reference.changed() == {}
    assert ref.replace(reference=plain.reference) == plain    # the flags are all that differ
    rf, pf = ref.reference, plain.reference
    assert (rf.solver_tol_factor, pf.solver_tol_factor) == (1e-4, 1.0)
    assert (rf.cprox_tol_factor, rf.eps_floor) == (1e-4, 1e-10)
    # D4 is a no-op on Table 2: the server solve is iterative, so "measured" adds eps too
    assert rf.stop_server_term == "bound" and pf.stop_server_term == "measured"
    with pytest.raises(ValueError, match="flags must be"):
        config_for("script", 300, 50, flags="lcqp")


def test_table2_rows_name_the_stop_status():
    recs = []
    for trial, code in enumerate((1.0, 1.0, 0.0)):
        recs.append(RunRecord(
            experiment="constrfl.table2", key=f"k{trial}", seed=trial, status="ok",
            config={"n": 5, "hyper": "script", "trial": trial + 1, "k_max": 300,
                    "t_max": 50, "subsample": 0, "ref_flags": "fairness"},
            metrics={"alg1_stop_code": code, "alg1_certified_stop": float(code == 0.0)},
            curves={"alg1_obj": [0.4] * 5, "cprox_obj": [0.4] * 5, "rel_diff": [0.0] * 5,
                    "alg1_disp": [0.05] * 6, "cprox_disp": [0.05] * 6}))
    rows = reproduce.table2(recs)
    assert len(rows) == 7
    assert all(r.note.endswith("Alg. 1 stop: certified (11): 1, (11) on an uncertified "
                               "call: 2") for r in rows)


def test_rho_freeze_diagnostic_at_smoke_scale():
    from repro.constrfl.experiments.diagnostics import rho_freeze

    out = rho_freeze(n=1, trial=1, subsample=2000, t_max=50, t_points=(10, 50),
                     rhos=(1e6, 1e8), floor_iters=20)
    assert out["tau"] == 1e-3 and out["d"] == 38
    # frozen: after 50 rounds w has moved < 1e-6 and the certificate of (23) is > 100 tau
    assert out["vs_T"][50]["w_moved_inf"] < 1e-6
    assert out["vs_T"][50]["certificate"] > 100 * out["tau"]
    assert not out["certified_by_T"]
    # the movement is c/rho: rho * ||w - w0|| agrees to 2 % between rho = 1e6 and 1e8
    assert out["rho_law_spread"] < 0.02
    # the float64 floor of the clients' solves at rho = 1e8 is ~rho ulp(|u|) (1e-10..1e-7),
    # far below the tolerance the T <= 50 calls ask (q^49 = 5.7e-3): not what freezes them
    fl = out["floor"]
    assert 1e-10 < fl["newton_floor"] < 1e-7 and 1e-10 < fl["rho_ulp"] < 1e-7
    assert out["inner_tol_at_cap50"] > 1e4 * fl["newton_floor"]
    assert 150 < out["t_star"] < 250
    assert out["rounds_per_efold"] == pytest.approx(1e8 * 2 * 10)
    with pytest.raises(ValueError, match="must contain"):
        rho_freeze(rhos=(1e6,))
