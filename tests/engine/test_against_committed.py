"""``repro compare NAME --against-committed``: per cell and per comparison row, how the current
records agree with the committed results, within the round-off tolerance; nothing is written.
"""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from repro.cli import main
from repro.engine.commands.against import row_agreements, row_bound
from repro.engine.compare.tolerance import BEYOND, BITWISE, WITHIN, tolerance_for


@pytest.fixture
def committed(isolated):
    """The constrfl Table 4 at smoke scale (12 cells, seconds), rendered and compared into the
    figures folder that plays the committed one.
    """
    args = ["--scale", "smoke"]
    assert main(["run", "constrfl.table4", *args, "--no-progress"]) == 0
    assert main(["figures", "constrfl.table4", *args]) == 0
    assert main(["compare", "constrfl.table4", *args]) == 0
    return isolated / "figures"


def _snapshot(folder):
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _edit(path, change):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    change(rows)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return rows


def test_an_untouched_rerun_agrees_cell_by_cell_and_row_by_row(committed, capsys):
    before = _snapshot(committed)
    assert main(["compare", "constrfl.table4", "--scale", "smoke", "--against-committed"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("tolerance per value: |Δ| <= k·u·(|x| + s)")
    assert out[2].startswith("constrfl.table4 [smoke] cells: 12 committed in ")
    assert out[2].endswith(": 12 bitwise equal")
    assert sum(line.startswith(f"  {BITWISE} ") for line in out) == 12 + 45
    assert out[-1] == ("rows: 45 of 45 committed rows agree within tolerance (45 bitwise "
                       "equal); cells: 12 of 12 agree")
    assert _snapshot(committed) == before  # nothing written


def test_round_off_is_within_tolerance_and_a_planted_change_is_named(committed, capsys):
    ledger = committed / "cells" / "constrfl.table4.csv"

    def nudge(rows):  # one cell's objective 4 units in its last place away: another machine
        m = json.loads(rows[0]["metrics"])
        x = m["alg1_objective"]
        for _ in range(4):
            x = float(np.nextafter(x, np.inf))
        m["alg1_objective"] = x
        rows[0]["metrics"] = json.dumps(m)

    key = _edit(ledger, nudge)[0]["key"][:12]
    comparison = committed / "comparison.csv"

    def plant(rows):  # a committed row's mean moved far beyond round-off
        row = next(r for r in rows if r["experiment"] == "constrfl.table4" and r["reproduced"])
        row["reproduced"] = repr(float(row["reproduced"]) * (1 + 1e-6))

    rows = _edit(comparison, plant)
    planted = next(r for r in rows if r["experiment"] == "constrfl.table4" and r["reproduced"])
    assert main(["compare", "constrfl.table4", "--scale", "smoke", "--against-committed"]) == 1
    out = capsys.readouterr().out
    cell = next(line for line in out.splitlines() if f" {key} " in line)
    assert cell.startswith(f"  {WITHIN} ") and "at alg1_objective" in cell
    bad = [line for line in out.splitlines() if line.startswith(f"  {BEYOND} ")]
    assert len(bad) == 1 and planted["key"] in bad[0] and planted["metric"] in bad[0]
    assert "rows: 44 of 45 committed rows agree within tolerance" in out


def test_a_row_is_held_to_the_tolerance_of_a_mean_over_its_seeds():
    row = {"experiment": "constrfl.table4", "metric": "objective", "reproduced": "2.0",
           "reproduced_std": "0.5", "n_seeds": "4", "verdict": "match"}
    bound = row_bound(tolerance_for("constrfl.table4", "objective"), 2.0, 0.5, 4)
    tol = tolerance_for("constrfl.table4", "objective")
    assert bound == pytest.approx(tol.k * tol.u * (2.0 + 2 * 0.5 + 1.0), rel=1e-12)
    near = {**row, "reproduced": repr(2.0 + 0.5 * bound)}
    far = {**row, "reproduced": repr(2.0 + 2 * bound), "verdict": "deviates"}
    assert [a.status for a in row_agreements(row, row)] == [BITWISE] * 3
    assert [a.status for a in row_agreements(row, near)] == [WITHIN, BITWISE, BITWISE]
    assert [a.status for a in row_agreements(row, far)] == [BEYOND, BITWISE, BEYOND]


def test_against_committed_needs_a_name(isolated, capsys):
    assert main(["compare", "--against-committed"]) == 2
    assert "needs the experiments to compare" in capsys.readouterr().err
