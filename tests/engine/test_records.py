"""Run records: JSON round trip (NaN included), atomic writes, keys that track what matters."""

from __future__ import annotations

import math

from repro.engine.records.records import RunRecord, load_record, record_key, save_record


def _rec(**kw):
    base = dict(experiment="x.y", config={"a": 1}, key="k", seed=7,
                metrics={"acc": 0.5, "gap": math.nan, "inf": math.inf},
                curves={"loss": [1.0, 0.5, math.nan]}, timings={"wall_s": 1.0})
    return RunRecord(**{**base, **kw})


def test_round_trip_keeps_nan_and_inf(tmp_path):
    rec = _rec()
    path = save_record(rec, tmp_path)
    back = load_record(path)
    assert back.metrics["acc"] == 0.5 and math.isnan(back.metrics["gap"])
    assert back.metrics["inf"] == math.inf and math.isnan(back.curves["loss"][2])
    assert back.curves["loss"][:2] == [1.0, 0.5]
    assert list(path.parent.iterdir()) == [path]  # no temporary file left behind


def test_missing_record_is_none(tmp_path):
    assert load_record(tmp_path / "nope.json") is None


def test_key_tracks_config_and_data():
    k = record_key("x.y", {"a": 1, "b": 2}, {"d/f": "00"})
    assert k == record_key("x.y", {"b": 2, "a": 1}, {"d/f": "00"})
    assert k != record_key("x.y", {"a": 1, "b": 3}, {"d/f": "00"})
    assert k != record_key("x.y", {"a": 1, "b": 2}, {"d/f": "01"})
    assert k != record_key("x.z", {"a": 1, "b": 2}, {"d/f": "00"})
