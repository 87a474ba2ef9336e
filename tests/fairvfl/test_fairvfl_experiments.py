"""Registered experiments: cells run, records map onto the reported rows, claims evaluate."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from repro.core.metrics import harmonic_mean
from repro.engine.compare.compare import load_reported
from repro.engine.experiment import RunContext
from repro.engine.records.records import RunRecord
from repro.engine.registry import load_all
from repro.fairvfl.experiments import claims as C
from repro.fairvfl.experiments._cells import (
    conf_fig1_cells,
    conf_fig2_cells,
    conf_table1_cells,
    journal_lm_cells,
    journal_mlp_cells,
)
from repro.fairvfl.experiments._run import run_cell
from repro.fairvfl.experiments.reproduce import reproduce_conf_table1, reproduce_journal

NAMES = ("fairvfl.conf_table1", "fairvfl.conf_fig1", "fairvfl.conf_fig2",
         "fairvfl.journal_table1", "fairvfl.journal_fig1", "fairvfl.journal_table2",
         "fairvfl.journal_fig2")


def _records(configs, name="fairvfl.test"):
    out = []
    for i, cfg in enumerate(configs):
        ctx = RunContext(name, cfg, 1234 + i)
        res = run_cell(cfg, ctx)
        out.append(RunRecord(name, cfg, f"k{i}", 1234 + i, metrics=dict(res.metrics),
                             curves={k: list(v) for k, v in ctx.curves.items()}))
    return out


def _short(cells, T):
    return [{**c, "T": T} for c in cells]


def test_all_experiments_registered_with_both_scales():
    exps = load_all()
    for name in NAMES:
        assert name in exps and {"smoke", "paper"} <= set(exps[name].scales)
    assert exps["fairvfl.journal_table1"].resolve_scale("auto") == "paper"
    paper = journal_lm_cells("paper")
    assert all(c["T"] == 10_000 and "subsample" not in c for c in paper)
    assert len(conf_table1_cells("paper")) == 30 and len(conf_table1_cells("smoke")) == 12
    assert len(conf_fig1_cells("paper")) == 3 * 8 * 5
    assert len(conf_fig2_cells("paper")) == 27
    assert len(journal_lm_cells("paper")) == 90 and len(journal_mlp_cells("paper")) == 90


def test_conf_cells_reproduce_every_reported_key():
    cells = [c for c in conf_table1_cells("smoke") if c["dataset"] == "crime" and c["seed"] == 0]
    recs = _records(_short(cells, 30))
    for r in recs:
        m = r.metrics
        assert abs(m["hm"] - harmonic_mean(m["acc"], m["fr"])) <= 1e-15
        assert abs(m["fr"] - (1 - m["deo"])) <= 1e-15
        assert len(r.curves["loss"]) == 4  # rounds 0, 10, 20, 30
    fed = next(r for r in recs if r.config["method"] == "FedBCD")
    assert {"eo_acc", "ceo_acc", "eo_opp_acc", "ceo_w_acc", "eo_pub_acc"} <= set(fed.metrics)
    reported = {(row.stem, tuple(sorted((k, v) for k, v in row.key)), row.metric)
                for row in load_reported()}
    reps = reproduce_conf_table1(recs)
    assert len(reps) == 4 * 3  # 4 methods x {AC, FR, HM} on C&C
    for rep in reps:
        assert (rep.table, tuple(sorted(rep.key.items())), rep.metric) in reported
        # no docs link and no tolerance: a row's cause comes from the comparison's readings
        assert "docs/deviations.md" not in rep.note and rep.tolerance is None
        assert rep.n_paper == 5


def test_journal_cells_and_inactive_claims_on_real_data():
    cells = [c for c in journal_lm_cells("smoke") if c["dataset"] == "compas"
             and c["seed"] == 0]
    recs = _records(_short(cells, 60))
    reported = {(row.stem, tuple(sorted((k, v) for k, v in row.key)), row.metric)
                for row in load_reported()}
    reps = reproduce_journal(recs, "fairvfl_journal_table1", "LM")
    assert len(reps) == 6 * 3
    for rep in reps:
        assert (rep.table, tuple(sorted(rep.key.items())), rep.metric) in reported
    ok, text = C.j1b_inactive_identical(recs)
    assert ok, text
    ok, text = C.j1d_deo_curve(recs)
    assert ok, text
    ok, text = C.j1a_value_monotone(recs)
    assert ok, text


def test_mlp_cell_runs_and_is_deterministic():
    cells = [c for c in journal_mlp_cells("smoke") if c["dataset"] == "crime"
             and c["seed"] == 0 and c["method"] == "FedBCD"]
    a = _records(_short(cells, 5))[0]
    b = _records(_short(cells, 5))[0]
    assert a.metrics == b.metrics and a.curves == b.curves
    assert a.curves["loss"][-1] < a.curves["loss"][0]


def test_rounds_to_target_and_c2b_on_constructed_curves():
    t = np.arange(6.0)
    assert C.rounds_to_target(np.array([1.0, .8, .5, .4, .3, .3]), t, 0.45) == 3.0
    assert C.rounds_to_target(np.array([1.0, .9]), t[:2], 0.1) == float("inf")

    def rec(Q, losses):
        cfg = {"dataset": "compas", "method": "FairVFL", "eps": 0.1, "Q": Q, "seed": 0,
               "smoke": False}
        return RunRecord("x", cfg, f"q{Q}", 0, curves={"loss": losses, "t": list(range(5))})

    good = [rec(1, [0.7, 0.65, 0.62, 0.61, 0.6]), rec(4, [0.7, 0.61, 0.6, 0.6, 0.6]),
            rec(7, [0.7, 0.6, 0.6, 0.6, 0.6])]
    ok, text = C.c2b_rounds_vs_q(good)
    assert ok and "R(1,4,7) = 4/2/1" in text, text
    bad = [rec(1, [0.7, 0.6, 0.6, 0.6, 0.6]), rec(4, [0.7, 0.65, 0.61, 0.6, 0.6]),
           rec(7, [0.7, 0.69, 0.68, 0.6, 0.6])]
    assert not C.c2b_rounds_vs_q(bad)[0]


def test_every_deviation_anchor_of_fairvfl_exists():
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    heads = re.findall(r"^#+ (.+)$", (root / "docs" / "deviations.md").read_text(), flags=re.M)
    anchors = {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in heads}
    text = "".join(f.read_text() for f in sorted(
        (root / "repro" / "fairvfl" / "experiments").glob("*.py")))
    text += (root / "theory" / "fairvfl" / "security.py").read_text()
    linked = set(re.findall(r'fairvfl-[\w-]+', " ".join(
        re.findall(r'(?:DEV \+ |deviations\.md#)"?([\w-]+)', text))))
    linked |= set(re.findall(r'DEV \+ "([\w-]+)"', text))
    assert linked, "no anchors found"
    for name in ("conf_table1", "journal_table1", "journal_table2"):
        linked.add(f"fairvfl-{name}")  # compare's "not produced by" reason
    missing = sorted(a for a in linked if a not in anchors)
    assert not missing, missing


def test_claims_on_incomplete_records_fail_with_a_reason():
    cfg = {"dataset": "compas", "method": "FedBCD", "eps": None, "Q": 1, "seed": 0,
           "smoke": False}
    rec = RunRecord("x", cfg, "k", 0, metrics={"train_loss": 0.6},
                    curves={"loss": [0.7, 0.6], "D": [0.0, 0.1]})
    ok, text = C.j1b_inactive_identical([rec])
    assert ok is False and text.startswith("not evaluable")


def test_every_experiment_names_the_methods_its_cells_run():
    """``Experiment.methods`` is each table's own list, the methods of its cells at
    every scale, each a library method (repro.fairvfl.methods).
    """
    from repro.fairvfl.methods import METHODS

    exps = load_all()
    for name in NAMES:
        exp = exps[name]
        assert exp.methods and set(exp.methods) <= set(METHODS), name
        for scale in exp.scales:
            assert {c["method"] for c in exp.cells(scale)} == set(exp.methods), (name, scale)
    assert exps["fairvfl.conf_fig2"].methods == ("FairVFL",)


def test_a_new_method_file_changes_no_experiment(tmp_path, monkeypatch):
    """A method module dropped into repro.fairvfl.methods is listed and runnable, and no
    experiment's methods or cells change (a table runs the methods it names).
    """
    import importlib
    import sys

    from repro.core.methods import discover
    from repro.fairvfl import methods as pkg

    exps = load_all()
    before = {n: (exps[n].methods, exps[n].cells("smoke")) for n in NAMES}
    (tmp_path / "throwaway.py").write_text(
        "from repro.core.methods import Method\n"
        "from repro.fairvfl.fair_vfl import FairVFL, FairVFLConfig\n"
        "def _configure(problem, **options):\n"
        "    return FairVFLConfig(fair=True, **{'eps': 0.5, **options})\n"
        "METHOD = Method('Throwaway', FairVFL, _configure, 'Fair VFL at eps = 0.5 (a test)')\n")
    monkeypatch.setattr(pkg, "__path__", [*pkg.__path__, str(tmp_path)])
    importlib.invalidate_caches()
    try:
        found = discover(pkg.__name__, pkg.__path__)
        assert {"FairVFL", "FedBCD", "Throwaway"} <= set(found)   # among, never the exact set
        alg = found["Throwaway"].build(pkg.tiny_problem(1), rng=0)
        assert alg.config.eps == 0.5 and alg.run(3).t == 3
    finally:
        sys.modules.pop(f"{pkg.__name__}.throwaway", None)
    assert {n: (exps[n].methods, exps[n].cells("smoke")) for n in NAMES} == before
    assert "Throwaway" not in pkg.METHODS


def test_the_methods_an_experiment_names_are_in_its_code_identity():
    """Editing a method module (or its algorithm file) an experiment runs stales its records:
    both are in the cells' import closure (repro.engine.run.code_identity), although
    repro.fairvfl.methods finds its modules dynamically.
    """
    import inspect
    import sys

    from repro.engine.run.code_identity import code_files
    from repro.fairvfl.methods import METHODS

    exps = load_all()
    for name in NAMES:
        files = set(code_files(exps[name]))
        for method in exps[name].methods:
            m = METHODS[method]
            assert Path(sys.modules[m.module].__file__).resolve() in files, (name, method)
            assert Path(inspect.getfile(m.algorithm)).resolve() in files, (name, method)


def test_shared_runs_are_computed_once_and_do_not_depend_on_the_experiment(isolated):
    """``shared_cells``: [C] Table I's cells are [C] Fig. 1's, [J] Fig. 1's and Fig. 2's are
    [J] Table 1's and Table 2's (at both scales, 66 of the 513 paper cells); a cell run as either
    experiment's (separate sweeps, no sharing) gives the same metrics and curves, and a sweep of
    both computes it once.
    """
    from dataclasses import replace

    from repro.engine.registry import get
    from repro.engine.run.runner import run_experiments

    load_all()
    for small, big in (("conf_table1", "conf_fig1"), ("journal_fig1", "journal_table1"),
                       ("journal_fig2", "journal_table2")):
        a, b = get(f"fairvfl.{small}"), get(f"fairvfl.{big}")
        assert a.shared_cells == b.shared_cells != ""
        for scale in ("smoke", "paper"):
            assert all(c in b.configs(scale) for c in a.configs(scale))
    assert get("fairvfl.conf_fig2").shared_cells == ""  # its Q = 1 cells log every round
    f1, t1 = get("fairvfl.journal_fig1"), get("fairvfl.journal_table1")
    cell = next(c for c in f1.configs("smoke") if c["dataset"] == "crime"
                and c["method"] == "FairVFL")
    cell = {**cell, "T": 4}
    recs = []
    for exp in (t1, f1):
        alone = replace(exp, cells=lambda s, cell=cell: [cell], shared_cells="", readings=())
        recs.append(run_experiments([alone], "smoke", out=isolated / exp.name,
                                    progress=False)[0].records[0])
    assert recs[0].seed != recs[1].seed  # different cell seeds...
    assert recs[0].metrics == recs[1].metrics and recs[0].curves == recs[1].curves  # same run
    both = [replace(exp, cells=lambda s, cell=cell: [cell], readings=()) for exp in (t1, f1)]
    out = run_experiments(both, "smoke", out=isolated / "both", progress=False)
    assert [s.computed for s in out] == [1, 1]
    copy = out[1].records[0]
    assert copy.timings["shared_from"] == f"fairvfl.journal_table1/{out[0].records[0].key}"
    assert copy.metrics == recs[1].metrics and copy.curves == recs[1].curves
