"""The README's counts are kept true: the papers and paper files it names are the registered
ones, the first code block is the one a newcomer runs (with its duration and the smoke variant),
and it gives no count of tests or cells that would go stale.
"""

from __future__ import annotations

import re
from pathlib import Path

from repro.engine.report.report import known_papers

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()
WORDS = {3: "three", 4: "four", 5: "five", 6: "six"}


def test_the_paper_counts_are_the_registered_ones():
    papers = known_papers()
    files, packages = {p.file_id for p in papers}, {p.package for p in papers}
    assert (f"Reproduces {WORDS[len(packages)]} federated-learning papers "
            f"({WORDS[len(files)]} paper files)") in README
    table = [ln for ln in README.splitlines() if re.match(r"\| 00\d \|", ln)]
    assert sorted(ln.split(" | ")[0].strip("| ") for ln in table) == sorted(files)


def test_the_first_block_runs_everything_says_how_long_and_the_smoke_variant():
    block = README.split("```bash\n", 1)[1].split("```", 1)[0]
    lines = [ln for ln in block.splitlines() if ln.startswith("make ")]
    assert [ln.split()[1] for ln in lines] == ["setup", "paper-figures", "test"]
    figures = block.split("make paper-figures", 1)[1].split("make test", 1)[0]
    assert re.search(r"\b\d+ h\b", figures) and "SCALE=smoke" in figures
    assert "min" in lines[-1]


def test_no_count_of_tests_or_cells_that_would_go_stale():
    assert not re.search(r"\b\d[\d,]* (tests|cells|checks)\b", README)
