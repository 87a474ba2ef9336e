"""``scripts/gpu_fedmm.py import``: records made on a lent GPU from a bare working tree (the
package not installed, so their keys were made with version "not installed") are checked and
saved under the key this checkout gives the same cell (issue 34).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import tarfile
from pathlib import Path
from unittest import mock

from repro.engine import records
from repro.engine.planning import collect, data_sha256, plan
from repro.engine.registry import get, load_all

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gpu_fedmm.py"


def _script():
    spec = importlib.util.spec_from_file_location("gpu_fedmm_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _device_record(cell, name: str, **change) -> records.RunRecord:
    """What the device machine saved for ``cell``: its key made with version "not installed"."""
    exp = get(name)
    with mock.patch.object(records, "versions", lambda: {"fedrepro": "not installed"}):
        key = records.record_key(name, cell.config, data_sha256(exp), cell.code)
    rec = records.RunRecord(experiment=name, config=cell.config, key=key, seed=cell.seed,
                            code=cell.code, data=data_sha256(exp), commit="015ec8f",
                            versions={"fedrepro": "not installed", "torch": "2.11.0"},
                            metrics={"test_acc_full": 0.75}, curves={"round": [10.0],
                                                                     "acc": [0.75]},
                            timings={"wall_s": 215.0})
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


def test_import_rekeys_device_records_and_refuses_other_code(tmp_path, capsys):
    load_all()
    exp = get("fedmm.fig4")
    cells = plan(exp, "extended")
    good = _device_record(cells[0], exp.name)
    assert good.key != cells[0].key  # the device's key is not this checkout's: not found
    out = tmp_path / "results"
    assert collect(exp, "extended", out) == []
    archive = _pack([good], tmp_path / "records.tgz")
    gpu = _script()
    assert gpu.main(["import", str(archive), "--results", str(out)]) == 0
    got = collect(exp, "extended", out)
    assert len(got) == 1 and got[0].key == cells[0].key and got[0].stale_note == ""
    assert got[0].metrics == good.metrics and got[0].curves == good.curves
    assert got[0].versions == good.versions  # content unchanged, the old key kept
    assert got[0].timings["rekeyed_from"].startswith(f"{good.key} (made with fedrepro ")
    assert "imported 1 of 1 records" in capsys.readouterr().out
    # a record of other code, or one whose key its cell does not give, is refused (exit 1)
    other = _device_record(cells[1], exp.name, code="0" * 64)
    forged = _device_record(cells[2], exp.name, key="f" * 24)
    bad = _pack([other, forged], tmp_path / "bad.tgz")
    assert gpu.main(["import", str(bad), "--results", str(tmp_path / "r2")]) == 1
    err = capsys.readouterr().err
    assert "code identity differs" in err and "its key is not the one" in err
    assert collect(exp, "extended", tmp_path / "r2") == []
