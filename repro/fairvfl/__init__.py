"""Fair vertical federated learning under a DEO constraint (papers 000 [C] and 001 [J]).

Spec: ``shared/specs/fairvfl.md``. Modules: ``objective`` (loss, D, weights of [J](12)),
``messages`` (one type per arrow of the protocol), ``models`` (per-party linear / MLP blocks),
``parties`` (server, active and passive parties), ``algorithm`` (Fair VFL and FedBCD),
``baselines`` (EO / CEO post-processing LPs), ``data`` (preprocessing and K = 6 blocks),
``evaluate`` (test metrics), ``experiments`` (registered tables and figures).
"""
