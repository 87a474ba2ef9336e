"""The comparison as the package ships it: no `match` wider than the printed number allows, a
cause and evidence for every deviating primary row, no more `unexplained` rows than today, and
`unexplained` at most 10 % of the comparable rows.

The rows checked are those of the committed ``figures/comparison.csv`` where the complete run
wrote them under the current rule; a committed comparison of an older rule is instead
recomputed from the committed ledger (``figures/cells/*.csv``, :mod:`scripts.ledger_compare`),
which holds no record of a reading added since, so the 10 % bound is checked on the complete
run's own comparison only.
"""

from __future__ import annotations

import csv
import importlib.util
from decimal import Decimal
from pathlib import Path

import pytest

from repro.engine.compare.causes import check_causes
from repro.engine.compare.verdict import RULE_ID, is_primary

ROOT = Path(__file__).resolve().parents[2]
FIGURES = ROOT / "figures"
JUDGED = ("match", "within_noise", "deviates")


def _unit(text: str) -> float:
    return float(10.0 ** Decimal(text).as_tuple().exponent)


def wider_matches(rows: list[dict]) -> list[str]:
    """Primary `match` rows farther from the printed number than its printed std or one unit
    of its printed precision.
    """
    bad = []
    for r in rows:
        if not is_primary(r) or r["verdict"] != "match" or r["reported"] == "NA":
            continue
        printed = r["reported"]
        std = float(r["reported_std"]) if r.get("reported_std") not in ("", None) else 0.0
        d = abs(float(r["reproduced"]) - float(printed))
        if d > max(std, _unit(printed)) * (1 + 1e-12):
            bad.append(f"{r['experiment']} {r['key']} {r['metric']}: |{r['reproduced']} - "
                       f"{printed}| > max({std}, {_unit(printed)})")
    return bad


def unexplained_share(rows: list[dict]) -> tuple[int, int]:
    primary = [r for r in rows if is_primary(r) and r["verdict"] in JUDGED]
    return sum(r.get("cause") == "unexplained" for r in primary if r["verdict"] == "deviates"), \
        len(primary)


def _current_rule(rows: list[dict]) -> bool:
    """Whether the complete run wrote ``rows`` under the current verdict rule."""
    return all(str(r.get("rule", "")).startswith(RULE_ID) for r in rows
               if is_primary(r) and r["verdict"] in JUDGED)


def _committed() -> list[dict]:
    with open(FIGURES / "comparison.csv", newline="") as f:
        return list(csv.DictReader(f))


def _from_ledger(tmp_path: Path) -> list[dict]:
    spec = importlib.util.spec_from_file_location("ledger_compare",
                                                  ROOT / "scripts" / "ledger_compare.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--figures", str(FIGURES), "--out", str(tmp_path)]) == 0
    with open(tmp_path / "comparison.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.xdist_group("ledger")
def test_the_shipped_comparison_meets_the_rule(tmp_path):
    committed = _committed()
    current = _current_rule(committed)
    rows = committed if current else _from_ledger(tmp_path)
    assert len([r for r in rows if is_primary(r)]) == 532
    assert wider_matches(rows) == []
    assert check_causes(rows) == []
    if current:
        unexplained, comparable = unexplained_share(rows)
        # a ratchet: the complete run (sitting 6, with the declared diagnostics) measured 27
        # unexplained of 303 comparable rows; a change that leaves more rows unexplained fails
        # here
        assert comparable == 303 and unexplained <= UNEXPLAINED_AT_MOST, (unexplained,
                                                                           comparable)


# the unexplained rows the shipped comparison has today (lower it when a row gets a cause)
UNEXPLAINED_AT_MOST = 27


def test_at_most_a_tenth_of_the_comparable_rows_are_unexplained():
    rows = _committed()
    assert _current_rule(rows), "the committed comparison is of an older rule"
    unexplained, comparable = unexplained_share(rows)
    assert unexplained <= 0.10 * comparable, (unexplained, comparable)


def test_the_checks_fail_on_what_they_guard():
    row = {"experiment": "e", "key": "k", "metric": "m", "reported": "0.27",
           "reported_std": "", "reproduced": "0.2811", "verdict": "match", "primary": "True",
           "reason": ""}
    assert wider_matches([row]) == ["e k m: |0.2811 - 0.27| > max(0.0, 0.01)"]
    assert wider_matches([{**row, "reproduced": "0.2799"}]) == []
    assert wider_matches([{**row, "reported_std": "0.02"}]) == []
    dev = {**row, "verdict": "deviates", "cause": "unexplained", "evidence": "tried: x"}
    assert unexplained_share([dev, row]) == (1, 2)
