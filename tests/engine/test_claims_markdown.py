"""claims.md stays a valid table when a measured text contains '|' (e.g. "|R - ref|")."""

import re

from repro.engine.compare import write_claims


def test_pipes_in_claim_cells_are_escaped(tmp_path):
    rows = [{"experiment": "x.fig", "claim": "a | b", "source": "Fig. 1",
             "measured": "max |R - ref| = 1e-7\nsecond line", "verdict": "pass",
             "scale": "paper"}]
    text = write_claims(rows, tmp_path).read_text()
    row = text.splitlines()[-1]
    assert len(re.findall(r"(?<!\\)\|", row)) == 10  # 9 columns -> 10 unescaped separators
    assert r"max \|R - ref\| = 1e-7 second line" in row
