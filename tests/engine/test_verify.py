"""``repro verify`` (issue #33, item 4): the ledger ``repro figures`` writes beside the tables,
and the spot-check that recomputes committed cells: equal on an untouched ledger, ``different``
with both numbers on a tampered value, ``stale code`` when the cell's code moved.
"""

from __future__ import annotations

import csv
import json

import pytest

from repro.cli import main
from repro.engine import code_identity
from repro.engine.registry import load_all
from repro.engine.verify import DIFFERENT, EQUAL, STALE, read_ledger, sample_rows, verify


@pytest.fixture
def ledger(isolated):
    """The relfair Figs. 1 and 2 at smoke scale (about a second each), rendered with a ledger."""
    for name in ("relfair.fig1", "relfair.fig2"):
        assert main(["run", name, "--scale", "smoke", "--no-progress"]) == 0
        assert main(["figures", name, "--scale", "smoke"]) == 0
    return isolated / "figures"


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_the_ledger_holds_every_cell_with_its_metrics_at_full_precision(ledger, isolated):
    rows = read_ledger(ledger)
    assert [r.experiment for r in rows] == ["relfair.fig1", "relfair.fig2"]
    rec = json.loads(next((isolated / "results" / "relfair.fig2").glob("*.json")).read_text())
    assert rows[1].key == rec["key"] and rows[1].seed == rec["seed"]
    assert rows[1].metrics == rec["metrics"]  # the record's own floats, not rounded
    assert rows[1].code == rec["code"] and len(rows[1].curves_sha256) == 64


def test_verify_says_equal_for_an_untouched_ledger(ledger, capsys):
    assert main(["verify", "--sample", "0"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("recomputing 2 of 2 committed cells")
    assert sum(line.startswith(f"{EQUAL} ") for line in lines) == 2 and lines[-1] == "2 equal"


def test_verify_fails_on_a_tampered_committed_value(ledger, capsys):
    path = ledger / "cells" / "relfair.fig2.csv"
    rows = _rows(path)
    metrics = json.loads(rows[0]["metrics"])
    name = sorted(metrics)[0]
    true = metrics[name]
    metrics[name] = true + 1e-12 * max(1.0, abs(true))  # a change in the 12th digit
    rows[0]["metrics"] = json.dumps(metrics)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    assert main(["verify", "relfair.fig2"]) == 1
    out = capsys.readouterr().out
    assert DIFFERENT in out and f"{name}: committed {metrics[name]!r}, recomputed {true!r}" in out
    outcome = verify(read_ledger(ledger, "relfair.fig2"), load_all())[0]
    assert outcome.verdict == DIFFERENT and outcome.differences == [(name, metrics[name], true)]


def test_verify_flags_a_cell_whose_code_moved_as_stale(ledger, monkeypatch):
    real = code_identity.code_hash
    monkeypatch.setattr(code_identity, "code_hash",
                        lambda exp: "0" * 64 if exp.name == "relfair.fig1" else real(exp))
    import repro.engine.planning as planning

    monkeypatch.setattr(planning, "code_hash", code_identity.code_hash)
    outcomes = verify(read_ledger(ledger), load_all())
    assert [o.verdict for o in outcomes] == [STALE, EQUAL]
    assert "recomputation is equal" in outcomes[0].note


def test_the_sample_is_drawn_among_cheap_cells_and_reproducible(ledger):
    rows = read_ledger(ledger)
    assert sample_rows(rows, 1, seed=3) == sample_rows(rows, 1, seed=3)
    assert sample_rows(rows, 5) == rows
    assert sample_rows(rows, 5, max_seconds=-1.0) == []


def test_cells_made_on_an_accelerator_are_not_drawn_without_one(ledger):
    """Issue 34: fedmm's extended cells (config device "cuda") were made on a lent GPU; on a
    machine without one they cannot be recomputed, so the sample is drawn from the others.
    """
    import dataclasses

    import torch

    from repro.engine.verify import recomputable_here

    rows = read_ledger(ledger)
    gpu = dataclasses.replace(rows[0], config={**rows[0].config, "device": "cuda"})
    assert recomputable_here(rows[0]) and recomputable_here(rows[1])
    assert recomputable_here(gpu) is torch.cuda.is_available()
    if not torch.cuda.is_available():
        assert sample_rows([gpu, *rows], 3) == rows
        assert sample_rows([gpu] * 5 + rows, 1, seed=3)[0] in rows
