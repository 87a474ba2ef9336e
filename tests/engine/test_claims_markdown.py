"""claims.md stays a valid table when a measured text contains '|' (e.g. "|R - ref|")."""

import re

from repro.engine.compare.compare import write_claims


def test_pipes_in_claim_cells_are_escaped(tmp_path):
    rows = [{"experiment": "x.fig", "claim": "a | b", "source": "Fig. 1",
             "measured": "max |R - ref| = 1e-7\nsecond line", "verdict": "pass",
             "scale": "paper"}]
    text = write_claims(rows, tmp_path).read_text()
    row = text.splitlines()[-1]
    assert len(re.findall(r"(?<!\\)\|", row)) == 11  # 10 columns -> 11 unescaped separators
    assert r"max \|R - ref\| = 1e-7 second line" in row


def _claim_rows(md: str) -> int:
    """The claim rows of claims.md, as `grep -c` counts them (table rows but the header)."""
    return sum(1 for ln in md.splitlines() if ln.startswith("| ")
               and not ln.startswith("| experiment | reading |"))


def test_claims_repeat_under_a_reading_only_where_it_changes_what_they_measure(tmp_path):
    from repro.engine.compare.compare import check_claims
    from repro.engine.experiment import Claim, Experiment

    def reads_loss(records):
        return True, f"loss {records[0].metrics['loss']:.3g}"

    exp = Experiment("x.t", "t", "p.txt", cells=lambda s: [], run_cell=lambda c, x: None,
                     claims=(Claim("loss claim", "S1", reads_loss),))
    from repro.engine.records.records import RunRecord

    def rec(loss):
        return RunRecord("x.t", {"a": 1}, "k", 0, metrics={"loss": loss})

    rows = check_claims({"x.t": exp}, {"x.t": ("paper", [rec(0.5)])},
                        {"x.t": {"same": ("paper", [rec(0.5)]), "other": ("paper", [rec(0.7)])}})
    assert [(r["reading"], r["measured"]) for r in rows] == [("as-written", "loss 0.5"),
                                                            ("other", "loss 0.7")]
    # rows kept from an earlier claims.csv (strings, repeats included) are thinned the same way
    from repro.engine.compare.compare import write_claims

    kept = [{**r, "primary": str(r["primary"]), "experiment": "x.t", "scale": "paper"}
            for r in rows] + [{**rows[0], "reading": "same", "primary": "False"}]
    md = write_claims(kept, tmp_path).read_text()
    assert _claim_rows(md) == 2 and "| x.t | same (alt.) |" not in md


def test_claim_counts_agree_in_console_claims_md_and_report(isolated, capsys):
    from repro.cli import main
    from repro.engine.compare.compare import counts_line, write_claims

    # rows read back from a claims.csv carry 'False' strings: never counted as primary
    rows = [{"experiment": "x.t", "claim": f"c{i}", "source": "S", "measured": "m",
             "verdict": v, "scale": "paper", "reading": r, "primary": p}
            for i, (v, r, p) in enumerate([("pass", "a", "True"), ("fail", "a", "True"),
                                           ("pass", "b", "False"), ("fail", "b", "False")])]
    line = counts_line(rows)
    assert line.startswith("4 claim rows: 2 under the primary readings (1 pass, 1 fail, ")
    assert line.endswith("2 under alternative readings that change the claim's inputs")
    md = write_claims(rows, isolated).read_text()
    assert _claim_rows(md) == 4 and line in md
    # the whole pipeline: the console's sentence, claims.md's rows and REPORT.md agree
    assert main(["compare", "--scale", "smoke"]) == 0
    out = capsys.readouterr().out
    said = re.search(r"^claims: ((\d+) claim rows.*)$", out, flags=re.M)
    figs = isolated / "figures"
    claims_md = (figs / "claims.md").read_text()
    assert int(said.group(2)) == _claim_rows(claims_md) > 0
    assert said.group(1) in claims_md and said.group(1) in (figs / "REPORT.md").read_text()
