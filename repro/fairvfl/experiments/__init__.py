"""The Fair VFL experiments (docs/decisions.md#fairvfl-hyperparameters,
docs/decisions.md#fairvfl-figures): three tables and four figures.

One module per paper item, each registering one experiment:

| module          | name                     | source      | model | roles          | T (paper) |
|-----------------|--------------------------|-------------|-------|----------------|-----------|
| conf_table1     | fairvfl.conf_table1      | [C] Table I | LM    | all active     | 2000      |
| conf_fig1       | fairvfl.conf_fig1        | [C] Fig. 1  | LM    | all active     | 2000      |
| conf_fig2       | fairvfl.conf_fig2        | [C] Fig. 2  | LM    | all active     | 2000      |
| journal_table1  | fairvfl.journal_table1   | [J] Table 1 | LM    | 1 act. + 5 pas.| 10000     |
| journal_fig1    | fairvfl.journal_fig1     | [J] Fig. 1  | LM    | 1 act. + 5 pas.| 10000     |
| journal_table2  | fairvfl.journal_table2   | [J] Table 2 | MLP   | 1 act. + 5 pas.| 1000      |
| journal_fig2    | fairvfl.journal_fig2     | [J] Fig. 2  | MLP   | 1 act. + 5 pas.| 1000      |

Shared pieces: ``_cells`` (the cell grids), ``_run`` (the cell runner), ``_records`` (the
record query of the output code); output only (outside the code identity): ``claims``
(docs/decisions.md#fairvfl-figures), ``render`` and ``reproduce``
(docs/decisions.md#fairvfl-tables).
``smoke`` follows docs/decisions.md#fairvfl-cost (ADULT subsample of 5,000 rows, seeds {0, 1},
shorter runs).
"""

from __future__ import annotations

from repro.engine.report.report import Paper, declare_paper

# Titles as the paper files print them (papers/000_*, 001_*). 001's text begins at its
# abstract: its title and year are those of the arXiv entry (2109.08344, 2021) whose abstract
# 001 reproduces word for word.
declare_paper(Paper("000", "Achieving Model Fairness in Vertical Federated Learning",
                    "Liu et al.", 2021, "fairvfl", "[C] conference version"))
declare_paper(Paper("001", "Achieving Model Fairness in Vertical Federated Learning",
                    "Liu et al.", 2021, "fairvfl", "[J] journal version"))
