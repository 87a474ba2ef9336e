"""Staleness per cell by the code it imports.

A record's code identity is the hash of the ``repro`` modules in the static import closure of
its ``run_cell`` module. Each test edits a module *in this process only* (the file's bytes are
replaced through ``Path.read_bytes``) and checks which experiments' hashes move: exactly those
whose closure holds the module.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from repro.engine import registry
from repro.engine.run import code_identity
from repro.engine.run.code_identity import (
    _REPRO,
    OUTPUT_ENGINE,
    OUTPUT_ONLY,
    code_files,
    code_hash,
    import_closure,
)


@pytest.fixture(scope="module")
def exps():
    """The package's experiments (plugins other tests register are left out)."""
    return {name: exp for name, exp in registry.load_all().items()
            if exp.run_cell.__module__.startswith("repro.")}


def _hashes(exps) -> dict[str, str]:
    code_identity.clear_cache()
    return {name: code_hash(exp) for name, exp in exps.items()}


def _edited(monkeypatch, exps, rel: str) -> set[str]:
    """The experiments whose code hash moves when a comment is appended to ``repro/<rel>``."""
    before = _hashes(exps)
    target = (_REPRO / rel).resolve()
    assert target.is_file(), target
    real = Path.read_bytes

    def read_bytes(self):
        data = real(self)
        return data + b"\n# an edited comment\n" if Path(self).resolve() == target else data

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    after = _hashes(exps)
    monkeypatch.undo()
    code_identity.clear_cache()
    return {name for name in exps if before[name] != after[name]}


def test_a_comment_in_a_relfair_algorithm_stales_table1_not_fig1(monkeypatch, exps):
    moved = _edited(monkeypatch, exps, "relfair/scaff_pd_ia.py")
    assert {"relfair.table1", "relfair.fig4", "relfair.ablation_server_step"} <= moved
    assert not moved & {"relfair.fig1", "relfair.fig2", "relfair.fig3"}
    assert all(name.startswith("relfair.") for name in moved)


def test_a_core_projection_edit_stales_the_papers_that_import_it_only(monkeypatch, exps):
    moved = _edited(monkeypatch, exps, "core/projections.py")
    importers = {name for name, exp in exps.items()
                 if (_REPRO / "core/projections.py").resolve() in code_files(exp)}
    assert moved == importers
    # which papers those are, counted from the package today: fairvfl and relfair, not the
    # constrfl, fedmm or demo cells
    assert {n.split(".")[0] for n in moved} == {"fairvfl", "relfair"}
    assert len(moved) >= 7 + 7   # relfair: Table 1, Figs. 1-4, the ablation, the FedAvg search


@pytest.mark.parametrize("rel", ["relfair/experiments/render.py", "constrfl/experiments/claims.py",
                                 "fedmm/experiments/reproduce.py", "engine/report/report.py",
                                 "engine/report/plotting.py", "engine/compare/compare.py",
                                 "cli.py"])
def test_output_only_edits_stale_nothing(monkeypatch, exps, rel):
    assert _edited(monkeypatch, exps, rel) == set()


def test_no_run_cell_closure_holds_an_output_module(exps):
    """The layout rule the per-cell identity rests on: a run_cell module never imports (even
    indirectly) a renderer, claims, reproduce or the engine's output modules.
    """
    for name, exp in exps.items():
        rel = [p.relative_to(_REPRO).as_posix() for p in code_files(exp)]
        bad = [r for r in rel if r.split("/")[-1] in OUTPUT_ONLY or r in OUTPUT_ENGINE]
        assert bad == [], f"{name}: its run_cell closure holds {bad}"


def test_the_closure_follows_relative_lazy_and_package_imports(tmp_path):
    """Relative imports, a function-level import and ``from pkg import submodule`` are followed;
    ``if TYPE_CHECKING:`` imports are not.
    """
    mod = _REPRO / "relfair" / "experiments" / "_figcells.py"
    closure = {p.relative_to(_REPRO).as_posix() for p in import_closure(mod)}
    # _figcells imports geometry, problem and penguins inside its functions
    assert {"relfair/geometry.py", "relfair/problem.py", "relfair/penguins.py"} <= closure
    assert "relfair/experiments/_cells.py" not in closure
    text = ('from typing import TYPE_CHECKING\n'
            'if TYPE_CHECKING:\n    from repro.engine import report\n'
            'from repro.core import metrics\n'
            'def f():\n    import repro.core.partition\n')
    plugin = tmp_path / "plugin.py"
    plugin.write_text(text)
    closure = {p.name for p in import_closure(plugin)}
    assert {"plugin.py", "metrics.py", "partition.py"} <= closure
    assert "report.py" not in closure


def test_every_named_method_and_its_algorithm_are_in_the_identity(exps):
    """A paper's ``methods`` package finds its method files at run time (no static import shows
    them), so ``code_files`` adds the module of each method an experiment names: editing a
    method file or its algorithm's file stales exactly the experiments that run it.
    """
    import inspect

    library = registry.library_methods()
    counted = 0
    for name, exp in exps.items():
        files = {p.resolve() for p in code_files(exp)}
        for method in exp.methods:
            m = library[name.split(".")[0]][method]
            assert code_identity._resolve(m.module) in files, f"{name}: {m.module}"
            assert Path(inspect.getfile(m.algorithm)).resolve() in files, f"{name}: {method}"
            counted += 1
    assert counted >= 30  # 5 constrfl + 13 fairvfl + 8 fedmm + 16 relfair pairs at least


def test_an_experiment_naming_an_unregistered_method_is_refused(exps):
    import dataclasses

    exp = dataclasses.replace(exps["relfair.table1"], methods=("FedAvg", "NoSuchMethod"))
    with pytest.raises(ValueError, match="names method 'NoSuchMethod'.*does not register"):
        code_files(exp)
