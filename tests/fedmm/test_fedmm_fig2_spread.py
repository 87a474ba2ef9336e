"""fedmm Fig. 2 draws the seed spread its claim uses: ±1 std error bars on final accuracy vs p."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest

from repro.engine.records.records import RunRecord
from repro.fedmm.experiments.render import render_fig2


def _run(p, seed, final):
    cfg = {"da": "CDAN", "algorithm": "FedAvgGDA", "local_steps": 20, "p": p, "seed": seed,
           "n_source": 512, "n_target": 512, "batch": 16, "rounds": 3}
    return RunRecord(experiment="fedmm.fig2", key=f"{p}{seed}", seed=seed, config=cfg,
                     metrics={"test_acc_full": final, "best_acc": final, "final_acc": final,
                              "r_conv": 2.0, "rounds": 3.0, "test_acc_full_code_client": final},
                     curves={"round": [1.0, 2.0, 3.0], "acc": [0.1, final - 0.05, final]})


def test_final_accuracy_vs_p_carries_the_seed_std(tmp_path, monkeypatch):
    finals = {0.5: (0.55, 0.56, 0.54), 1.0: (0.44, 0.47, 0.43)}
    recs = [_run(p, s, a) for p, accs in finals.items() for s, a in enumerate(accs)]
    saved = []
    monkeypatch.setattr(plt, "close", saved.append)
    render_fig2(recs, tmp_path, "paper")
    right = saved[-1].get_axes()[1]
    (bars,) = [c for c in right.containers if hasattr(c, "has_yerr") and c.has_yerr]
    segments = bars.lines[2][0].get_segments()
    half = sorted((seg[1][1] - seg[0][1]) / 2 for seg in segments)
    want = sorted(100 * np.std(v, ddof=1) for v in finals.values())
    assert half == pytest.approx(want, rel=1e-12)
    assert "±1 std over seeds" in right.get_ylabel()
