"""Paper 002: Federated Learning with Relative Fairness (Scaff-PD-IA and five baselines).

Modules: ``ambiguity`` (Lambda_phi = P(w) and the dual step), ``models`` (the stacked MLP),
``problem`` (clients' data; minibatch and dropout draws), ``data`` (MNIST / CIFAR-10 clients),
``engine`` (the client-update engine: loop oracle and vectorized path), ``messages`` (what
crosses the wire), ``algorithms`` (the six methods), ``training`` (one Table 1 run),
``penguins`` and ``geometry`` (Figures 3, 1 and 2), ``experiments`` (registration), ``bench``.
Spec: ``shared/specs/relfair.md``.
"""
