"""Reasons derived, not written: a measured cause is cited only for rows of the
reading it was measured under, from current records, with its numbers recomputed from them.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from repro.engine.compare.cited import CitationRefused, Measured, cite, reading_of, under
from repro.engine.readings import Reading
from repro.engine.records.records import RunRecord

STEPS = Reading("steps", "local steps", basis="Alg. 2", primary=False)
EPOCHS = Reading("epochs", "local epochs", basis="App. J.2", overrides={"local_work": "epochs"},
                 applies_to=lambda c: c["method"] != "SAFL", primary=True)
READINGS = (EPOCHS, STEPS)


def _rec(method, seed, acc, epochs, experiment="relfair.table1", **metrics):
    config = {"task": "MNIST", "method": method, "seed": seed}
    if epochs and method != "SAFL":
        config["local_work"] = "epochs"
    return RunRecord(experiment, config, f"{method}-{seed}-{epochs}", seed,
                     metrics={"acc_all": acc, "R_AB": 1.0 + acc, "acc_worst20": acc,
                              "acc_best20": acc, "gini": 0.1, **metrics})


def _entry():
    return Measured("cause", STEPS, "relfair.table1",
                    lambda rs: {"acc_all": float(np.mean([r.metrics["acc_all"] for r in rs]))})


def test_a_record_is_under_the_reading_its_config_says():
    steps, epochs = _rec("FedAvg", 0, 0.9, False), _rec("FedAvg", 0, 0.9, True)
    assert under(steps, STEPS, READINGS) and not under(steps, EPOCHS, READINGS)
    assert under(epochs, EPOCHS, READINGS) and not under(epochs, STEPS, READINGS)
    safl = _rec("SAFL", 0, 0.8, True)   # no reading touches SAFL's cells: under both
    assert reading_of([safl], READINGS) == ["epochs", "steps"]


def test_cited_numbers_are_the_records_and_other_readings_are_refused():
    runs = [_rec("FedAvg", s, a, False) for s, a in enumerate((0.70, 0.72, 0.77))]
    text = cite(_entry(), runs, READINGS, runs)
    cited = float(re.search(r"acc_all (\S+) ", text).group(1))
    assert cited == float(f"{np.mean([0.70, 0.72, 0.77]):.3g}") == 0.73
    assert "reading steps" in text and text.endswith("docs/deviations.md#cause")
    other = [_rec("FedAvg", s, 0.9, True) for s in range(3)]
    with pytest.raises(CitationRefused, match="measured under reading steps; this row's runs "
                                              "are under epochs"):
        cite(_entry(), other, READINGS, runs)
    with pytest.raises(CitationRefused, match="another reading than steps"):
        cite(_entry(), runs, READINGS, other)
    stale = [dataclasses.replace(r, stale_note="stale (code abc)") for r in runs]
    with pytest.raises(CitationRefused, match="made by other code"):
        cite(_entry(), runs, READINGS, stale)
    with pytest.raises(CitationRefused, match="no records of relfair.table1"):
        cite(_entry(), runs, READINGS, [])
