"""The accelerator model in every record's identity: a CPU record's key and file are as before,
a GPU record's key names its model, so records of two models never share a key; a machine
without the GPU shows this code's GPU records of one model as current, any other (other code,
another model) marked, never as current; a ``not_run`` record hides no result.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch

from repro.engine.records import records
from repro.engine.registry import get, load_all
from repro.engine.run.planning import collect, data_sha256, plan
from repro.engine.run.runner import run_experiment
from repro.fedmm import training


def test_the_key_names_the_accelerator_and_a_cpu_record_is_as_before():
    ident = ("fedmm.fig4", {"a": 1}, {"d": "0" * 64}, "c" * 64)
    assert records.record_key(*ident) == records.record_key(*ident, "")
    keys = {records.record_key(*ident, m) for m in ("", "NVIDIA H100 80GB HBM3", "NVIDIA H200")}
    assert len(keys) == 3
    cpu = records.RunRecord("x.y", {"a": 1}, "k", 0)
    assert "accelerator" not in json.loads(cpu.to_json())  # a CPU record's file: unchanged
    gpu = dataclasses.replace(cpu, accelerator="NVIDIA H200")
    assert json.loads(gpu.to_json())["accelerator"] == "NVIDIA H200"
    assert records.RunRecord.from_json(gpu.to_json()) == gpu
    assert records.RunRecord.from_json(cpu.to_json()).accelerator == ""


@pytest.fixture
def cpu_machine(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for env in (training.DEVICE_ENV, training.BACKEND_ENV):
        monkeypatch.delenv(env, raising=False)
    load_all()
    return get("fedmm.fig4")


def _made_on(cell, exp, model: str, code: str | None = None, acc: float = 0.5):
    """A result of ``cell`` made on ``model`` (by this code unless ``code``), at its key."""
    code = cell.code if code is None else code
    key = records.record_key(exp.name, cell.config, data_sha256(exp), code, model)
    return records.RunRecord(exp.name, cell.config, key, cell.seed, code=code,
                             data=data_sha256(exp), accelerator=model,
                             metrics={"test_acc_full": acc},
                             curves={"round": [10.0], "acc": [acc]},
                             timings={"finished": "2026-12-01T00:00:00+00:00"})


def test_a_gpu_plans_its_model_into_the_keys(cpu_machine, monkeypatch):
    exp = cpu_machine
    cpu = plan(exp, "extended")
    assert {c.accelerator for c in cpu} == {""}
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA H200")
    gpu = plan(exp, "extended")
    assert {c.accelerator for c in gpu} == {"NVIDIA H200"}
    assert [c.config for c in gpu] == [c.config for c in cpu]
    assert {c.key for c in gpu}.isdisjoint(c.key for c in cpu)
    assert [c.seed for c in gpu] == [c.seed for c in cpu]  # seeds from the config only


def test_a_cpu_machine_shows_one_models_records_of_this_code_as_current(cpu_machine, tmp_path,
                                                                       monkeypatch):
    exp, out = cpu_machine, tmp_path / "results"
    cells = plan(exp, "extended")
    h100, h200 = "NVIDIA H100 80GB HBM3", "NVIDIA H200"
    mine = [_made_on(c, exp, h100) for c in cells[:3]]
    other = [_made_on(c, exp, h200, acc=0.9) for c in cells[2:4]]
    old = _made_on(cells[4], exp, h100, code="0" * 64)
    for r in [*mine, *other, old]:
        records.save_record(r, out)
    # the runner on this CPU: this code's records of the grid's model are cached; the other
    # cells are not_run here (a GPU protocol), two of them shown by marked records
    s = run_experiment(exp, "extended", out=out, progress=False)
    assert (s.cached, s.computed, s.not_run, s.stale) == (3, 24, 24, 2)
    got = collect(exp, "extended", out)  # in grid order, one per cell
    assert [r.config for r in got] == [c.config for c in cells]
    shown = got[:5]
    assert [r.accelerator for r in shown] == [h100, h100, h100, h200, h100]
    assert [r.stale_note for r in shown[:3]] == ["", "", ""]  # H100 made most: current
    assert shown[3].stale_note == f"stale (made on {h200}, not on {h100} as the rest of the grid)"
    assert shown[4].stale_note == "stale (code 000000000000)"
    # the not_run records this CPU saved at the planned keys hide none of them
    assert records.load_record(records.record_path(out, exp.name, cells[3].key)).status == \
        records.STATUS_NOT_RUN
    assert sum(r.ok for r in got) == 5
    # on an H200 machine its own records are current, every H100 record is marked
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: h200)
    there = [r for r in collect(exp, "extended", out) if r.ok]
    assert sorted((r.accelerator, r.stale_note) for r in there) == sorted([
        (h100, f"stale (made on {h100}, not on {h200} as here)"),
        (h100, f"stale (made on {h100}, not on {h200} as here)"),
        (h100, "stale (code 000000000000)"), (h200, ""), (h200, "")])
