"""REPORT.md's front page, one row per paper table and figure with its verdict in
words (from the rows' verdict counts), and 'k of N cells' where fewer cells were recorded.
"""

from __future__ import annotations

from collections import Counter

from repro.engine.experiment import CellResult, Experiment
from repro.engine.records.records import RunRecord
from repro.engine.report.overview import claim_words, front_page, verdict_words, write_overview


def test_verdict_words_from_counts():
    assert verdict_words(Counter(match=3, within_noise=2)) == "reproduced: all 5 rows"
    assert verdict_words(Counter(match=1)) == "reproduced: all 1 row"
    assert verdict_words(Counter(match=3, within_noise=1, deviates=4)) == "partly: 4 of 8 rows"
    assert verdict_words(Counter(deviates=6)) == "not reproduced: 0 of 6 rows"
    assert verdict_words(Counter(not_run=7), "Office-31 is not available") == (
        "not run: Office-31 is not available")
    # substitute-data rows and rows not run are not among the compared N, and are named
    assert verdict_words(Counter(match=11, substitute_data=66, not_run=7)) == (
        "reproduced: all 11 rows (66 more on substitute data, not compared; 7 not run)")
    assert verdict_words(Counter(substitute_data=4)).startswith(
        "not comparable: all 4 rows on substitute data")
    assert verdict_words(Counter()) == "no rows to compare"


def test_claim_words_from_counts():
    assert claim_words(Counter({"pass": 1})) == "reproduced: its one claim holds"
    assert claim_words(Counter({"pass": 2, "fail": 1})) == "partly: 2 of 3 claims hold"
    assert claim_words(Counter({"fail": 3})) == "not reproduced: 0 of 3 claims hold"
    assert claim_words(Counter({"pass": 2, "inconclusive": 1})) == (
        "reproduced: all 2 claims hold (1 inconclusive or not run)")
    assert claim_words(Counter({"not_run": 2}), "no records") == "not run: no records"
    assert claim_words(Counter({"inconclusive": 1, "not_run": 2})) == (
        "undecided: 1 inconclusive, 2 not run (of 3 claims)")
    assert claim_words(Counter()).startswith("drawn; nothing to compare")


def _exp(name, title, n_cells=3):
    return Experiment(name=name, title=title, paper="003",
                      cells=lambda s: [{"seed": i} for i in range(n_cells)],
                      run_cell=lambda c, ctx: CellResult({}))


def test_front_page_rows_sentences_and_partial_cells(tmp_path):
    t4 = _exp("constrfl.table4", "Table 4: LCQP")
    f1 = _exp("constrfl.fig1", "Figure 1: curves")
    demo = Experiment(name="core.demo", title="demo", paper="", cells=lambda s: [{"seed": 0}],
                      run_cell=lambda c, ctx: CellResult({}))
    recs = [RunRecord("constrfl.table4", {"seed": i}, f"k{i}", i) for i in range(2)]
    comparison = [{"experiment": "constrfl.table4", "table": "4", "verdict": v,
                   "scale": "paper", "reading": "as-written", "made_by": "abc123def456"}
                  for v in ("match", "within_noise", "deviates")]
    claims = [{"experiment": "constrfl.fig1", "verdict": "pass", "scale": "paper",
               "claim": "every client ends feasible", "measured": "largest loss 0.19",
               "reading": "as-written", "made_by": "kept: a876b2c0803e"},
              {"experiment": "core.demo", "verdict": "pass", "scale": "smoke"}]
    exps = {e.name: e for e in (t4, f1, demo)}
    lines = front_page(exps, {"constrfl.table4": ("paper", recs)}, comparison, claims)
    text = "\n".join(lines)
    assert ("| constrfl (003) | Table 4 | partly: 2 of 3 rows; from 2 of 3 cells | 1 of the 3 "
            "compared numbers lies outside the printed precision and the noise of the seeds. "
            "[rows](comparison.md) | — | paper | this code (records of abc123def456) |") in text
    assert ("| constrfl (003) | Figure 1 | reproduced: its one claim holds | Its one claim "
            "holds: “every client ends feasible”: largest loss 0.19. [claims](#constrfl-fig1) "
            "| 1 of 1 | paper "
            "| an earlier run, not remade here: commit a876b2c0803e |") in text
    assert "core" not in text.split("\n\n")[0]  # the demo is not a paper
    assert sum(ln.startswith("| constrfl") for ln in lines) == 2
    sentence = [ln for ln in lines if ln.startswith("- **")]
    assert len(sentence) == 1 and "of its 1 table, 1 is partly reproduced (2 of 3 compared " \
        "numbers match or lie within noise)" in sentence[0]
    assert "of its 1 figure, 1 is reproduced; 1 of 1 checked claims hold." in sentence[0]
    report = write_overview(exps, {"constrfl.table4": ("paper", recs)}, comparison, claims,
                            tmp_path).read_text()
    assert report.index("| paper | table / figure | answer") < report.index("## Counts")
    assert '<a id="constrfl-fig1"></a>' in report and report.rstrip().endswith(
        "the 20% smallest.")  # the glossary closes the page
    assert "2 of 3 cells recorded" in report
    assert "## core: the pipeline demo (not a paper)" in report
    assert "kept" not in report  # internal words replaced by what they mean
    assert "copied from an earlier run (commit a876b2c0803e)" in report


