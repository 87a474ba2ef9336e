"""The recipes of docs/adding-a-paper.md, built from the doc's own code blocks and run.

Every block whose fence names a file (```python repro/<path>) is a file of a recipe. The
tests write them into temporary folders put on the packages' search paths (nothing of the
repository is edited; registries and ``sys.modules`` are restored afterwards) and run them at
smoke scale:

- the paper (``repro/toy/...``): discovered, run, rendered and compared with its reported CSV,
  both printed numbers ``match``; its ``run_cell`` module holds no output module;
- the rho sweep (``repro/constrfl/experiments/rho_sweep.py``): three cells run by Table 4's
  ``run_cell``; the cell at the paper's rho equals Table 4's cell (no rho field) bit for bit,
  another rho changes the numbers; the figure is drawn; its code identity is Table 4's;
- the method (``repro/relfair/methods/fedprox.py``): ``build("FedProx", ..., mu=...)`` works,
  ``mu`` is accepted by every relfair method's build and a misspelt option refused, FedProx
  at mu = 0 is FedAvg bit for bit, and with mu > 0 its local steps are those of a hand-written
  proximal SGD loop.
"""

from __future__ import annotations

import csv
import importlib
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import repro
from repro.cli import main
from repro.core.methods import discover
from repro.engine import registry
from repro.engine.report import report
from repro.engine.run import code_identity
from repro.engine.run.runner import plan, run_cell

DOC = Path(__file__).resolve().parents[2] / "docs" / "adding-a-paper.md"
FENCE = re.compile(r"```(\w+) (repro/[\w/.]+)\n(.*?)```", flags=re.S)


def recipe_files(prefix: str) -> dict[str, str]:
    """``{path: text}`` of the doc's blocks whose named file starts with ``prefix``."""
    found = {}
    for _, path, text in FENCE.findall(DOC.read_text()):
        if path.startswith(prefix):
            assert path not in found, f"two blocks name {path}"
            found[path] = text
    assert found, f"docs/adding-a-paper.md names no file under {prefix}"
    return found


@pytest.fixture
def registries(monkeypatch, isolated):
    """The experiment registry and the declared papers, restored after the test."""
    registry.load_all()   # the package's own experiments, registered before the copy
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(report, "_DECLARED", list(report._DECLARED))
    report.paper_values.cache_clear()
    code_identity.clear_cache()
    yield isolated
    report.paper_values.cache_clear()
    code_identity.clear_cache()


def _forget(*prefixes: str) -> None:
    for name in [m for m in sys.modules if m.startswith(prefixes)]:
        del sys.modules[name]


# ---------------------------------------------------------------------------- the paper


def test_the_paper_recipe_runs_renders_and_matches(registries, monkeypatch, capsys):
    files = recipe_files("repro/toy/")
    assert {"repro/toy/__init__.py", "repro/toy/experiments/_table1.py",
            "repro/toy/experiments/table1.py", "repro/toy/experiments/render.py",
            "repro/toy/reported/toy_table1.csv"} <= set(files)
    lib = registries / "lib"
    for path, text in files.items():
        target = lib / Path(path).relative_to("repro")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    monkeypatch.setattr(repro, "__path__", [*repro.__path__, str(lib)])
    try:
        assert main(["list"]) == 0
        assert "toy.table1" in capsys.readouterr().out
        results, out = registries / "results", registries / "figures"
        assert main(["run", "toy.*", "--scale", "smoke", "--jobs", "1", "--no-progress",
                     "--results", str(results)]) == 0
        assert "toy.table1 [smoke]: 6 computed" in capsys.readouterr().out
        assert main(["figures", "toy.*", "--scale", "smoke", "--results", str(results),
                     "--out", str(out)]) == 0
        assert {p.name for p in out.rglob("toy_table1.*")} >= {
            "toy_table1.md", "toy_table1.png", "toy_table1.pdf"}
        assert main(["compare", "--scale", "smoke", "--results", str(results), "--out",
                     str(registries / "cmp")]) == 0
        with open(registries / "cmp" / "comparison.csv", newline="") as f:
            rows = [r for r in csv.DictReader(f) if r["experiment"] == "toy.table1"]
        assert [(r["key"], r["verdict"]) for r in rows] == [("mu=1", "match"), ("mu=5", "match")]
        # the layout the doc gives is the one code identity allows
        exp = registry.get("toy.table1")
        files = code_identity.code_files(exp)
        assert "_table1.py" in [p.name for p in files]
        assert not {p.name for p in files} & code_identity.OUTPUT_ONLY
        rel = {p.relative_to(code_identity._REPRO).as_posix() for p in files
               if p.is_relative_to(code_identity._REPRO)}
        assert not rel & code_identity.OUTPUT_ENGINE
    finally:
        _forget("repro.toy")


# ---------------------------------------------------------------------------- the rho sweep


@pytest.fixture
def rho_sweep(registries, monkeypatch):
    import repro.constrfl.experiments as experiments

    (path, text), = recipe_files("repro/constrfl/experiments/").items()
    folder = registries / "sweep"
    folder.mkdir()
    (folder / Path(path).name).write_text(text)
    monkeypatch.setattr(experiments, "__path__", [*experiments.__path__, str(folder)])
    yield importlib.import_module("repro.constrfl.experiments.rho_sweep")
    _forget("repro.constrfl.experiments.rho_sweep")


def _records(results: Path, name: str) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((results / name).glob("*.json"))]


