"""A new paper needs no list edited: a throwaway paper package in a temp
folder is discovered by ``repro list``, run at smoke scale and compared against a reported CSV
of its own; a throwaway theory check module is discovered by ``python -m theory``.

Both packages are put on the import path only by extending ``repro.__path__`` /
``theory.__path__`` (as a second checkout of the package would); nothing of the repository is
edited, and the registries are restored afterwards.
"""

from __future__ import annotations

import csv
import json
import sys
import textwrap

import pytest

import repro
import theory
from repro.cli import main
from repro.engine import registry
from repro.engine.report import report
from theory import registry as theory_registry

PAPER_FILE = "900_throwaway.txt"

ALGORITHM = '''
"""Mean of a sample of N(mu, 1): the throwaway paper's one algorithm (pure numpy)."""
import numpy as np


def sample_mean(mu: float, n: int, rng: np.random.Generator) -> float:
    return float(np.mean(mu + rng.standard_normal(n)))
'''

INIT = '''
from repro.engine.report.report import Paper, declare_paper

declare_paper(Paper("900", "A Throwaway Paper", "Nobody", 2026, "throwaway"))
'''

TABLE1 = '''
"""throwaway.table1: the sample mean of N(mu, 1), one row per mu."""
from repro.engine.experiment import CellResult, Experiment, Reproduced
from repro.engine.registry import register
from repro.throwaway.algorithm import sample_mean

MUS = (1.0, 5.0)


def cells(scale):
    n = 200 if scale == "smoke" else 20000
    return [{"mu": mu, "n": n, "seed": s} for mu in MUS for s in range(2)]


def run_cell(config, ctx):
    return CellResult({"mean": sample_mean(config["mu"], config["n"], ctx.rng("sample"))})


def reproduce(records):
    return [Reproduced("throwaway_table1", {"mu": f"{mu:g}"}, "mean",
                       tuple(r.metrics["mean"] for r in records if r.config["mu"] == mu),
                       n_paper=1)
            for mu in MUS]


register(Experiment(name="throwaway.table1", title="sample means", paper="900_throwaway.txt",
                    cells=cells, run_cell=run_cell, reproduce=reproduce,
                    reported=("throwaway_table1",), cost={"smoke": "1 s"}))
'''

CHECK = '''
import numpy as np
from theory.registry import register
from theory.result import CheckResult


@register("throwaway.mean_identity", paper="900 throwaway", claim="E[mu + Z] = mu")
def check(seed, size):
    rng = np.random.default_rng(seed)
    n = 1000 if size == "small" else 100000
    err = abs(float(np.mean(3.0 + rng.standard_normal(n))) - 3.0)
    return CheckResult(name="throwaway.mean_identity", claim="E[mu + Z] = mu", paper="900",
                       equation="-", instances=1, worst_margin=0.5 - err,
                       ground_truth={"mu": 3.0}, passed=err < 0.5)
'''


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())


@pytest.fixture
def throwaway(tmp_path, monkeypatch, isolated):
    """The throwaway paper package (and theory folder) on ``repro.__path__`` /
    ``theory.__path__``; registries and ``sys.modules`` restored afterwards.
    """
    lib, checks = tmp_path / "lib", tmp_path / "checks"
    pkg = lib / "throwaway"
    _write(pkg / "__init__.py", '"""A throwaway paper."""\n')
    _write(pkg / "algorithm.py", ALGORITHM)
    _write(pkg / "experiments" / "__init__.py", INIT)
    _write(pkg / "experiments" / "table1.py", TABLE1)
    _reported(pkg)
    _write(checks / "throwaway" / "__init__.py", "")
    _write(checks / "throwaway" / "mean_identity.py", CHECK)
    monkeypatch.setattr(repro, "__path__", [*repro.__path__, str(lib)])
    monkeypatch.setattr(theory, "__path__", [*theory.__path__, str(checks)])
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(report, "_DECLARED", list(report._DECLARED))
    monkeypatch.setattr(theory_registry, "_REGISTRY", dict(theory_registry._REGISTRY))
    report.paper_values.cache_clear()
    yield tmp_path
    report.paper_values.cache_clear()
    for name in [m for m in sys.modules if m.startswith(("repro.throwaway", "theory.throwaway"))]:
        del sys.modules[name]


def _reported(pkg):
    """The throwaway paper's own reported CSV, in its package's ``reported/`` folder."""
    (pkg / "reported").mkdir()
    rows = [{"paper_file": PAPER_FILE, "table": "1", "mu": mu, "metric": "mean", "value": v,
             "std": "", "line": str(10 + i), "cell": "2"}
            for i, (mu, v) in enumerate((("1", "1"), ("5", "5")))]
    with open(pkg / "reported" / "throwaway_table1.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def test_a_throwaway_paper_is_discovered_run_and_compared(throwaway, capsys):
    assert "repro.throwaway.experiments.table1" in registry.experiment_modules()
    assert main(["list"]) == 0
    assert "throwaway.table1" in capsys.readouterr().out

    results, out = throwaway / "results", throwaway / "figures"
    assert main(["run", "throwaway.*", "--scale", "smoke", "--jobs", "1", "--no-progress",
                 "--results", str(results)]) == 0
    assert "throwaway.table1 [smoke]: 4 computed" in capsys.readouterr().out
    assert main(["compare", "--scale", "smoke", "--results", str(results), "--out",
                 str(out)]) == 0
    printed = capsys.readouterr().out
    assert "A Throwaway Paper (2026): match 2" in printed
    with open(out / "comparison.csv", newline="") as f:
        mine = [r for r in csv.DictReader(f) if r["experiment"] == "throwaway.table1"]
    assert [(r["key"], r["verdict"]) for r in mine] == [("mu=1", "match"), ("mu=5", "match")]
    # the match width is the printed precision: half a unit of "1" and "5"
    assert [float(r["tolerance"]) for r in mine] == [0.5, 0.5]


def test_a_throwaway_theory_check_is_discovered_and_run(throwaway, capsys):
    from theory.__main__ import main as theory_main

    assert "throwaway.mean_identity" in theory_registry.selected("throwaway")
    out = throwaway / "theory"
    assert theory_main(["--only", "throwaway", "--size", "small", "--out", str(out)]) == 0
    checks = {c["name"]: c for c in json.loads((out / "theory.json").read_text())["checks"]}
    assert checks["throwaway.mean_identity"]["passed"] is True
