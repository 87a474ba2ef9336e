"""Experiments of one ``shared_cells`` group compute a cell they both plan once per sweep and
save its record for each (the runner); without a group, or with another config, nothing is
shared. fedmm's figures form such a group: a run of theirs does not depend on the experiment
that plans it, which is what the declaration asserts, checked here at smoke scale.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from repro.engine.experiment import CellResult, Experiment
from repro.engine.run.runner import run_experiments


def _cell(config: dict, ctx) -> CellResult:
    # the log's path is in the config: loky's reused workers may predate this test's env
    with open(config["log"], "a") as fh:
        fh.write(f"{ctx.experiment} {config['x']}\n")
    return CellResult(metrics={"y": config["x"] ** 2 + 0.5}, curves={"c": [config["x"]]})


LOG: list[str] = []  # the current test's log file, read when a test builds its experiments


def _exp(name: str, xs, group: str) -> Experiment:
    log = LOG[-1]
    return Experiment(name=name, title=name, paper="p", cells=lambda s, xs=xs, log=log: [
        {"x": x, "log": log} for x in xs], run_cell=_cell, shared_cells=group)


@pytest.fixture
def counter(tmp_path):
    path = tmp_path / "count.txt"
    path.write_text("")
    LOG.append(str(path))
    return path


def _runs(path: Path) -> list[str]:
    return path.read_text().splitlines()


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_shared_cell_is_computed_once_and_recorded_for_each(tmp_path, counter, jobs):
    a, b = _exp("t.a", (1, 2, 3), "g"), _exp("t.b", (2, 3, 4), "g")
    out = tmp_path / "results"
    sa, sb = run_experiments([a, b], "smoke", out=out, progress=False, jobs=jobs)
    assert sorted(_runs(counter)) == ["t.a 1", "t.a 2", "t.a 3", "t.b 4"]
    assert (sa.computed, sb.computed, sa.cached, sb.cached) == (3, 3, 0, 0)
    by_x = {r.config["x"]: r for r in sb.records}
    for x in (2, 3):
        twin = next(r for r in sa.records if r.config["x"] == x)
        assert by_x[x].experiment == "t.b" and by_x[x].key != twin.key
        assert by_x[x].metrics == twin.metrics and by_x[x].curves == twin.curves
        assert by_x[x].timings["shared_from"] == f"t.a/{twin.key}"
        assert (out / "t.b" / f"{by_x[x].key}.json").is_file()
    assert "shared_from" not in by_x[4].timings
    # the next sweep finds every record: nothing is computed
    sa2, sb2 = run_experiments([a, b], "smoke", out=out, progress=False)
    assert (sa2.computed, sb2.computed, sa2.cached, sb2.cached) == (0, 0, 3, 3)
    assert len(_runs(counter)) == 4


def test_no_group_or_another_group_shares_nothing(tmp_path, counter):
    run_experiments([_exp("t.a", (1, 2), ""), _exp("t.b", (1, 2), "")], "smoke",
                    out=tmp_path / "r1", progress=False)
    assert len(_runs(counter)) == 4
    counter.write_text("")
    run_experiments([_exp("t.a", (1, 2), "g"), _exp("t.b", (1, 2), "h")], "smoke",
                    out=tmp_path / "r2", progress=False)
    assert len(_runs(counter)) == 4


def test_fedmm_figure_runs_do_not_depend_on_the_experiment(isolated):
    """What fedmm's ``shared_cells`` asserts: Fig. 5's FedMM M = 20 cell, run as Fig. 5's and
    as Fig. 4's (separate sweeps, no sharing), gives the same metrics and curves.
    """
    from dataclasses import replace

    from repro.engine.registry import get, load_all

    load_all()
    f4, f5 = get("fedmm.fig4"), get("fedmm.fig5")
    cell = next(c for c in f5.configs("smoke") if c["da"] == "DANN"
                and c["algorithm"] == "FedMM" and "clients" not in c)
    assert cell in f4.configs("smoke") and f4.shared_cells == f5.shared_cells != ""
    recs = []
    for exp in (f4, f5):
        alone = replace(exp, name=exp.name, cells=lambda s, cell=cell: [cell], shared_cells="")
        recs.append(run_experiments([alone], "smoke", out=isolated / exp.name,
                                    progress=False)[0].records[0])
    assert recs[0].seed != recs[1].seed  # different cell seeds...
    assert recs[0].metrics == recs[1].metrics and recs[0].curves == recs[1].curves  # same run


def test_relfair_training_runs_do_not_depend_on_the_experiment(isolated):
    """What relfair's ``shared_cells`` asserts: a Fig. 4 cell (Table 1's MNIST seed 0), run as
    Table 1's and as Fig. 4's (separate sweeps, no sharing), gives the same metrics and curves;
    and every Fig. 4 cell is a Table 1 cell at both scales, so a sweep of both computes Fig. 4's
    runs once.
    """
    from dataclasses import replace

    from repro.engine.registry import get, load_all

    load_all()
    t1, f4 = get("relfair.table1"), get("relfair.fig4")
    assert t1.shared_cells == f4.shared_cells != ""
    for scale in ("smoke", "paper"):
        assert all(c in t1.configs(scale) for c in f4.configs(scale))
    cell = next(c for c in f4.configs("smoke") if c["method"] == "FedAvg")
    cell = {**cell, "rounds": 2, "eval_every": 1}
    recs = []
    for exp in (t1, f4):
        alone = replace(exp, name=exp.name, cells=lambda s, cell=cell: [cell], shared_cells="",
                        readings=())
        recs.append(run_experiments([alone], "smoke", out=isolated / exp.name,
                                    progress=False)[0].records[0])
    assert recs[0].seed != recs[1].seed  # different cell seeds...
    assert recs[0].metrics == recs[1].metrics and recs[0].curves == recs[1].curves  # same run
