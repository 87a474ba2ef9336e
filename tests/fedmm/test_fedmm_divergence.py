"""At smoke scale, through the engine: a planted NaN ends a fedmm cell as a named divergence
(the engine's ``DivergenceError`` path: final, counted apart) with its first round and the
curves logged before it; a finite run's record carries the diagnostic curves and the
finiteness flag; the figures draw a diverged run as ended, never as a collapse.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from repro.engine.records.records import RunRecord
from repro.engine.registry import get, load_all
from repro.engine.run.planning import diverged, is_complete
from repro.engine.run.runner import run_experiment
from repro.fedmm import fedmm, training
from repro.fedmm.experiments import render_curves
from repro.fedmm.experiments.render import render_fig4, render_fig5


def _only(exp, **match):
    """``exp`` with the cells whose config matches ``match`` (the same keys and seeds)."""
    return dataclasses.replace(exp, cells=lambda s: [
        c for c in exp.cells(s) if all(c[k] == v for k, v in match.items())])


def test_a_planted_nan_is_a_divergence_record_with_its_round(isolated, monkeypatch):
    """NaN written into DANN's theta0 after round 2: both DANN FedMM smoke cells end as
    ``failed: DivergenceError: diverged at round 2: theta0 = nan``, with the curve of round 1,
    counted as diverged (final: not rerun), the grid complete.
    """
    for env in (training.DEVICE_ENV, training.BACKEND_ENV):
        monkeypatch.delenv(env, raising=False)
    orig = fedmm.FedMM.step

    def step(self):
        out = orig(self)
        if self.state.round == 2 and self.problem.net.method == "DANN":
            self.state.theta0[0] = float("nan")
        return out

    monkeypatch.setattr(fedmm.FedMM, "step", step)
    load_all()
    exp = _only(get("fedmm.fig4"), da="DANN", algorithm="FedMM")
    s = run_experiment(exp, "smoke", progress=False, keep_going=True)
    assert len(s.records) == 2 and s.diverged == 2 and s.not_run == 0
    for r in s.records:
        assert diverged(r)
        assert r.reason == "failed: DivergenceError: diverged at round 2: theta0 = nan"
        assert r.curves["round"] == [1.0] and len(r.curves["lambda_norm_0"]) == 1
        assert np.isfinite(r.curves["acc"]).all() and r.metrics == {}
    assert is_complete(exp, "smoke", s.records)
    again = run_experiment(exp, "smoke", progress=False, keep_going=True)
    assert (again.computed, again.cached, again.diverged) == (0, 2, 2)  # final


def test_smoke_records_carry_the_diagnostics_and_the_finiteness_flag(isolated, monkeypatch):
    for env in (training.DEVICE_ENV, training.BACKEND_ENV):
        monkeypatch.delenv(env, raising=False)
    load_all()
    s = run_experiment(_only(get("fedmm.fig4"), da="MDD", local_steps=2), "smoke",
                       progress=False)
    (rec,) = s.records
    assert rec.ok and rec.metrics["finite_checked"] == 1.0 and rec.accelerator == ""
    assert set(rec.curves) == {"round", "acc", "acc_code_client", "theta0_max_abs",
                               "lambda_norm_0", "lambda_norm_1", "beta_norm_0", "beta_norm_1",
                               "mdd_neg_log_a_source_max", "mdd_neg_log_a_target_max"}
    assert all(len(v) == 3 for v in rec.curves.values())  # one per evaluation, 3 rounds
    assert 0 < min(rec.curves["theta0_max_abs"]) and max(rec.curves["theta0_max_abs"]) < 10
    assert 0 < min(rec.curves["mdd_neg_log_a_target_max"]) < 100
    assert max(rec.curves["lambda_norm_0"]) > 0  # the duals moved
    sgda = run_experiment(_only(get("fedmm.fig4"), da="DANN", algorithm="FedSGDA"), "smoke",
                          progress=False).records[0]
    assert set(sgda.curves) == {"round", "acc", "acc_code_client", "theta0_max_abs"}
    assert sgda.metrics["finite_checked"] == 1.0


def _run(da, alg, m, seed, acc, ok=True, rounds=None, finite=True) -> RunRecord:
    rounds = rounds or [10.0 * (k + 1) for k in range(len(acc))]
    cfg = {"da": da, "algorithm": alg, "local_steps": m, "p": 1.0, "seed": seed,
           "rounds": 60, "n_source": 55000, "n_target": 55000, "batch": 64}
    if ok:
        metrics = {"test_acc_full": acc[-1], "best_acc": max(acc), "r_conv": rounds[-1],
                   "test_acc_full_code_client": acc[-1], "rounds": 60.0,
                   "final_acc": float(np.mean(acc[-5:]))}
        if finite:
            metrics["finite_checked"] = 1.0
        return RunRecord("fedmm.fig4", cfg, f"{alg}{m}{da}{seed}", seed, metrics=metrics,
                         curves={"round": rounds, "acc": acc, "acc_code_client": acc})
    return RunRecord("fedmm.fig4", cfg, f"{alg}{m}{da}{seed}", seed, status="failed",
                     reason="failed: DivergenceError: diverged at round 35: theta0 = nan",
                     curves={"round": rounds, "acc": acc, "acc_code_client": acc})


@pytest.fixture
def captured(monkeypatch):
    """The figures the renderers save, kept open (their artists read back)."""
    figs = {}

    def keep(fig, out, stem):
        figs[stem] = fig
        return []

    monkeypatch.setattr(render_curves, "save_figure", keep)
    return figs


def test_a_diverged_run_is_drawn_as_ended_and_named(tmp_path, captured):
    """DANN FedMM M=20 seed 2 diverged at round 35 after 0.5, 0.6, 0.55: its cross sits at
    round 35, the mean is over seeds 0-1 only (no drop to one class's share), the legend names
    the seeds and the divergence, and the table row says the round.
    """
    up = [0.40, 0.50, 0.60, 0.62, 0.65, 0.66]
    recs = [_run("DANN", "FedMM", 20, s, [a + 0.01 * s for a in up]) for s in (0, 1)]
    recs.append(_run("DANN", "FedMM", 20, 2, [0.5, 0.6, 0.55], ok=False))
    recs += [_run("DANN", "FedSGDA", 1, s, [0.3 + 0.01 * k for k in range(6)]) for s in (0, 1, 2)]
    render_fig4(recs, tmp_path, "extended")
    ax = captured["fedmm_fig4"].axes[0]
    (cross,) = [ln for ln in ax.get_lines() if ln.get_gid() == "diverged"]
    assert list(cross.get_xdata()) == [35] and np.allclose(cross.get_ydata(), [55.0])
    mean = next(ln for ln in ax.get_lines() if ln.get_label().startswith("FedMM (M=20)"))
    assert np.allclose(mean.get_ydata(), [100 * a + 0.5 for a in up])  # seeds 0-1 only
    assert min(mean.get_ydata()) > 35
    assert mean.get_label() == ("FedMM (M=20): seeds 0, 1; diverged: DANN seed 2 at round 35")
    sgda = next(ln for ln in ax.get_lines() if ln.get_label().startswith("FedSGDA"))
    assert sgda.get_label() == "FedSGDA (M=1): seeds 0-2"
    assert "drawn: 0-2" in captured["fedmm_fig4"]._suptitle.get_text()
    row = [line for line in (tmp_path / "fedmm_fig4.md").read_text().splitlines()
           if line.startswith("| DANN | FedMM | 20 | 1.0 | 1+1 | 2 |")]
    assert row == ["| DANN | FedMM | 20 | 1.0 | 1+1 | 2 | 60 | extended | — | — | — | — | — "
                   "| 35 |"]
    from repro.fedmm.experiments.tables import table_records

    back = table_records(tmp_path / "fedmm_fig4.csv")  # the diverged row holds no finals
    assert sorted((r.config["algorithm"], r.config["seed"]) for r in back) == [
        ("FedMM", 0), ("FedMM", 1), ("FedSGDA", 0), ("FedSGDA", 1), ("FedSGDA", 2)]


def test_an_older_frozen_run_is_drawn_as_ended_at_its_frozen_round(tmp_path, captured):
    """A record made before the finiteness check whose accuracy froze at one class's share
    from round 40 (NaN parameters): drawn ended at round 40, not averaged in.
    """
    live = [0.40, 0.50, 0.60, 0.62, 0.65, 0.66, 0.67, 0.68, 0.69]
    frozen = live[:3] + [0.1015] * 6
    recs = [_run("MDD", "FedMM", 25, 0, frozen, finite=False),
            _run("MDD", "FedMM", 25, 1, live, finite=False)]
    render_fig4(recs, tmp_path, "extended")
    ax = captured["fedmm_fig4"].axes[2]
    (cross,) = [ln for ln in ax.get_lines() if ln.get_gid() == "diverged"]
    assert list(cross.get_xdata()) == [40.0] and np.allclose(cross.get_ydata(), [60.0])
    mean = next(ln for ln in ax.get_lines() if ln.get_label().startswith("FedMM (M=25)"))
    assert np.allclose(mean.get_ydata(), [100 * a for a in live])
    assert "froze on one class (NaN, older record): MDD seed 0 at round 40" in mean.get_label()


def test_fig5_names_what_it_lacks(tmp_path, captured):
    """Only FedMM 1+1 runs: the title says the baselines and split settings are not run."""
    recs = [dataclasses.replace(_run(da, "FedMM", 20, 0, [0.4, 0.5]), experiment="fedmm.fig5")
            for da in ("DANN", "CDAN", "MDD")]
    render_fig5(recs, tmp_path, "extended")
    title = captured["fedmm_fig5"]._suptitle.get_text()
    assert ("not run yet: FedAvgGDA, FedProxGDA; the 2+2, 5+5 client settings" in title)
    assert "drawn: 0" in title
