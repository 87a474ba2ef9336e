"""``SCALE=auto`` on a machine that would run fedmm's reduced figure cells on its CPU:
they are recorded ``not_run`` with the reason and the remedy, in seconds, never computed;
``$FEDREPRO_FEDMM_CPU=1``, ``$FEDREPRO_FEDMM_DEVICE=cuda`` or an explicit ``--scale reduced``
plans them to run as before, ``smoke`` is untouched, and ``repro list`` says it. No test here
computes a cell: the runner's ``compute_cell`` is replaced by one that counts its calls.
"""

from __future__ import annotations

import dataclasses
import time

import pytest
import torch

from repro.engine.commands.listing import list_experiments
from repro.engine.commands.run_report import report_sweep
from repro.engine.records.records import (
    STATUS_NOT_RUN,
    RunRecord,
    load_record,
    record_path,
    save_record,
)
from repro.engine.registry import get
from repro.engine.report.why import first_sentence, shorten
from repro.engine.run import runner
from repro.engine.run.planning import auto_elsewhere, collect, plan
from repro.fedmm import training
from repro.fedmm.experiments import _where

FIGS = ("fedmm.fig2", "fedmm.fig4", "fedmm.fig5")
FIRST = ("needs an accelerator: a GPU protocol under SCALE=auto, not run on this CPU (no CUDA "
         "GPU; FEDREPRO_FEDMM_CPU=1 runs it)")
REASON = (FIRST + ": the reduced MNIST->MNIST-M "
          "budget, 63 1+1 runs over Figs. 2, 4 and 5, 51 distinct, and 54 2+2/5+5 runs of "
          "Fig. 5, 20-45 CPU-min per 1+1 run on 2 cores")


@pytest.fixture
def cpu_only(isolated, monkeypatch):
    """A machine without CUDA, fedmm's device and CPU switches unset; compute_cell counts
    its calls (and returns a not_run record) instead of computing.
    """
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for env in (training.DEVICE_ENV, training.BACKEND_ENV, _where.CPU_ENV):
        monkeypatch.delenv(env, raising=False)
    calls = []

    def counted(exp, cell, out, keep_going):
        calls.append((exp.name, cell.key))
        return RunRecord(experiment=exp.name, config=cell.config, key=cell.key, seed=cell.seed,
                         status=STATUS_NOT_RUN, reason="stub: would compute",
                         timings={"wall_s": 0.0})

    monkeypatch.setattr(runner, "compute_cell", counted)
    return isolated / "results", calls


def test_auto_records_fig4_not_run_on_a_cpu_without_computing(cpu_only, capsys):
    out, calls = cpu_only
    exp = get("fedmm.fig4")
    t0 = time.perf_counter()
    [s] = runner.run_experiments([exp], "auto", out=out, progress=False)
    took = time.perf_counter() - t0
    assert calls == [] and took < 30                      # nothing computed, seconds
    assert s.scale == "reduced" and len(s.records) == 27 == s.not_run == s.computed
    for rec in s.records:
        assert rec.status == STATUS_NOT_RUN and rec.reason.startswith(REASON)
        for text in ("FEDREPRO_FEDMM_CPU=1 (or pass --scale reduced) to run it on this CPU",
                     "FEDREPRO_FEDMM_DEVICE=cuda", "--scale reduced",
                     "the committed figures (a GPU run, figures/README.md) stay"):
            assert text in rec.reason
        saved = load_record(record_path(out, exp.name, rec.key))  # saved: figures/compare say why
        assert saved.status == STATUS_NOT_RUN and saved.reason == rec.reason
        assert saved.code == rec.code != "" and saved.data and saved.versions
    # the configs (and so the keys and seeds) are the reduced grid's, unchanged
    assert [r.key for r in s.records] == [c.key for c in plan(exp, "reduced")]
    assert report_sweep([s]) == 0
    said = capsys.readouterr().out
    assert "fedmm.fig4 [reduced]: 0 computed, 0 cached, 27 not run" in said
    assert "not run: " + REASON in said
    # a rerun retries them (not_run is not a result) and says the same, again computing nothing
    [again] = runner.run_experiments([exp], "auto", out=out, progress=False)
    assert calls == [] and again.not_run == 27 and again.cached == 0


