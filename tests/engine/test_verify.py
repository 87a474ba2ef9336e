"""``repro verify``: the ledger ``repro figures`` writes beside the tables, and the spot-check
that recomputes committed cells and holds every value to the committed one within a stated
tolerance: bitwise equal on an untouched ledger, equal within tolerance on a ledger perturbed by
a few units of round-off (another machine, simulated), different beyond it, naming the cell.
"""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

from repro.cli import main
from repro.engine.commands.verify import (
    DIFFERENT,
    EQUAL,
    STALE,
    WITHIN_TOLERANCE,
    read_ledger,
    sample_rows,
    verify,
)
from repro.engine.compare.tolerance import U64, tolerance_for
from repro.engine.records.ledger import curve_summary
from repro.engine.registry import load_all
from repro.engine.run import code_identity


@pytest.fixture
def ledger(isolated):
    """The pipeline demo (three cells with a loss curve each) and relfair Fig. 2 (one cell,
    no curve) at smoke scale, a few seconds in all, rendered with a ledger.
    """
    for name in ("core.demo", "relfair.fig2"):
        assert main(["run", name, "--scale", "smoke", "--no-progress"]) == 0
        assert main(["figures", name, "--scale", "smoke"]) == 0
    return isolated / "figures"


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _write(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def _ulps(x: float, n: int) -> float:
    """``x`` moved by ``n`` units in its last place (``n`` round-off units at zero)."""
    if x == 0:
        return n * U64
    for _ in range(n):
        x = float(np.nextafter(x, math.inf))
    return x


def _perturb(figures, name: str, move) -> int:
    """Apply ``move(metric, value)`` to every continuous metric and kept curve value of the
    ledger ``name``; how many values moved.
    """
    path = figures / "cells" / f"{name}.csv"
    rows, moved = _rows(path), 0
    for r in rows:
        metrics = json.loads(r["metrics"])
        for k, v in metrics.items():
            if tolerance_for(name, k).k > 0:
                metrics[k], moved = move(k, v), moved + 1
        curves = json.loads(r["curves"])
        for k, summary in curves.items():
            if tolerance_for(name, k).k > 0 and summary["n"]:
                for part in ("min", "max", "mean"):
                    summary[part], moved = move(k, summary[part]), moved + 1
                summary["at"] = [move(k, v) for v in summary["at"]]
                moved += len(summary["at"])
        r["metrics"], r["curves"] = json.dumps(metrics), json.dumps(curves)
        r["curves_sha256"] = "0" * 64  # another machine's curves differ bitwise
    _write(path, rows)
    return moved


def test_the_ledger_holds_every_cell_with_its_metrics_and_curves(ledger, isolated):
    rows = read_ledger(ledger)
    assert [r.experiment for r in rows] == ["core.demo"] * 3 + ["relfair.fig2"]
    rec = json.loads(next((isolated / "results" / "core.demo").glob("*.json")).read_text())
    row = next(r for r in rows if r.key == rec["key"])
    assert row.seed == rec["seed"]
    assert row.metrics == rec["metrics"]  # the record's own floats, not rounded
    assert row.code == rec["code"] and len(row.curves_sha256) == 64
    assert set(row.curves) == {"train_loss"} == set(rec["curves"])
    assert rows[-1].curves == {}
    for name, values in rec["curves"].items():
        s = row.curves[name]
        assert s == curve_summary(values) and s["n"] == len(values)
        assert s["at"][0] == values[0] and s["at"][-1] == values[-1]
        assert len(s["at"]) == min(len(values), 9) and s["max"] == max(values)


def test_verify_says_bitwise_equal_for_an_untouched_ledger(ledger, capsys):
    assert main(["verify", "--sample", "0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("recomputing 4 of 4 committed cells")
    assert lines[1].startswith("tolerance per value: |Δ| <= k·u·(|x| + s)")
    assert sum(line.startswith(f"{EQUAL} ") for line in lines) == 4
    assert sum(line.strip() == "largest |Δ| 0" for line in lines) == 4
    assert lines[-1] == "4 bitwise equal"


def test_another_machine_a_few_round_off_units_away_is_equal_within_tolerance(ledger, capsys):
    """Simulated: every continuous committed value moved by 4 units in its last place and the
    curves' hash changed, as on a machine that sums in another order.
    """
    moved = _perturb(ledger, "core.demo", lambda k, v: _ulps(v, 4))
    assert moved == 3 * (4 + 3 + 9)  # 4 continuous metrics, a curve's min/max/mean, 9 points
    assert main(["verify", "core.demo"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == f"3 {WITHIN_TOLERANCE}"
    assert out.count("largest |Δ| ") == 3 and out.count(" (bound ") == 3
    for outcome in verify(read_ledger(ledger, "core.demo"), load_all()):
        assert outcome.verdict == WITHIN_TOLERANCE and outcome.differences == []
        largest = outcome.cell.largest
        assert 0 < largest.delta <= largest.bound


def test_a_perturbation_beyond_the_tolerance_is_different(ledger, capsys):
    def beyond(k, v):
        return v + 2 * tolerance_for("core.demo", k).bound(v)

    _perturb(ledger, "core.demo", beyond)
    outcome = verify(read_ledger(ledger, "core.demo"), load_all())[0]
    assert outcome.verdict == DIFFERENT
    assert len(outcome.cell.beyond) == 4 + 3 + 9
    assert all(a.delta > a.bound for a in outcome.cell.beyond)


def test_a_planted_change_makes_verify_exit_1_naming_the_cell(ledger, capsys):
    path = ledger / "cells" / "relfair.fig2.csv"
    rows = _rows(path)
    metrics = json.loads(rows[0]["metrics"])
    name = sorted(metrics)[0]
    true = metrics[name]
    metrics[name] = true + 1e-9 * max(1.0, abs(true))  # far beyond round-off
    rows[0]["metrics"] = json.dumps(metrics)
    _write(path, rows)
    assert main(["verify"]) == 1
    out = capsys.readouterr().out
    assert f"{name}: committed {metrics[name]!r}, recomputed {true!r}, bound " in out
    assert f"not agreeing: relfair.fig2 {rows[0]['key'][:12]} ({DIFFERENT};" in out
    assert "not agreeing: core.demo" not in out


def test_an_old_format_ledger_is_read_and_its_curves_compared_bitwise(ledger, capsys):
    path = ledger / "cells" / "core.demo.csv"
    rows = _rows(path)
    for r in rows:
        del r["curves"]
    _write(path, rows)
    assert read_ledger(ledger, "core.demo")[0].old_format
    assert main(["verify", "core.demo"]) == 0
    assert "3 of these ledger rows are of the old format" in capsys.readouterr().out
    rows[0]["curves_sha256"] = "0" * 64
    _write(path, rows)
    assert main(["verify", "core.demo"]) == 1
    out = capsys.readouterr().out
    assert "curves unchecked" in out and "old format" in out


def test_the_tolerance_handles_zeros_and_counts():
    tol = tolerance_for("constrfl.table4", "alg1_feasibility")
    assert tol.s == 1 and tol.bound(0.0) == tol.k * U64 > 0
    assert tol.bound(1e-5) < 1.01 * tol.bound(0.0)  # a residual near zero: the scale s rules
    assert tol.bound(1e6) > 1e6 * tol.k * U64
    assert tolerance_for("constrfl.table4", "admm_rounds").bound(440.0) == 0.0
    assert tolerance_for("relfair.table1", "acc_all").u == 2.0 ** -24  # float32 training


def test_verify_with_a_typo_suggests_the_name(ledger, capsys):
    assert main(["verify", "relfair.fig"]) == 2
    assert "did you mean relfair.fig2?" in capsys.readouterr().err


def test_verify_flags_a_cell_whose_code_moved_as_stale(ledger, monkeypatch):
    real = code_identity.code_hash
    monkeypatch.setattr(code_identity, "code_hash",
                        lambda exp: "0" * 64 if exp.name == "relfair.fig2" else real(exp))
    import repro.engine.run.planning as planning

    monkeypatch.setattr(planning, "code_hash", code_identity.code_hash)
    outcomes = verify(read_ledger(ledger), load_all())
    assert [o.verdict for o in outcomes] == [EQUAL] * 3 + [STALE]
    assert f"recomputation is {EQUAL}" in outcomes[-1].note


def test_the_sample_is_drawn_among_cheap_cells_and_reproducible(ledger):
    rows = read_ledger(ledger)
    assert sample_rows(rows, 1, seed=3) == sample_rows(rows, 1, seed=3)
    assert sample_rows(rows, 9) == rows
    assert sample_rows(rows, 5, max_seconds=-1.0) == []


def test_cells_made_on_an_accelerator_are_not_drawn_without_one(ledger):
    """The fedmm extended cells (config device "cuda") were made on a lent GPU; on a machine
    without one they cannot be recomputed, so the sample is drawn from the others.
    """
    import dataclasses

    import torch

    from repro.engine.commands.verify import recomputable_here

    rows = read_ledger(ledger)
    gpu = dataclasses.replace(rows[0], config={**rows[0].config, "device": "cuda"})
    assert all(recomputable_here(r) for r in rows)
    assert recomputable_here(gpu) is torch.cuda.is_available()
    if not torch.cuda.is_available():
        assert sample_rows([gpu, *rows], 5) == rows
        assert sample_rows([gpu] * 5 + rows, 1, seed=3)[0] in rows


def test_the_documented_tolerance_table_is_the_declared_one():
    """docs/usage.md#verify-tolerance lists every family's n, T, precision and k as declared."""
    from pathlib import Path

    from repro.engine.compare.tolerance import FAMILIES

    doc = (Path(__file__).resolve().parents[2] / "docs" / "usage.md").read_text()
    section = doc.split('<a id="verify-tolerance"></a>', 1)[1]
    rows = [ln.split(" | ") for ln in section.splitlines() if ln.startswith("| ")][1:]
    declared = [f for f in FAMILIES if f.pattern != "*"]
    assert len(rows) == len(declared) - 1  # relfair.fig1 and fig2 share a row
    for f in declared:
        def names(r):
            return r[0].strip("| ").split(", ")

        row = next(r for r in rows if f.pattern in names(r)
                   or names(r) == [f"other {f.pattern.removesuffix('.*')}"])
        n, steps, precision, k = row[2], row[3], row[4], row[5].rstrip(" |")
        assert float(n) == f.n and float(steps) == f.steps and precision == f.precision
        assert float(k) == pytest.approx(f.tolerance().k, rel=0.05)
