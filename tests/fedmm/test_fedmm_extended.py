"""The ``extended`` scale of fedmm's MNIST -> MNIST-M figures: five times the
reduced rounds on the same evaluation schedule, a CUDA protocol recorded ``not_run`` on a
machine without a GPU, picked by ``SCALE=auto`` only where its records exist; committed
per-seed tables carry their scale and curves, so the claims judged on them say ``extended``
and the curve claims are decided without run records. No test here needs a GPU.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from repro.engine.compare.compare import check_claims
from repro.engine.records.records import STATUS_NOT_RUN, RunRecord, save_record
from repro.engine.registry import get, load_all
from repro.engine.run.runner import auto_scale, data_sha256, plan, run_experiment
from repro.fedmm import training
from repro.fedmm.experiments import claims as C
from repro.fedmm.experiments import tables as T
from repro.fedmm.experiments._cells import EXTENDED_FACTOR
from repro.fedmm.experiments.render import render_fig4
from repro.fedmm.instances import random_da_problem
from repro.fedmm.models import MnistNet

FIGS = ("fedmm.fig2", "fedmm.fig4", "fedmm.fig5")


def test_extended_cells_are_reduced_with_five_times_the_rounds(monkeypatch):
    monkeypatch.delenv(training.DEVICE_ENV, raising=False)
    monkeypatch.delenv(training.BACKEND_ENV, raising=False)
    counts = {}
    for name in FIGS:
        exp = get(name)
        assert "extended" in exp.scales and exp.resolve_scale("auto") == "reduced"
        red, ext = exp.configs("reduced"), exp.configs("extended")
        counts[name] = len(ext)
        assert len(red) == len(ext)
        for r, e in zip(red, ext, strict=True):
            assert e["rounds"] == EXTENDED_FACTOR * r["rounds"] == (
                15000 if e["algorithm"] == "FedSGDA" else 750)
            assert e["eval_every"] == r["eval_every"]          # the reduced schedule
            assert e["rounds"] // e["eval_every"] == 75        # curve points (+ none extra)
            assert e["device"] == "cuda" and e["backend"] == "graphed"
            assert r["backend"] == "loop" and "device" not in r  # planned on this CPU
            same = {k: v for k, v in e.items() if k not in ("rounds", "device", "backend")}
            assert same == {k: v for k, v in r.items() if k not in ("rounds", "backend")}
        assert sorted({c["seed"] for c in ext}) == [0, 1, 2]
    assert counts == {"fedmm.fig2": 9, "fedmm.fig4": 27, "fedmm.fig5": 81}
    assert "extended" not in get("fedmm.table1").scales
    with pytest.raises(ValueError, match="has no scale 'extended'"):
        get("fedmm.table1").configs("extended")


def test_an_extended_run_starts_as_the_reduced_run(round_log):
    """The same rounds are the same computation: the first R rounds of a 5R-round run log
    the R-round run's curve exactly (eta3 decays per round, never by the total).
    """
    net = MnistNet("CDAN")
    theta0 = net.init(torch.Generator().manual_seed(0))
    curves = {}
    for rounds in (4, 4 * EXTENDED_FACTOR):
        spec = training.RunSpec("FedMM", rounds=rounds, local_steps=2, eval_every=2,
                                backend="graphed")
        ctx = round_log()
        training.train(random_da_problem(net, n=24, batch=4), net, "mnist", spec, theta0,
                       lambda th: float(th.double().sum()), ctx)
        curves[rounds] = ctx.curves
    short, long = curves[4], curves[4 * EXTENDED_FACTOR]
    assert len(long["round"]) == 10 and long["round"][:2] == short["round"] == [2.0, 4.0]
    assert long["acc"][:2] == short["acc"] and long["acc"][2] != short["acc"][-1]


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the machine without a GPU")
def test_extended_cells_are_not_run_without_a_gpu(isolated):
    summary = run_experiment(get("fedmm.fig2"), "extended", out=isolated / "results",
                             progress=False)
    assert summary.not_run == 9 == len(summary.records) and summary.computed == 9
    assert all(r.status == STATUS_NOT_RUN and r.reason.startswith("needs an accelerator: ")
               and "scripts/gpu_fedmm_extended.sh" in r.reason for r in summary.records)
    # a not_run record is not a result: auto stays at reduced
    assert auto_scale(get("fedmm.fig2"), "auto", isolated / "results") == "reduced"


def _fake_result(cell, experiment: str, code: str | None = None) -> RunRecord:
    return RunRecord(experiment=experiment, config=cell.config, key=cell.key, seed=cell.seed,
                     code=cell.code if code is None else code, data=data_sha256(get(experiment)),
                     metrics={"test_acc_full": 0.5},
                     curves={"round": [10.0], "acc": [0.5]})


def test_auto_prefers_extended_where_its_records_exist(tmp_path):
    exp = get("fedmm.fig4")
    out = tmp_path / "results"
    assert auto_scale(exp, "auto", out) == "reduced"
    assert auto_scale(exp, "smoke", out) == "smoke"
    cell = plan(exp, "extended")[5]
    save_record(_fake_result(cell, exp.name), out)
    assert auto_scale(exp, "auto", out) == "extended"
    assert auto_scale(exp, "reduced", out) == "reduced"   # an explicit scale is kept
    assert auto_scale(get("fedmm.fig2"), "auto", out) == "reduced"  # per experiment
    # a record made by other code (stale) counts too: it is shown, marked, and rerun
    other = tmp_path / "other"
    stale = dataclasses.replace(_fake_result(cell, exp.name, code="0" * 16), key="stale0")
    save_record(stale, other)
    assert auto_scale(exp, "auto", other) == "extended"


def _runs(seed_offset: float):
    """Fig. 4 records with distinct random curves (extended-like round grids)."""
    rng = np.random.default_rng(0)
    recs = []
    for alg, m, grid in (("FedMM", 20, range(10, 760, 10)), ("FedMM", 25, range(10, 760, 10)),
                         ("FedSGDA", 1, range(200, 15200, 200))):
        for s in range(3):
            r = [float(x) for x in grid]
            acc = np.clip(np.sort(rng.uniform(0.1, 0.7 if alg == "FedMM" else 0.5, len(r))), 0,
                          1) + seed_offset
            acc_l = [float(a) for a in acc]
            recs.append(RunRecord(
                experiment="fedmm.fig4", key=f"{alg}{m}{s}", seed=s,
                config={"da": "MDD", "algorithm": alg, "local_steps": m, "p": 1.0, "seed": s,
                        "n_source": 55000, "n_target": 55000, "batch": 64,
                        "rounds": int(r[-1])},
                metrics={"test_acc_full": acc_l[-1] - 0.01, "best_acc": max(acc_l),
                         "final_acc": float(np.mean(acc_l[-5:])), "r_conv": r[-3],
                         "rounds": r[-1], "test_acc_full_code_client": acc_l[-1]},
                curves={"round": r, "acc": acc_l, "acc_code_client": acc_l}))
    return recs


def test_committed_tables_carry_scale_and_curves_for_every_fig4_claim(tmp_path):
    recs = _runs(0.0)
    render_fig4(recs, tmp_path, "extended")
    back = T.table_records(tmp_path / "fedmm_fig4.csv")
    assert len(back) == 9 and {r.config["scale"] for r in back} == {"extended"}
    for r in back:  # curves to the last bit; final_acc as summary_metrics defines it
        orig = next(o for o in recs if (o.config["algorithm"], o.config["local_steps"],
                                        o.config["seed"]) == (r.config["algorithm"],
                                                              r.config["local_steps"],
                                                              r.config["seed"]))
        assert r.curves["acc"] == orig.curves["acc"]
        assert r.curves["round"] == orig.curves["round"]
        assert r.metrics["final_acc"] == orig.metrics["final_acc"]
    for check in (C.claim_fig4_sgda_rounds, C.claim_fig4_saving, C.claim_fig4_m25):
        assert check(back) == check(recs)
    exps = {n: e for n, e in load_all().items() if n == "fedmm.fig4"}
    rows = check_claims(exps, {"fedmm.fig4": ("reduced", [])}, figures_dir=tmp_path)
    assert len(rows) == 3 and {r["scale"] for r in rows} == {"extended"}
    assert all(r["verdict"] != "not_run" for r in rows)
    # an older table without the scale column keeps the scale the comparison resolved
    old = (tmp_path / "fedmm_fig4.csv").read_text().splitlines()
    cols = old[0].split(",")
    i = cols.index("scale")
    (tmp_path / "fedmm_fig4.csv").write_text("\n".join(
        ",".join(c for k, c in enumerate(line.split(",")) if k != i) for line in old) + "\n")
    rows = check_claims(exps, {"fedmm.fig4": ("reduced", [])}, figures_dir=tmp_path)
    assert {r["scale"] for r in rows} == {"reduced"}
