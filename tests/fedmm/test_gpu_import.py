"""``scripts/gpu_fedmm.py import``: records made on a lent GPU from a bare working tree (the
package not installed, so their keys were made with version "not installed") are checked and
saved under the key this checkout gives the same cell on the accelerator they ran on; records
of other code are kept as what they are, stale, and shown so (never as current) until a rerun
replaces them; the committed archive is shown stale on the rendering path once the code moved.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import tarfile
from pathlib import Path
from unittest import mock

import torch

from repro.engine.records import records
from repro.engine.registry import get, load_all
from repro.engine.run.planning import collect, data_sha256, plan

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gpu_fedmm.py"


def _script():
    spec = importlib.util.spec_from_file_location("gpu_fedmm_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _device_record(cell, name: str, accelerator: str = "", **change) -> records.RunRecord:
    """What the device machine saved for ``cell``: its key made with version "not installed"
    (``accelerator``: the model, as records name it now; "" as the first archive's did).
    """
    exp = get(name)
    code = change.pop("code", cell.code)
    with mock.patch.object(records, "versions", lambda: {"fedrepro": "not installed"}):
        key = records.record_key(name, cell.config, data_sha256(exp), code, accelerator)
    rec = records.RunRecord(experiment=name, config=cell.config, key=key, seed=cell.seed,
                            code=code, data=data_sha256(exp), commit="015ec8f",
                            versions={"fedrepro": "not installed", "torch": "2.11.0"},
                            metrics={"test_acc_full": 0.75}, curves={"round": [10.0],
                                                                     "acc": [0.75]},
                            timings={"wall_s": 215.0}, accelerator=accelerator)
    return dataclasses.replace(rec, **change)


def _pack(recs, path: Path) -> Path:
    folder = path.parent / "packed"
    for r in recs:
        records.save_record(r, folder)
    with tarfile.open(path, "w:gz") as tar:
        for r in recs:
            tar.add(records.record_path(folder, r.experiment, r.key),
                    arcname=f"{r.experiment}/{r.key}.json")
    return path


H100 = "NVIDIA H100 80GB HBM3"


def test_import_rekeys_device_records_with_their_accelerator(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    load_all()
    exp = get("fedmm.fig4")
    cells = plan(exp, "extended")
    good = _device_record(cells[0], exp.name, accelerator=H100)
    out = tmp_path / "results"
    assert collect(exp, "extended", out) == []
    archive = _pack([good], tmp_path / "records.tgz")
    gpu = _script()
    assert gpu.main(["import", str(archive), "--results", str(out)]) == 0
    (got,) = collect(exp, "extended", out)
    assert got.key == records.record_key(exp.name, cells[0].config, data_sha256(exp),
                                         cells[0].code, H100) != good.key
    assert got.stale_note == "" and got.accelerator == H100  # this code's: current here
    assert got.metrics == good.metrics and got.curves == good.curves
    assert got.versions == good.versions  # content unchanged, the old key kept
    assert got.timings["rekeyed_from"].startswith(f"{good.key} (made with fedrepro ")
    assert "imported 1 of 1 records" in capsys.readouterr().out


def test_import_keeps_other_codes_records_as_stale_and_refuses_bad_ones(tmp_path, capsys,
                                                                        monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    load_all()
    exp = get("fedmm.fig4")
    cells = plan(exp, "extended")
    other = _device_record(cells[1], exp.name, code="0" * 64)  # no accelerator named
    forged = _device_record(cells[2], exp.name, accelerator=H100, key="f" * 24)
    gpu = _script()
    bad = _pack([other, forged], tmp_path / "bad.tgz")
    assert gpu.main(["import", str(bad), "--results", str(tmp_path / "r2")]) == 1
    err = capsys.readouterr().err
    assert "names no accelerator model (pass --accelerator NAME)" in err
    assert "its key is not the one" in err
    assert collect(exp, "extended", tmp_path / "r2") == []
    # the archive's model given (--accelerator, or <archive>.json beside it): kept, stale
    (tmp_path / "bad.json").write_text(json.dumps({"accelerator": H100}))
    assert gpu.main(["import", str(bad), "--results", str(tmp_path / "r3")]) == 1
    assert "1 of them were made by other code (stale (code 000000000000))" in \
        capsys.readouterr().out
    (got,) = collect(exp, "extended", tmp_path / "r3")
    assert got.accelerator == H100 and got.stale_note == "stale (code 000000000000)"


ARCHIVE = SCRIPT.parents[1] / "gpu-records" / "fedmm-extended-015ec8f-h100.tgz"


def test_the_committed_gpu_records_show_as_stale_in_report_and_claims(tmp_path, capsys,
                                                                      monkeypatch):
    """The rendering path: the committed H100 archive imported; records of other code than
    this checkout's are named stale in REPORT.md's made-by column and claims.md's measured
    text, never as this code's; their numbers are what they were (the saving claim, e.g.).
    """
    from repro.engine.commands.compare_run import run_compare
    from repro.engine.run import planning
    from repro.engine.run.code_identity import stale_note

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    load_all()
    results, out = tmp_path / "results", tmp_path / "figures"
    assert _script().main(["import", str(ARCHIVE), "--results", str(results)]) == 0
    recs = records.scan_records(results, "fedmm.fig4")
    assert len(recs) == 18 and {r.accelerator for r in recs} == {H100}
    made = {r.code for r in recs}
    assert len(made) == 1
    (code,) = made
    # plan the cells under a code identity the archive cannot carry, so its records are stale
    # here even after a GPU rerun at this checkout's code replaces the archive
    monkeypatch.setattr(planning, "code_hash", lambda exp: "1" * 64)
    assert code != "1" * 64
    note = stale_note(code)
    capsys.readouterr()
    assert run_compare(["fedmm.fig4", "fedmm.fig5"], "auto", results, out) == 0
    report = (out / "REPORT.md").read_text().splitlines()
    fig4 = next(line for line in report if line.startswith("| fedmm (004) | Fig. 4 |"))
    assert fig4.endswith(f"| older code ({note}), records of 015ec8f |")
    assert "this code" not in fig4 and "from 18 of 27 cells" in fig4
    fig5 = next(line for line in report if line.startswith("| fedmm (004) | Fig. 5 |"))
    assert fig5.endswith(f"| older code ({note}), records of 015ec8f |")
    rows = [line for line in (out / "claims.md").read_text().splitlines()
            if line.startswith("| fedmm.fig4 |")]
    assert len(rows) == 3
    assert all(f"| NOT CURRENT: judged on records of older code ({note}; a rerun of these "
               "cells replaces them): on 18 of 27 cells" in r for r in rows)
    assert "saving 86.2% at X=49.3%" in rows[0]


def test_the_sweep_plan_puts_the_frozen_runs_first_and_covers_every_cell_once(monkeypatch):
    """The GPU sweep's order: the three runs that froze, the rest of Fig. 4 (seeds 0-1, then
    2), Fig. 5's 1+1 runs, the mu diagnostic, Fig. 2, Fig. 5's split settings; together every
    cell of the four experiments once, under the keys the experiments give them.
    """
    from repro.engine.records.records import canonical_json

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    load_all()
    stages = _script().stages("extended")
    assert [what for what, _ in stages] == [
        "Fig. 4, the 3 runs that froze", "Fig. 4, seeds 0-1", "Fig. 4, seed 2", "Fig. 5, 1+1",
        "DANN mu diagnostic", "Fig. 2", "Fig. 5, 2+2 and 5+5"]
    first = [(c.config["da"], c.config["local_steps"], c.config["seed"])
             for c in plan(stages[0][1], "extended")]
    assert first == [("MDD", 20, 0), ("MDD", 25, 0), ("DANN", 20, 2)]
    assert {c.config["seed"] for c in plan(stages[1][1], "extended")} == {0, 1}
    assert {c.config["seed"] for c in plan(stages[2][1], "extended")} == {2}
    assert {c.config["preset"] for c in plan(stages[4][1], "extended")} == {"paper", "code"}
    for name in ("fedmm.fig4", "fedmm.fig5", "fedmm.dann_mu", "fedmm.fig2"):
        staged = [c.key for _, e in stages if e.name == name for c in plan(e, "extended")]
        assert sorted(staged) == sorted(c.key for c in plan(get(name), "extended"))
    assert len({canonical_json(c.config) for _, e in stages for c in plan(e, "extended")}) == \
        27 + 81 + 6 + 9 - 9 - 3 - 3  # shared: Fig. 5's FedMM 1+1 runs and the diagnostic's
    # mu = 1 runs are Fig. 4's, Fig. 2's p = 1 runs Fig. 5's CDAN FedAvgGDA 1+1 ones
