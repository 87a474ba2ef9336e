"""Paper 002's items as registered experiments (docs/decisions.md#relfair-table1,
docs/decisions.md#relfair-figures), one module per item.

- ``table1``: ``relfair.table1``, six methods x {MNIST, CIFAR10} x seeds (CIFAR-10 cells are
  ``not_run`` here: no copy of the data is reachable, docs/deviations.md#data-unavailable);
- ``ablation_server_step``: ``relfair.ablation_server_step`` (not a paper item: tau = 0.1);
- ``fig1``: the eight-point toy of App. A (verified numbers, docs/decisions.md#relfair-figures);
- ``fig2``: the hexagons Lambda_phi(Delta_0.5^2, Delta_0.5^2);
- ``fig3``: Penguins, R(theta*_phi) over phi by exhaustive grid search
  (docs/decisions.md#relfair-penguins-values);
- ``fig4``: transformed Lorenz curves of the MNIST client losses (seed 0).

Shared: ``_cells`` (Table 1's cells, readings and notes), ``_training`` (one training run and
its randomness shared across methods). Output only (outside the code identity of the records):
``render`` (tables and figures), ``claims`` (the paper's qualitative statements),
``reproduce`` (Table 1's numbers against the reported CSV).
"""

from __future__ import annotations

from repro.engine.report.report import Paper, declare_paper

declare_paper(Paper("002", "Federated Learning with Relative Fairness", "Nakakita et al.", 2024,
                    "relfair"))
