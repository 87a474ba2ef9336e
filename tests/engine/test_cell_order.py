"""The sweep hands its cells to the workers longest first, by the committed ledger's times."""

from __future__ import annotations

from types import SimpleNamespace as NS

from repro.engine.run.cell_order import ledger_costs, longest_first


def _ledger(folder, experiment, rows):
    (folder / "cells").mkdir(parents=True, exist_ok=True)
    lines = ["experiment,scale,key,seed,code,commit,wall_s,config,metrics,curves_sha256"]
    lines += [f"{experiment},paper,{k},0,c,c,{w},{{}},{{}},x" for k, w in rows]
    (folder / "cells" / f"{experiment}.csv").write_text("\n".join(lines) + "\n")


def test_cells_run_longest_first_with_unknown_cells_at_their_experiments_median(tmp_path):
    _ledger(tmp_path, "a.t", [("k1", 5.0), ("k2", 60.0), ("k3", 1.0)])
    _ledger(tmp_path, "b.t", [("j1", 20.0), ("j2", "not a number")])
    costs = ledger_costs(tmp_path)
    assert costs == {"a.t": {"k1": 5.0, "k2": 60.0, "k3": 1.0}, "b.t": {"j1": 20.0}}
    a, b, new = NS(name="a.t"), NS(name="b.t"), NS(name="c.new")
    todo = [(a, NS(key="k1")), (a, NS(key="k2")), (a, NS(key="k3")), (a, NS(key="k9")),
            (b, NS(key="j1")), (new, NS(key="x")), (new, NS(key="y"))]
    order = [c.key for _, c in longest_first(todo, costs)]
    # a.t's unknown k9 costs its median 5 (after k1: a stable sort), the new experiment's
    # cells the median of every row, 12.5 (before the 5 s cells), in planned order
    assert order == ["k2", "j1", "x", "y", "k1", "k9", "k3"]
    assert longest_first(todo, {}) == todo          # no ledger: the planned order
    assert ledger_costs(tmp_path / "missing") == {}
