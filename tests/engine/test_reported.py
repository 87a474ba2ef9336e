"""The reported CSVs are parsed in one place: the renderers' ``PaperValues``
and the comparison's ``load_reported`` read every printed number identically.
"""

from __future__ import annotations

import pytest

from repro.engine.compare.reported import PaperValues, load_reported, read_reported, reported_files


def test_both_readers_give_every_printed_number_alike():
    rows = load_reported()
    files = reported_files()
    assert len(rows) == sum(len(read_reported(p)) for p in files.values()) > 500
    by_stem: dict[str, PaperValues] = {}
    for row in rows:
        values = by_stem.setdefault(row.stem, PaperValues(row.stem))
        hit = values.get(row.metric, **dict(row.key))
        assert hit is not None, (row.stem, row.key, row.metric)
        text, std = hit
        assert text == row.text
        assert (None if std is None else float(std)) == row.std
    assert set(by_stem) == set(files)


def test_blanks_around_cells_are_stripped_for_both(tmp_path):
    (tmp_path / "toy_table1.csv").write_text(
        "paper_file,table,method,metric,value,std,line,cell\n"
        " 003_x.txt , 1 , FedAvg ,acc , 0.27 , 0.01 , 7 , 2 \n"
        "003_x.txt,1,SAFL,acc,0.30,,8,2\n")
    first, second = load_reported(tmp_path)
    assert (first.paper_file, first.table, first.key, first.metric, first.text, first.std) == (
        "003_x.txt", "1", (("method", "FedAvg"),), "acc", "0.27", 0.01)
    assert (first.line, first.cell, first.place) == (7, 2, "003_x.txt:7, cell 2")
    assert second.std is None and second.key_text == "method=SAFL"
    values = PaperValues("toy_table1", directory=tmp_path)
    assert values.get("acc", method="FedAvg") == ("0.27", "0.01")
    assert values.get("acc", method="SAFL") == ("0.30", None)
    assert values.get("acc", method="Scaffold") is None


def test_a_row_without_its_place_in_the_paper_is_refused(tmp_path):
    (tmp_path / "toy_table1.csv").write_text(
        "paper_file,table,method,metric,value,std,line,cell\n003_x.txt,1,FedAvg,acc,0.27,,,2\n")
    with pytest.raises(ValueError, match=r"toy_table1.csv:2: column 'line' is ''.*where the "
                                         r"paper prints it"):
        load_reported(tmp_path)
