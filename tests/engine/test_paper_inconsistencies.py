"""The papers' inconsistencies the comparison names, computed from the printed numbers of
``repro/reported/`` (each checked against the papers' texts by test_reported_places.py), and
the noise model every compared table declares.
"""

from __future__ import annotations

import pytest

from repro.engine.compare.causes import inconsistencies, paper_notes
from repro.engine.compare.noise import declared
from repro.engine.compare.reported import load_reported
from repro.engine.registry import load_all


@pytest.fixture(scope="module")
def notes():
    load_all()   # the paper packages declare their inconsistencies and noise models
    return paper_notes(load_reported())


def test_fedmm_table2s_fedsgda_cdan_average_is_not_the_mean_of_its_cells(notes):
    key = ("004_c8bdd02f5ea2bb8e.txt", "Table 2", "task=Average;method=FedSGDA;da_method=CDAN",
           "comm_rounds_x100")
    (sentence, explains, value), = notes[key]
    assert "printed 65.1 is not the mean of its six printed cells (78, 49, 16, 13, 95, 85: " \
           "56.0)" in sentence and explains and value is None
    # the glyph of W->D FedAvgGDA-CDAN: the printed average 17.7 implies 6 x 17.7 - 99 = 7.2
    gap = ("004_c8bdd02f5ea2bb8e.txt", "Table 2", "task=W->D;method=FedAvgGDA;da_method=CDAN",
           "comm_rounds_x100")
    assert "implies 7.2 ± 2.8" in notes[gap][0][0]
    # every other average of both tables is the mean of its cells within their rounding
    averages = [k for k in notes if "task=Average" in k[2]]
    assert averages == [key]


def test_j_prints_one_model_twice_on_adult(notes):
    # [J] Table 1 (LM): FedBCD 85.06, FairVFL(0.5) 83.08: offset 1.98; Table 2: 85.55 - 83.15
    for table, row, implied in (("Table 1", "epsilon=0.001", 81.41 + 1.98),
                                ("Table 2", "epsilon=0.01", 81.98 + 2.40)):
        key = ("001_70acc2f5fa8635c9.txt", table,
               f"dataset=adult;model={'LM' if table == 'Table 1' else 'MLP'};method=FairVFL;"
               f"{row}", "ACC_pct")
        (sentence, explains, value), = notes[key]
        assert explains and value == pytest.approx(implied, abs=1e-9)
        assert f"implies {implied:.2f}" in sentence


def test_every_compared_table_declares_its_noise_model_from_the_text():
    load_all()
    models = declared()
    stems = {r.stem for r in load_reported()}
    assert set(models) == stems
    c = models["fairvfl_conf_table1"]
    assert (c.n_paper, c.runs_stated, c.printed_std) == (5, True, "runs")
    assert "5 random runs" in c.basis
    for stem in ("fairvfl_journal_table1", "fairvfl_journal_table2", "relfair_table1",
                 "fedmm_table1", "fedmm_table2", "constrfl_table3"):
        assert (models[stem].n_paper, models[stem].runs_stated) == (1, False), stem
    for stem in ("constrfl_table1", "constrfl_table2", "constrfl_table4"):
        assert (models[stem].n_paper, models[stem].runs_stated) == (10, True), stem
    assert {i.stem for i in inconsistencies()} >= {"fedmm_table2", "fairvfl_journal_table1",
                                                   "fairvfl_journal_table2"}
