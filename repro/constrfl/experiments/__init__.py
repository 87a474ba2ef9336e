"""The constrfl experiments, one module per paper item (discovered by
:func:`repro.engine.registry.load_all`, which imports every module of this package).

- :mod:`.table1` (Neyman-Pearson, Sec. 5.1), :mod:`.fig1` (its per-client curves) and
  :mod:`.table3` (the data set sizes) share the cell code of :mod:`._np`;
- :mod:`.table2` (fairness, Sec. 5.2) and :mod:`.fig2` share :mod:`._fair`;
- :mod:`.table4` (the LCQP of App. E.2).

Output only (not part of a record's code identity): :mod:`.render` (tables and figures),
:mod:`.reproduce` (the rows compared with ``repro/reported/``), :mod:`.claims`.
"""

from __future__ import annotations

from repro.engine.report.report import Paper, declare_paper

PAPER = "003_733a787503856876.txt"

declare_paper(Paper("003", "Federated Learning with Convex Global and Local Constraints",
                    "He, Peng and Sun", 2024, "constrfl"))
