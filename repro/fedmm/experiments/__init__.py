"""The experiments of paper 004, one module per paper item (registered on import by
:mod:`repro.engine.registry`): :mod:`.fig2`, :mod:`.fig4`, :mod:`.fig5` (MNIST -> MNIST-M),
:mod:`.table1` (Office-31, Tables 1 and 2) and the DANN step-size diagnostic :mod:`.dann_mu`
(not an item of the paper). :mod:`._cells` holds the shared grid and the MNIST run;
:mod:`.claims` (with :mod:`.budgets` and :mod:`.tables`), :mod:`.render` (with
:mod:`.render_curves`) and :mod:`.reproduce` are output only (outside the code identity).
"""

from __future__ import annotations

from repro.engine.report.report import Paper, declare_paper

# 004 prints "Copyright 2022 by the authors".
declare_paper(Paper("004", "FedMM: Saddle Point Optimization for Federated Adversarial Domain "
                           "Adaptation", "Shen et al.", 2022, "fedmm"))
