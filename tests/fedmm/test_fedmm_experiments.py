"""Experiments at smoke scale through the runner, the comparison, claims and renderers;
checkpoints; the Office-31 path on a generated miniature; MobileNetV2 strict load.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from repro.engine.compare.compare import check_claims, compare, load_reported
from repro.engine.experiment import RunContext
from repro.engine.registry import get, load_all
from repro.engine.run.runner import run_experiment
from repro.fedmm import training
from repro.fedmm.experiments._cells import run_mnist_cell
from repro.fedmm.experiments.table1 import run_office_cell
from repro.fedmm.instances import random_da_problem
from repro.fedmm.mobilenetv2 import MobileNetV2Features, load_pretrained
from repro.fedmm.models import MnistNet


@pytest.mark.parametrize("names", [("fedmm.fig5",), ("fedmm.fig2", "fedmm.fig4")])
def test_smoke_experiments_run_compare_and_render(isolated, names):
    out = isolated / "results"
    exps = load_all()
    recs = {}
    for name in names:
        exp = get(name)
        summary = run_experiment(exp, "smoke", out=out, progress=False)
        assert summary.not_run == 0 and summary.computed == len(exp.configs("smoke"))
        for r in summary.records:
            assert np.all(np.isfinite(r.curves["acc"]))
            assert r.curves["round"] == [1.0, 2.0, 3.0]
            assert 0 <= r.metrics["test_acc_full"] <= 1 and r.metrics["rounds"] == 3
        recs[name] = ("smoke", summary.records)
        paths = exp.render(summary.records, isolated / "figures", "smoke")
        assert {p.suffix for p in paths} >= {".png", ".pdf", ".md"}
    claims = [c for c in check_claims(exps, recs) if c["experiment"] in names]
    assert claims and all(c["verdict"] in ("pass", "fail", "inconclusive") for c in claims)
    assert all("budget: 512+512" in c["measured"] for c in claims)
    # same seed -> bitwise-equal numbers: rerun the first cell outside the runner
    rec = recs[names[0]][1][0]
    ctx = RunContext(rec.experiment, rec.config, rec.seed)
    again = run_mnist_cell(dict(rec.config), ctx)
    assert again.metrics == rec.metrics and dict(ctx.curves) == rec.curves


def test_office_tables_are_not_run_without_the_data(isolated, monkeypatch):
    monkeypatch.delenv("FEDREPRO_OFFICE31", raising=False)
    exp = get("fedmm.table1")
    summary = run_experiment(exp, "smoke", out=isolated / "results", progress=False)
    assert summary.not_run == 54 == len(summary.records)
    assert all("Office-31" in r.reason for r in summary.records)
    rows = [r for r in compare(load_all(), {"fedmm.table1": ("smoke", summary.records)},
                               load_reported()) if r["experiment"] == "fedmm.table1"]
    assert len(rows) == 126
    assert all(r["verdict"] == "not_run" and "data-unavailable" in r["reason"] for r in rows)


def _tiny_problem(net):
    return random_da_problem(net, n=24, batch=4, nu=0.5)


def test_global_model_is_evaluated_and_checkpoint_resume_is_exact(tmp_path, round_log):
    _Ctx = round_log
    net = MnistNet("MDD")
    theta0 = net.init(torch.Generator().manual_seed(0))
    spec = training.RunSpec("FedMM", rounds=4, local_steps=1, eval_every=1, checkpoint_every=2)
    seen = []

    def evaluate(th):
        seen.append(th.clone())
        return float(th[:10].sum())

    ctx = _Ctx()
    state = training.train(_tiny_problem(net), net, "mnist", spec, theta0, evaluate, ctx)
    assert torch.equal(seen[-2], state.theta0) and torch.equal(seen[-1], state.local[0])
    ckpt = tmp_path / "ck.pt"
    calls = {"n": 0}

    def interrupted(th):
        calls["n"] += 1
        if calls["n"] == 5:  # first evaluation of round 3, after the round-2 checkpoint
            raise KeyboardInterrupt
        return float(th[:10].sum())

    ctx2 = _Ctx()
    with pytest.raises(KeyboardInterrupt):
        training.train(_tiny_problem(net), net, "mnist", spec, theta0, interrupted, ctx2, ckpt)
    assert ckpt.is_file()
    ctx3 = _Ctx()
    state3 = training.train(_tiny_problem(net), net, "mnist", spec, theta0,
                            lambda th: float(th[:10].sum()), ctx3, ckpt)
    assert torch.equal(state3.theta0, state.theta0) and torch.equal(state3.duals, state.duals)
    assert ctx3.curves == ctx.curves
    assert not ckpt.exists()


def test_mobilenetv2_loads_the_mirror_weights_strictly():
    model = load_pretrained()
    assert sum(p.numel() for p in model.parameters()) == 2_223_872
    assert len(model.state_dict()) == 312
    assert set(model.state_dict()) == set(MobileNetV2Features().state_dict())
    with torch.no_grad():
        assert model(torch.zeros(1, 3, 64, 64)).shape == (1, 1280)


def _miniature(root, classes=3, per_class=3, size=40):
    rng = np.random.default_rng(0)
    for d in ("amazon", "dslr", "webcam"):
        for c in range(classes):
            folder = root / d / "images" / f"class_{c}"
            folder.mkdir(parents=True)
            for k in range(per_class):
                img = rng.integers(0, 256, (size, size, 3), dtype=np.uint8)
                img[..., c] = 200
                Image.fromarray(img).save(folder / f"frame_{k:04d}.jpg")


@pytest.mark.parametrize("da", ["DANN", "CDAN", "MDD"])
def test_office_path_end_to_end_on_a_generated_miniature(isolated, monkeypatch, da):
    _miniature(isolated / "office31")
    monkeypatch.setenv("FEDREPRO_OFFICE31", str(isolated / "office31"))
    cfg = {"task": "A->W", "algorithm": "FedMM", "da": da, "seed": 0, "rounds": 2,
           "local_steps": 2, "eval_every": 1, "batch": 4, "image_size": 32}
    ctx = RunContext("fedmm.table1", cfg, 3)
    m = run_office_cell(cfg, ctx)
    assert ctx.curves["round"] == [1.0, 2.0]
    assert set(m) == {"best_acc", "final_acc", "r_conv", "argmax_round"}
    assert 0 <= m["best_acc"] <= 1 and m["r_conv"] in (1.0, 2.0)
    cached = list((isolated / "cache" / "fedmm").glob("office31_*_32_*.npy"))
    assert len(cached) == 2 and np.load(cached[0]).shape == (9, 1280)


def test_each_experiment_names_the_methods_its_cells_run_and_hashes_their_code():
    """A fedmm experiment's ``methods`` are exactly the library methods its cells run
    (at every scale), each a module of repro/fedmm/methods/; the cells' code identity holds
    those method modules and the algorithm files behind them, so editing one stales the
    records (training.build finds a method by name, which a static closure cannot follow).
    """
    from repro.engine.run.code_identity import code_files
    from repro.fedmm.methods import METHODS

    load_all()
    files = {
        "fedmm.fig2": {"fedavg_gda"}, "fedmm.fig4": {"fedmm", "fedsgda"},
        "fedmm.fig5": {"fedmm", "fedavg_gda", "fedprox_gda"},
        "fedmm.table1": {"fedmm", "fedavg_gda", "fedsgda"},
    }
    for name, modules in files.items():
        exp = get(name)
        assert set(exp.methods) <= set(METHODS)
        assert len(exp.methods) == len(set(exp.methods)) == len(modules)
        for scale in exp.scales:
            assert {c["algorithm"] for c in exp.cells(scale)} == set(exp.methods), (name, scale)
        assert {METHODS[m].module.rsplit(".", 1)[1] for m in exp.methods} == modules
        closure = {p.as_posix().split("/repro/", 1)[1] for p in code_files(exp)}
        for mod in modules:
            assert {f"fedmm/methods/{mod}.py", f"fedmm/{mod}.py"} <= closure, (name, mod)