def test_cpu_switch_device_or_explicit_scale_plan_them_to_run(cpu_only, monkeypatch):
    out, calls = cpu_only
    exp = get("fedmm.fig4")
    runner.run_experiments([exp], "reduced", out=out, progress=False)   # explicit: runs
    assert len(calls) == 27 and {n for n, _ in calls} == {"fedmm.fig4"}
    calls.clear()
    monkeypatch.setenv(_where.CPU_ENV, "1")
    runner.run_experiments([exp], "auto", out=out / "cpu", progress=False)
    assert [k for _, k in calls] == [c.key for c in plan(exp, "reduced")]
    calls.clear()
    monkeypatch.setenv(_where.CPU_ENV, "0")                              # 0: as unset
    runner.run_experiments([exp], "auto", out=out / "zero", progress=False)
    assert calls == []
    monkeypatch.delenv(_where.CPU_ENV)
    runner.run_experiments([exp], "smoke", out=out / "smoke", progress=False)
    assert len(calls) == 9                                     # smoke: run on the CPU, as before
    calls.clear()
    # a machine with a GPU: left alone only while fedmm's device is the CPU, and says why
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "Fake GPU 80GB")
    why = auto_elsewhere(exp, "auto", "reduced")
    assert ("not run on this CPU (its CUDA GPU needs FEDREPRO_FEDMM_DEVICE=cuda; "
            "FEDREPRO_FEDMM_CPU=1 runs it)") in why
    monkeypatch.setenv(training.DEVICE_ENV, "cuda")
    assert auto_elsewhere(exp, "auto", "reduced") == ""
    runner.run_experiments([exp], "auto", out=out / "gpu", progress=False)
    assert len(calls) == 27
    # planned on that GPU: its model is in every key, so no CPU record is taken for them
    gpu_keys = {c.key for c in plan(exp, "reduced")}
    assert [k for _, k in calls] == [c.key for c in plan(exp, "reduced")]
    assert {c.accelerator for c in plan(exp, "reduced")} == {"Fake GPU 80GB"}
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert gpu_keys.isdisjoint(c.key for c in plan(exp, "reduced"))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    # the hook speaks for reduced only, and only under auto
    monkeypatch.delenv(training.DEVICE_ENV)
    for requested, resolved in (("auto", "extended"), ("auto", "smoke"), ("reduced", "reduced")):
        assert auto_elsewhere(exp, requested, resolved) == ""
    assert auto_elsewhere(get("fedmm.table1"), "auto", "reduced") == ""


def test_a_bad_cpu_switch_is_an_error_naming_it(cpu_only, monkeypatch):
    out, calls = cpu_only
    monkeypatch.setenv(_where.CPU_ENV, "yes")
    with pytest.raises(ValueError, match=r"\$FEDREPRO_FEDMM_CPU='yes': set it to 1"):
        runner.run_experiments([get("fedmm.fig2")], "auto", out=out, progress=False)
    assert calls == []


def test_a_stale_result_is_not_hidden_by_the_not_run_record(cpu_only):
    """A record with a result made by other code (e.g. brought from a GPU machine) stays what
    ``collect`` shows, marked stale; no not_run record is written over the cell.
    """
    out, calls = cpu_only
    exp = get("fedmm.fig2")
    cell = plan(exp, "reduced")[4]
    old = RunRecord(experiment=exp.name, config=cell.config, key="stale4", seed=cell.seed,
                    code="0" * 16, data=runner.data_sha256(exp),
                    metrics={"test_acc_full": 0.5}, curves={"round": [10.0], "acc": [0.5]},
                    timings={"finished": "2026-01-01T00:00:00+00:00"})
    save_record(old, out)
    [s] = runner.run_experiments([exp], "auto", out=out, progress=False)
    assert calls == [] and s.not_run == 9
    assert not record_path(out, exp.name, cell.key).exists()
    assert sum(record_path(out, exp.name, c.key).exists() for c in plan(exp, "reduced")) == 8
    shown = collect(exp, "reduced", out)
    assert [r.key for r in shown if r.ok] == ["stale4"] and shown[4].stale_note
    assert sum(r.status == STATUS_NOT_RUN for r in shown) == 8