def test_the_committed_rows_give_each_answer_a_why_linked_to_its_section(tmp_path):
    """From the committed comparison and claims: every row's why is one sentence (whole words)
    whose link names an anchor that exists (a heading of comparison.md, or an experiment's
    entry on the page), and the glossary defines every term the page uses.
    """
    import re
    import shutil
    from pathlib import Path

    from repro.engine.compare.compare import section_link
    from repro.engine.records.kept import previous_claims, previous_comparison
    from repro.engine.registry import load_all
    from repro.engine.report.why import heading_anchors

    figures = Path(__file__).resolve().parents[2] / "figures"
    shutil.copy(figures / "comparison.md", tmp_path / "comparison.md")
    rows = previous_comparison(figures)
    claims = previous_claims(figures, section_link)
    report = write_overview(load_all(), {}, rows, claims, tmp_path).read_text()
    front = [ln for ln in report.split("\n\n")[2].splitlines()[2:]]
    assert len(front) >= 20
    table_anchors = set(heading_anchors(tmp_path / "comparison.md").values())
    page_anchors = set(re.findall(r'<a id="([^"]+)"></a>', report))
    for line in front:
        why = line.split(" | ")[3]
        text, link = why.rsplit(" [", 1)
        assert text.endswith((".", " …")), line
        target = re.fullmatch(r"(rows|claims)\]\(([^)]*)\)", link).group(2)
        if target.startswith("comparison.md#"):
            assert target.removeprefix("comparison.md#") in table_anchors, line
        else:
            assert target.removeprefix("#") in page_anchors, line
    glossary = report.split("## Glossary", 1)[1]
    for term in ("reading", "primary", "cell", "scale", "within noise", "substitute data",
                 "finding", "DEO", "AC / FR / HM", "LM", "LCQP", "NP", "R_AB", "[C] / [J]",
                 "earlier run, not remade here", "undecided", "compute time"):
        assert f"**{term}" in glossary or f" {term}" in glossary, term
    assert "Looked in:" not in report.split("## Counts")[0]


def test_accelerator_time_is_apart_and_a_committed_table_is_not_zero_cells():
    from repro.engine.report.front_page import _coverage
    from repro.engine.report.overview import _compute_time

    exp = _exp("fedmm.fig2", "Fig. 2", n_cells=9)
    gpu = [RunRecord("fedmm.fig4", {"device": "cuda", "seed": i}, f"g{i}", i,
                     timings={"wall_s": 3600.0}) for i in range(2)]
    cpu = [RunRecord("fedmm.fig4", {"seed": i}, f"c{i}", i, status="not_run") for i in range(3)]
    # accelerator cells recorded not_run here (no GPU on this machine) were made nowhere
    gpu += [RunRecord("fedmm.fig4", {"device": "cuda", "seed": i}, f"n{i}", i, status="not_run")
            for i in range(2, 9)]
    assert _compute_time([exp], gpu + cpu, 0) == (
        "none on the CPU (its cells here are not run); 2h00m00s on an accelerator (2 records "
        "made elsewhere)")
    judged = [{"verdict": "pass", "made_by": "kept: figures/fedmm_fig2.csv at 287c15f"}]
    assert _coverage(exp, ("paper", cpu), judged) == (
        "; judged from the committed per-seed table (no run records here)")
    assert _coverage(exp, ("paper", cpu), [{"verdict": "pass", "made_by": "abc"}]) == (
        "; from 0 of 9 cells")


def test_reasons_are_cut_at_words_and_raw_float_reprs_shortened():
    from repro.engine.report.why import first_sentence, plain_numbers, shorten

    long = "ADMM round " * 40
    cut = shorten(long, 50)
    assert cut.endswith(" …") and len(cut) <= 52 and cut[:-2].split()[-1] in ("ADMM", "round")
    assert shorten("short text", 50) == "short text"
    assert plain_numbers("cond = 9.347403948608557e+16, k = 35, mu 1.73e+14, 0.5") == (
        "cond = 9.347e+16, k = 35, mu 1.73e+14, 0.5")
    assert first_sentence("not run: data unavailable: Office-31 domain 'amazon' not found. "
                          "Looked in:\n - cache") == (
        "not run: data unavailable: Office-31 domain 'amazon' not found")
    assert first_sentence("failed: DivergenceError: x = 9.347403948608557e+16; see docs/a.md") \
        == "failed: DivergenceError: x = 9.347e+16"