def test_the_rho_sweep_recipe_reuses_table4s_cells(rho_sweep, registries, capsys):
    from repro.constrfl.experiments import _lcqp

    exp = registry.get("constrfl.rho_sweep")
    table4 = registry.get("constrfl.table4")
    assert exp.run_cell is _lcqp.run_cell is table4.run_cell   # no copy of run_cell
    assert code_identity.code_files(exp) == code_identity.code_files(table4)
    results = registries / "results"
    assert main(["run", "constrfl.rho_sweep", "--scale", "smoke", "--jobs", "1",
                 "--no-progress", "--results", str(results)]) == 0
    assert "constrfl.rho_sweep [smoke]: 3 computed" in capsys.readouterr().out
    recs = {r["config"]["rho"]: r for r in _records(results, "constrfl.rho_sweep")}
    assert sorted(recs) == [0.5, 1.0, 2.0] and all(r["status"] == "ok" for r in recs.values())
    # rho = 1 is the paper's (App. E.2): the same numbers as Table 4's cell, which names no rho
    # (both through the runner: one BLAS thread, as every cell runs)
    plain = {k: v for k, v in recs[1.0]["config"].items() if k != "rho"}
    cell = next(c for c in plan(table4, "smoke") if c.config == plain)
    ref, how = run_cell(table4, cell, results)
    assert how == "computed" and _lcqp.HYPER["rho"] == 1.0
    assert recs[1.0]["metrics"] == json.loads(json.dumps(dict(ref.metrics)))
    assert recs[0.5]["metrics"]["alg1_objective"] != recs[1.0]["metrics"]["alg1_objective"]
    out = registries / "figures"
    assert main(["figures", "constrfl.rho_sweep", "--scale", "smoke", "--results",
                 str(results), "--out", str(out)]) == 0
    assert {p.name for p in out.rglob("constrfl_rho_sweep.*")} == {
        "constrfl_rho_sweep.png", "constrfl_rho_sweep.pdf"}


# ---------------------------------------------------------------------------- the method


@pytest.fixture
def fedprox(tmp_path, monkeypatch):
    import repro.relfair.methods as methods

    (path, text), = recipe_files("repro/relfair/methods/").items()
    (tmp_path / Path(path).name).write_text(text)
    monkeypatch.setattr(methods, "__path__", [*methods.__path__, str(tmp_path)])
    monkeypatch.setattr(methods, "METHODS", discover(methods.__name__, methods.__path__))
    yield methods
    _forget("repro.relfair.methods.fedprox")


def _theta(alg):
    return alg.state.theta


def test_the_method_recipe_builds_with_its_own_mu(fedprox):
    methods = fedprox
    problem = methods.tiny_problem(0)
    alg = methods.build("FedProx", problem, rng=torch.Generator().manual_seed(1), mu=0.25,
                        local_steps=2)
    assert alg.config.mu == 0.25 and alg.config.local_steps == 2
    assert "mu" in methods.METHODS["FedProx"].options
    # one set of options builds every method: mu joins the accepted options, the others ignore it
    for name in methods.METHODS:
        methods.build(name, problem, mu=0.25, alpha=0.3, tau=0.5, local_steps=1)
    with pytest.raises(ValueError, match=r"FedProx: unknown option\(s\) \['nu'\]"):
        methods.build("FedProx", problem, nu=0.25)
    with pytest.raises(ValueError, match="mu"):
        methods.build("FedProx", problem, mu=-1.0)


@pytest.mark.parametrize("local_work", ["steps", "epochs"])
@pytest.mark.parametrize("backend", ["loop", "vectorized"])
def test_fedprox_at_mu_0_is_fedavg_and_its_term_is_the_proximal_gradient(fedprox, backend,
                                                                         local_work):
    methods = fedprox
    problem = methods.tiny_problem(2)

    def run(name, **options):
        alg = methods.build(name, problem, rng=torch.Generator().manual_seed(5), backend=backend,
                            local_work=local_work, local_steps=2, **options)
        alg.run(3)
        return alg.state.theta

    fedavg, prox0 = run("FedAvg"), run("FedProx", mu=0.0)
    assert all(torch.equal(a, b) for a, b in zip(fedavg, prox0, strict=True))
    prox = run("FedProx", mu=0.5)
    assert max(float((a - b).abs().max()) for a, b in zip(prox, fedavg, strict=True)) > 1e-4

    # one round by hand: u_j = u_{j-1} - eta (grad f_i(u_{j-1}) + mu (u_{j-1} - theta))
    alg = methods.build("FedProx", problem, rng=torch.Generator().manual_seed(5),
                        backend=backend, local_work="steps", local_steps=3, mu=0.5)
    theta, engine = alg.state.theta, alg.engine
    gen_state = alg.rng.get_state()
    alg.step()
    alg.rng.set_state(gen_state)
    draws = alg._draws(3)
    u = tuple(p.unsqueeze(0).expand(problem.n, *p.shape).clone() for p in theta)
    for s in range(3):
        _, g = engine.gradients(u, draws.idx[s], None if draws.mask is None else draws.mask[s])
        u = tuple(ui - 0.1 * (gi + 0.5 * (ui - t)) for ui, gi, t in zip(u, g, theta, strict=True))
    expected = tuple(p.mean(dim=0) for p in u)
    gap = max(float((a - b).abs().max()) for a, b in zip(alg.state.theta, expected, strict=True))
    assert gap <= 1e-6, gap   # float32 rounding of the fused vectorized step
    assert np.isfinite(gap)
