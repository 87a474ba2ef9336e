"""The reduced MNIST-M figures average over seeds: seed_mean groups by config without seed."""

from repro.engine.records.records import RunRecord
from repro.fedmm.experiments.render import seed_mean


def _rec(seed: int, p: float, acc: float, curve: list[float]) -> RunRecord:
    cfg = {"da": "CDAN", "algorithm": "FedAvgGDA", "local_steps": 20, "p": p, "seed": seed,
           "n_source": 8, "n_target": 8, "batch": 4, "rounds": 2}
    return RunRecord(experiment="fedmm.fig2", config=cfg, key=f"{seed}{p}", seed=seed,
                     metrics={"test_acc_full": acc}, curves={"round": [1, 2], "acc": curve})


def test_seed_mean_averages_metrics_and_curves_per_config():
    recs = [_rec(0, 0.5, 0.5, [0.1, 0.3]), _rec(1, 0.5, 0.7, [0.3, 0.5]),
            _rec(0, 1.0, 0.2, [0.0, 0.2])]
    out = {r.config["p"]: r for r in seed_mean(recs)}
    assert sorted(out) == [0.5, 1.0]
    assert abs(out[0.5].metrics["test_acc_full"] - 0.6) < 1e-15
    assert out[0.5].curves["acc"] == [0.2, 0.4]
    assert out[0.5].config["seed"] == [0, 1] and out[1.0].config["seed"] == [0]
