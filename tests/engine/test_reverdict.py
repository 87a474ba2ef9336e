"""scripts/reverdict.py: the new verdict rule on committed comparison rows (issue #28)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("reverdict", ROOT / "scripts" / "reverdict.py")
reverdict = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reverdict)


def _row(**kw):
    base = {"experiment": "fairvfl.conf_table1", "paper_file": "000_x.txt", "table": "I",
            "key": "dataset=compas;method=FedBCD", "metric": "FR_pct", "reported": "81.2",
            "reported_std": "0.2", "reproduced": "83.01", "reproduced_std": "5.02",
            "n_seeds": "5", "tolerance": "0.2", "verdict": "within_noise", "reason": "",
            "primary": "True"}
    return {**base, **kw}


def test_a_spread_far_beyond_the_printed_std_is_no_longer_noise():
    new, d = reverdict.reverdict(_row())
    assert new == "deviates" and d["n_paper"] == 5
    assert d["sigma_diff"] == pytest.approx(math.sqrt(5.02 ** 2 / 5 + 0.2 ** 2 / 5), rel=1e-12)
    assert "25.1x the paper's printed std" in d["notes"][0]


def test_a_one_sided_row_is_judged_on_its_printed_number():
    row = _row(experiment="constrfl.table1", key="dataset=bcw;n=1;method=Algorithm 1 vs cProx-AL",
               metric="relative_difference", reported="7.09e-04", reported_std="0.000202",
               reproduced="0.0001775", reproduced_std="0.000277", n_seeds="10",
               tolerance="0.05", verdict="match",
               reason="one-sided: match when <= 0.05, whatever the printed value")
    new, d = reverdict.reverdict(row)
    assert new == "deviates" and d["tolerance"] == pytest.approx(2.02e-4)


def test_a_std_pooled_over_clients_is_refused_bounded_or_flagged():
    pooled = _row(experiment="constrfl.table2", key="dataset=adult-b;n=5;method=cProx-AL",
                  metric="objective", reported="0.37", reported_std="0.00405",
                  reproduced="0.3831", reproduced_std="0.00304", n_seeds="50",
                  tolerance="0.00405", verdict="deviates")
    new, d = reverdict.reverdict(pooled)
    # the largest per-trial std the pooled one allows: 0.00304 sqrt(49 / 45) = 0.003172;
    # 2 sigma_diff <= 2 sqrt(2 * 0.003172^2 / 10) = 0.002837 < |0.0131|: deviates
    assert new == "deviates" and d["n"] == 10
    assert d["sigma_diff"] == pytest.approx(0.00304 * math.sqrt(49 / 45) * math.sqrt(0.2),
                                            rel=1e-12)
    close = {**pooled, "reproduced": "0.3775", "reproduced_std": "0.01"}
    assert reverdict.reverdict(close)[0] == "needs_rerun"
