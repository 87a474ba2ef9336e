"""Figure 1's and Figure 2's runs are Table 1's and Table 2's: same config, data,
code and ``shared_cells`` group, so a sweep computes each once (runner.run_experiments).
"""

from __future__ import annotations

import json

import pytest

from repro.engine import registry
from repro.engine.run.code_identity import code_hash
from repro.engine.run.planning import plan_readings


def _configs(name: str, scale: str) -> set[str]:
    exp = registry.get(name)
    return {json.dumps(c.config, sort_keys=True) for c in plan_readings(exp, scale, "all")}


@pytest.mark.parametrize(("fig", "table", "n_shared"), [
    ("constrfl.fig1", "constrfl.table1", {"smoke": 2, "paper": 3}),
    ("constrfl.fig2", "constrfl.table2", {"smoke": 1, "paper": 3})])
@pytest.mark.parametrize("scale", ["smoke", "paper"])
def test_figure_cells_are_table_cells_of_one_shared_group(fig, table, n_shared, scale):
    registry.load_all()
    f, t = registry.get(fig), registry.get(table)
    assert f.shared_cells and f.shared_cells == t.shared_cells
    assert f.data == t.data and f.run_cell is t.run_cell
    assert code_hash(f) == code_hash(t)
    figs = _configs(fig, scale)
    assert len(figs) == n_shared[scale] and figs <= _configs(table, scale)
    # the other groups are apart: no NP run is shared with a fairness run
    assert registry.get("constrfl.table1").shared_cells != registry.get(
        "constrfl.table2").shared_cells