def test_repro_list_says_auto_leaves_them_to_a_gpu(cpu_only, monkeypatch, capsys):
    out, _ = cpu_only
    list_experiments(out, details=True)
    said = capsys.readouterr().out
    block = said[said.index("fedmm.dann_mu "):said.index("fedmm.table1 ")]
    flat = " ".join(block.split())
    # the cost text (static) and this machine's line (the hook's reason, once for the four:
    # the three figures and the DANN mu diagnostic, listed first)
    assert ("under SCALE=auto on a machine that would run them on its CPU (FEDREPRO_FEDMM_DEVICE "
            "unset) they are not run but recorded not_run in seconds") in flat
    assert flat.count("not run by --scale auto on this machine (reduced; recorded not_run, "
                      "nothing computed): " + REASON.removeprefix("needs an accelerator: ")) == 1
    assert flat.count("not run by --scale auto on this machine: as fedmm.dann_mu") == 3
    monkeypatch.setenv(_where.CPU_ENV, "1")
    list_experiments(out, details=True)
    assert "not run by --scale auto on this machine" not in capsys.readouterr().out


def test_the_hook_is_outside_every_cell_code_identity():
    """Where to run is a policy, not a computation: editing ._where stales no record."""
    from repro.engine.run.code_identity import code_files

    for name in (*FIGS, "fedmm.table1"):
        closure = {p.name for p in code_files(get(name))}
        assert "_cells.py" in closure or "_office.py" in closure
        assert "_where.py" not in closure and "planning.py" not in closure


def test_auto_records_are_the_same_cells_for_every_figure(cpu_only):
    out, calls = cpu_only
    sums = runner.run_experiments([get(n) for n in FIGS], "auto", out=out, progress=False)
    assert calls == [] and [s.not_run for s in sums] == [9, 27, 81]
    assert {r.reason for s in sums for r in s.records} == {sums[0].records[0].reason}
    assert dataclasses.asdict(sums[0].records[0])["status"] == STATUS_NOT_RUN


def test_compare_keeps_the_committed_gpu_table_and_says_why_the_cells_did_not_run(cpu_only,
                                                                                   capsys):
    """After the auto run, `repro figures` renders nothing (the committed table stays) and says
    why; `repro compare` judges Fig. 4's claims on the committed per-seed
    table (made_by: kept, GPU-made), and REPORT.md says why its 27 cells did not run.
    """
    import shutil
    from pathlib import Path

    from repro.engine.commands.compare_run import run_compare
    from repro.engine.commands.figures_run import render_figures

    out, calls = cpu_only
    figures = out.parent / "figures"
    figures.mkdir()
    committed = Path(__file__).resolve().parents[2] / "figures" / "fedmm_fig4.csv"
    shutil.copy(committed, figures / "fedmm_fig4.csv")
    runner.run_experiments([get("fedmm.fig4")], "auto", out=out, progress=False)
    assert render_figures([get("fedmm.fig4")], "auto", out, figures) == 0
    said = shorten(first_sentence(REASON), 160)  # the reason's first sentence, whole words
    assert said.startswith(FIRST) and said.endswith(" …")
    assert capsys.readouterr().out == (f"fedmm.fig4 [reduced]: 27 cells, none with a result "
                                       f"({said}); nothing rendered\n")
    assert sorted(p.name for p in figures.iterdir()) == ["fedmm_fig4.csv"]  # nothing written
    assert run_compare(["fedmm.fig4"], "auto", out, figures) == 0
    assert calls == []
    claims = (figures / "claims.csv").read_text()
    rows = [ln for ln in claims.splitlines() if ln.startswith("fedmm.fig4,")]
    assert len(rows) == 3 and all(
        '"kept: figures/fedmm_fig4.csv, GPU-made per figures/README.md (committed output, no '
        'run records here)"' in ln for ln in rows)
    report = " ".join((figures / "REPORT.md").read_text().split())
    assert ("**fedmm.fig4** (scale: reduced): FedMM (M=20, 25) vs FedSGDA, MNIST->MNIST-M; 0 of "
            f"27 cells recorded, 27 not run ({said})") in report
    assert ("an earlier run, not remade here: figures/fedmm_fig4.csv, GPU-made per "
            "figures/README.md") in report
