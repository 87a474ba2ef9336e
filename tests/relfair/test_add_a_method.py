"""A method is one file. The FedProx recipe of docs/adding-a-paper.md ("Add a method"), written
as the doc shows it into a temporary folder and found by the package's discovery (the folder
added to ``repro.relfair.methods.__path__``), is

(a) listed: ``repro list`` shows it under relfair as in no table;
(b) runnable: built on the smoke-scale Table 1 problem, a few rounds, finite loss; and it
    follows the protocol (the generic driver's rules, on ``tiny_problem``);
(c) in no table or claim: every relfair experiment's cells (smoke and paper scale, every
    reading), methods and claims are the same as before;
(d) staling no record: every relfair experiment's code identity is unchanged.

The file the user writes is the only one: its own option ``mu`` needs no edit elsewhere.
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import repro.relfair.methods as methods
from repro.core.methods import discover
from repro.engine.registry import library_methods, load_all
from repro.engine.run import code_identity

DOC = Path(__file__).resolve().parents[2] / "docs" / "adding-a-paper.md"
MODULE = "repro.relfair.methods.fedprox"


def recipe() -> str:
    """The ```python block of docs/adding-a-paper.md that defines FedProx's METHOD."""
    blocks = re.findall(r"```python[^\n]*\n(.*?)```", DOC.read_text(), flags=re.S)
    found = [b for b in blocks if 'METHOD = Method("FedProx"' in b]
    assert len(found) == 1, "docs/adding-a-paper.md must hold one FedProx recipe"
    return found[0]


def _relfair_snapshot() -> dict:
    """What a method file must not change: per relfair experiment, its cells at smoke and
    paper scale under every reading, its methods, its claims and its code identity.
    """
    from repro.engine.run.runner import plan

    code_identity.clear_cache()
    out = {}
    for name, exp in load_all().items():
        if not name.startswith("relfair."):
            continue
        cells = {(scale, r.id): [c.config for c in plan(exp, scale, r)]
                 for scale in exp.scales for r in exp.select_readings("all")}
        out[name] = {"cells": cells, "methods": exp.methods,
                     "claims": [(c.text, c.source, c.deviation) for c in exp.claims],
                     "code": code_identity.code_hash(exp),
                     "files": [str(p) for p in code_identity.code_files(exp)]}
    return out


@pytest.fixture
def fedprox(tmp_path, monkeypatch):
    """The recipe saved as ``<tmp>/fedprox.py``, the folder on the package's path and the
    methods discovered again (both undone after the test).
    """
    before = _relfair_snapshot()
    (tmp_path / "fedprox.py").write_text(recipe())
    monkeypatch.setattr(methods, "__path__", [*methods.__path__, str(tmp_path)])
    monkeypatch.setattr(methods, "METHODS", discover(methods.__name__, methods.__path__))
    yield tmp_path / "fedprox.py", before
    sys.modules.pop(MODULE, None)


def test_the_recipe_is_one_file_that_the_library_lists_in_no_table(fedprox, capsys):
    assert "FedProx" in methods.METHODS and methods.METHODS["FedProx"].module == MODULE
    # the paper's six are among the methods (never the exact set: a method file adds one)
    assert {"FedAvg", "Scaffold", "SAFL", "DRFA", "Scaff-PD", "Scaff-PD-IA"} <= set(
        methods.METHODS)
    assert "FedProx" in library_methods()["relfair"]
    from repro.cli import main

    assert main(["list", "--details"]) == 0
    # one entry per method, wrapped at 100 columns (continuations indented by 8)
    out = capsys.readouterr().out.replace("\n        ", " ")
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("FedProx:"))
    assert line.endswith("[in no table (library only)]")
    # the six of Table 1 stay in their tables
    fedavg = next(ln for ln in out.splitlines() if ln.strip().startswith("FedAvg:"))
    assert "relfair.table1" in fedavg and "relfair.fig4" in fedavg


def test_fedprox_runs_on_the_smoke_table1_problem_and_follows_the_protocol(fedprox):
    from repro.relfair.experiments._cells import table1_cells
    from repro.relfair.experiments._training import _options, training_problem

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
    try:
        from test_algorithm_protocol import protocol_violations
    finally:
        sys.path.pop(0)
    method = methods.METHODS["FedProx"]
    assert protocol_violations(method, methods.tiny_problem) == []

    config = next(c for c in table1_cells("smoke") if c["task"] == "MNIST")
    config = {**config, "method": "FedProx", "local_work": "epochs"}
    problem, theta0, rng = training_problem(config)
    # the training cells' options (alpha, phi, ...) and FedProx's own mu, in one call
    alg = methods.build("FedProx", problem, init=theta0, rng=rng, mu=0.1, **_options(config))
    assert alg.config.mu == 0.1
    loss0, _ = alg.engine.evaluate(theta0, "val")
    seen = []
    state = alg.run(3, callback=lambda r, s, m: seen.append((r, type(m.uplink[0]).__name__)))
    loss, acc = alg.engine.evaluate(state.theta, "val")
    assert seen == [(1, "ModelReport"), (2, "ModelReport"), (3, "ModelReport")]
    assert np.isfinite(loss).all() and loss.mean() < loss0.mean()  # it trains
    assert state.round == 4
    # with mu = 0 it is FedAvg, bit for bit (the term adds lr * 0 to every step)
    module = importlib.import_module(MODULE)
    plain = module.FedProx(problem, module.FedProxConfig(local_steps=2, mu=0.0),
                           init=theta0, rng=training_problem(config)[2])
    ref = methods.build("FedAvg", problem, init=theta0, rng=training_problem(config)[2],
                        local_steps=2)
    plain.run(2)
    ref.run(2)
    assert all(torch.equal(p, q) for p, q in zip(plain.state.theta, ref.state.theta,
                                                 strict=True))


def test_no_table_claim_or_record_changes(fedprox):
    _, before = fedprox
    importlib.import_module(MODULE)  # discovered and imported
    after = _relfair_snapshot()
    assert set(before) >= {"relfair.table1", "relfair.fig4", "relfair.ablation_server_step",
                           "relfair.fig1", "relfair.fig2", "relfair.fig3", "relfair.fedavg_search"}
    for name in before:
        assert after[name] == before[name], name
    # not vacuous: the identity holds the method files a table runs, and not the discovery
    # (the package's __init__) through which a new file would enter
    files = before["relfair.table1"]["files"]
    assert any(f.endswith("repro/relfair/methods/fedavg.py") for f in files)
    assert any(f.endswith("repro/relfair/methods/scaff_pd_ia.py") for f in files)
    assert not any(f.endswith("repro/relfair/methods/__init__.py") for f in files)
    assert not any("fedprox" in f for f in files)
    assert "FedProx" not in before["relfair.table1"]["methods"]
    assert all(c["method"] != "FedProx" for cells in before["relfair.table1"]["cells"].values()
               for c in cells)


def test_claims_ignore_a_record_of_a_method_no_table_names(fedprox):
    """Table 1's claims are judged on Table 1's methods: a FedProx record that would beat
    every method (lowest R_AB and Gini, best accuracy) changes no verdict and no number.
    """
    from repro.engine.compare.compare import check_claims
    from repro.engine.records.records import RunRecord
    from repro.relfair.experiments._cells import TABLE1_METHODS

    def rec(method, seed, k):
        metrics = {"acc_all": 0.9 - 0.01 * k, "R_AB": 2.0 + 0.1 * k + 0.01 * seed,
                   "gini": 0.1 + 0.01 * k + 0.001 * seed, "acc_worst20": 0.8,
                   "acc_best20": 0.95}
        return RunRecord("relfair.table1", {"task": "MNIST", "method": method, "seed": seed},
                         f"{method}{seed}", seed, metrics=metrics)

    order = ["Scaff-PD-IA", *[m for m in TABLE1_METHODS if m != "Scaff-PD-IA"]]
    records = [rec(m, s, k) for k, m in enumerate(order) for s in range(3)]
    exp = load_all()["relfair.table1"]

    def verdicts(recs):
        return [(r["claim"], r["verdict"], r["measured"])
                for r in check_claims({exp.name: exp}, {exp.name: ("paper", recs)})]

    clean = verdicts(records)
    assert {v for _, v, _ in clean} <= {"pass", "fail", "inconclusive"}
    assert any(v == "pass" for _, v, _ in clean)  # IA is made the fairest here
    best = [rec("FedProx", s, -5) for s in range(3)]
    assert verdicts(records + best) == clean
    # and a stray record's rows are made without error (they address no printed number)
    from repro.relfair.experiments.reproduce import table1_reproduce

    rows = table1_reproduce(records + best)
    stray = [r for r in rows if r.key["method"] == "FedProx"]
    assert stray and all(r.note == "" and r.n_paper == 1 for r in stray)
    assert [r for r in rows if r.key["method"] != "FedProx"] == table1_reproduce(records)
