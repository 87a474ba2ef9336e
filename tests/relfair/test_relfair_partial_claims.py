"""A past defect: an alternative reading run only in part (here ``steps`` with only its
SAFL cells, the ones every reading shares) judged Table 1's claims on those records and
printed ``fail: no MNIST Scaff-PD-IA record``. Missing records make a claim ``not_run``.
"""

from __future__ import annotations

from repro.engine.compare.compare import check_claims
from repro.engine.records.records import RunRecord
from repro.engine.registry import get

METRICS = {"acc_all": 0.9, "R_AB": 2.0, "gini": 0.1, "acc_worst20": 0.8, "acc_best20": 0.95}


def _rec(method: str, seed: int) -> RunRecord:
    return RunRecord("relfair.table1", {"task": "MNIST", "method": method, "seed": seed},
                     f"{method}{seed}", seed, metrics=dict(METRICS))


def _table1_claims(records):
    exp = get("relfair.table1")
    rows = check_claims({exp.name: exp}, {exp.name: ("paper", records)})
    return {r["claim"]: r for r in rows}


def test_claims_on_safl_only_records_are_not_run():
    rows = _table1_claims([_rec("SAFL", s) for s in range(3)])
    assert rows and all(r["verdict"] == "not_run" for r in rows.values()), rows
    # said on how many cells it was judged, then why it is not_run
    # (these hand-made configs are no cell of the grid, so no cell count is said)
    assert all(r["measured"].startswith("records missing: ") for r in rows.values())
    assert not any("fail" in r["verdict"] for r in rows.values())


def test_claims_with_every_method_get_a_verdict():
    from repro.relfair.experiments._cells import TABLE1_METHODS

    rows = _table1_claims([_rec(m, s) for m in TABLE1_METHODS for s in range(3)])
    # equal metrics everywhere: no ordering can be decided, but every claim is judged
    assert all(r["verdict"] in ("pass", "fail", "inconclusive") for r in rows.values()), rows
