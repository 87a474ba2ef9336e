"""The engine's cell context: shared random streams, the artifact folder,
relative tolerances, and the discovery of experiment modules.
"""

from __future__ import annotations

import numpy as np
import pytest

from repro.engine import registry
from repro.engine.compare.compare import ReportedRow, verdict_for
from repro.engine.experiment import CellResult, Experiment, Reproduced, RunContext, cell_seed
from repro.engine.run.runner import run_experiment

EXP = "demo.shared"


def _ctx(**config) -> RunContext:
    return RunContext(EXP, config, cell_seed(EXP, config))


def _draws(ctx: RunContext, *key, shared_over=()) -> np.ndarray:
    return ctx.rng(*key, shared_over=shared_over).standard_normal(8)


# ---------------------------------------------------------------- shared_over streams


def test_a_stream_shared_over_method_is_equal_across_methods_only():
    a, b = _ctx(method="A", seed=0), _ctx(method="B", seed=0)
    other_seed = _ctx(method="A", seed=1)
    shared = ("method",)
    assert np.array_equal(_draws(a, "init", shared_over=shared),
                          _draws(b, "init", shared_over=shared))
    # not shared where another field differs
    assert not np.array_equal(_draws(a, "init", shared_over=shared),
                              _draws(other_seed, "init", shared_over=shared))
    # without shared_over each cell has its own stream
    assert not np.array_equal(_draws(a, "init"), _draws(b, "init"))
    # the key still separates streams within the shared seed
    assert not np.array_equal(_draws(a, "init", shared_over=shared),
                              _draws(a, "batches", 0, shared_over=shared))


def test_shared_seed_is_the_seed_of_the_identity_without_those_fields():
    ctx = _ctx(method="A", seed=3, lr=0.1)
    assert ctx.shared_seed() == ctx.seed
    assert ctx.shared_seed(("method",)) == cell_seed(EXP, {"seed": 3, "lr": 0.1})
    assert ctx.shared_seed(("method", "lr")) == cell_seed(EXP, {"seed": 3})
    # the order of the names does not matter
    assert ctx.shared_seed(("lr", "method")) == ctx.shared_seed(("method", "lr"))


def test_seed_sequence_for_and_torch_generator_share_like_rng():
    torch = pytest.importorskip("torch")
    a, b, c = _ctx(method="A", seed=0), _ctx(method="B", seed=0), _ctx(method="A", seed=1)
    sa = a.seed_sequence_for("split", shared_over=("method",)).generate_state(4)
    sb = b.seed_sequence_for("split", shared_over=("method",)).generate_state(4)
    sc = c.seed_sequence_for("split", shared_over=("method",)).generate_state(4)
    assert np.array_equal(sa, sb) and not np.array_equal(sa, sc)
    assert not np.array_equal(a.seed_sequence_for("split").generate_state(4),
                              b.seed_sequence_for("split").generate_state(4))

    def draw(ctx, **kw):
        return torch.rand(5, generator=ctx.torch_generator("init", **kw))

    assert torch.equal(draw(a, shared_over=("method",)), draw(b, shared_over=("method",)))
    assert not torch.equal(draw(a, shared_over=("method",)), draw(c, shared_over=("method",)))
    assert not torch.equal(draw(a), draw(b))


@pytest.mark.parametrize("call", ["rng", "seed_sequence_for", "torch_generator", "shared_seed"])
def test_an_unknown_shared_over_field_is_a_key_error_naming_it(call):
    if call == "torch_generator":
        pytest.importorskip("torch")
    ctx = _ctx(method="A", seed=0)
    with pytest.raises(KeyError, match="methd"):
        if call == "shared_seed":
            ctx.shared_seed(("methd",))
        else:
            getattr(ctx, call)("init", shared_over=("methd",))


# ---------------------------------------------------------------- artifacts


def _artifact_cell(config, ctx):
    path = ctx.artifacts / f"{config['seed']}.txt"
    path.write_text("checkpoint")
    return CellResult({"where": float(len(str(path)))})


ARTIFACT_EXP = Experiment(name="demo.artifacts", title="writes a checkpoint", paper="-",
                          cells=lambda scale: [{"seed": 0}], run_cell=_artifact_cell)


def test_artifacts_live_under_the_results_folder_given(tmp_path, isolated):
    out = tmp_path / "elsewhere"
    summary = run_experiment(ARTIFACT_EXP, "smoke", out=out, progress=False)
    assert summary.computed == 1 and summary.records[0].ok
    assert (out / "checkpoints" / "demo.artifacts" / "0.txt").read_text() == "checkpoint"
    # nothing went to the default results folder ($FEDREPRO_RESULTS of `isolated`)
    assert not (isolated / "results" / "checkpoints").exists()


def test_artifacts_default_to_the_default_results_folder(isolated):
    ctx = RunContext("demo.artifacts", {"seed": 0}, 1)
    assert ctx.artifacts == isolated / "results" / "checkpoints" / "demo.artifacts"
    assert ctx.artifacts.is_dir()


# ---------------------------------------------------------------- rel_tolerance


def _row(text, std=None):
    return ReportedRow("demo_table1", "p.txt", "1", (("method", "A"),), "loss", text, std)


def _rep(values, **kw):
    return Reproduced("demo_table1", {"method": "A"}, "loss", tuple(values), **kw)


def test_no_tolerance_of_ours_makes_a_match_relative_or_absolute():
    # within 20 % of -2.50 or 0.1 of 10.0 was a match before; now a tolerance is refused and a
    # row is judged at its printed width
    for rep in (_rep([-2.9], rel_tolerance=0.2), _rep([10.05], tolerance=0.1)):
        with pytest.raises(ValueError, match="never makes a match"):
            verdict_for(_row("-2.50"), rep, "")
    assert verdict_for(_row("10.0"), _rep([10.04]), "")["verdict"] == "match"
    assert verdict_for(_row("10.0", 0.3), _rep([10.29]), "")["tolerance"] == pytest.approx(0.3)


def test_a_corrected_row_is_refused():
    with pytest.raises(ValueError, match="never a corrected one"):
        verdict_for(_row("1.0"), _rep([20.04], corrected="20.0", note="misprint"), "")


# ---------------------------------------------------------------- discovery


def test_experiment_modules_are_discovered_sorted_and_every_one_registers():
    mods = registry.experiment_modules()
    papers = {m.split(".")[1] for m in mods}
    assert {"constrfl", "fairvfl", "fedmm", "relfair", "demo"} <= papers
    assert not papers & registry.NOT_PAPERS
    # each paper's own modules come right after it, in name order
    assert mods == sorted(mods)
    exps = registry.load_all()
    assert "core.demo" in exps  # the demo keeps its name: names feed seeds
    owners = {e.run_cell.__module__.split(".")[1] for e in exps.values()
              if e.run_cell.__module__.startswith("repro.")}
    assert owners <= papers
