"""Fair vertical federated learning under a DEO constraint (papers 000 [C] and 001 [J]).

Decisions: docs/decisions.md#fairvfl; layout: ``docs/design.md``. Modules:

- ``problem``: the objective (loss, D of Definition 1, weights of [J](12), dual gradient)
  and ``VFLProblem`` (the party blocks, labels and groups an algorithm runs on);
- ``messages``: one type per arrow of the protocol; ``models``: per-party linear / MLP
  blocks; ``parties``: server, active and passive parties;
- one file per algorithm: ``fair_vfl`` (Fair VFL, [C] Alg. 1-2, [J] Alg. 1-3), ``fedbcd``
  (FedBCD, [C] ref. [7]), ``eo`` / ``ceo`` / ``roc_eo`` (post-processing baselines, sharing
  ``postprocessing``); ``methods/``: the trained methods, one module per method
  (``METHODS``, ``build``);
- ``data``: preprocessing and K = 6 blocks; ``instances``: small synthetic instances for tests,
  theory checks and benchmarks; ``evaluate`` and ``metric_readings``: test metrics and
  DFP/DFN readings; ``analysis``: constants of the convergence analysis; ``diagnostics``;
- ``experiments/``: one module per table and figure (the only part importing the engine).

Public names (imported on first use, see :mod:`repro.core.exports`)::

    from repro.fairvfl import FairVFL, FairVFLConfig, FedBCD, LinearBlock, MLPBlock, VFLProblem

    alg = FairVFL(VFLProblem(blocks, y, s), FairVFLConfig(eps=0.01), rng=seed)

``FedBCD`` is :class:`FairVFL` with ``fair=False`` (lam stays 0). A party's model is a block
bound to its own feature columns: :class:`LinearBlock`, :class:`MLPBlock`, or any object with
their methods (``init, forward, vjp, sq_norm, to_numpy``). Example: ``docs/usage.md``.
"""

from repro.core.exports import lazy_exports

_EXPORTS = {
    # Algorithm ([C] Alg. 1-2, [J] Alg. 1-3), its hyperparameters and observable state
    "FairVFL": "fair_vfl", "FairVFLConfig": "fair_vfl", "RoundState": "fair_vfl",
    "VFLRoundMessages": "fair_vfl", "FedBCD": "fedbcd", "VFLProblem": "problem",
    # the party model interface
    "LinearBlock": "models", "MLPBlock": "models",
    # the objective's groups, D and the dual gradient
    "FairnessGroups": "problem", "dual_gradient": "problem",
    # post-processing baselines (EO, CEO) and test metrics
    "eo_postprocess": "eo", "ceo_postprocess": "ceo",
    "eo_expected": "eo", "ceo_expected": "ceo", "roc_eo_expected": "roc_eo",
    "metrics_from_scores": "evaluate", "metrics_from_decisions": "evaluate",
    "metrics_from_predictor": "evaluate",
    # DFP/DFN readings of [J] Sec. 5.2
    "METRIC_READINGS": "metric_readings",
    # the trained methods, one module each (name -> repro.core.methods.Method)
    "METHODS": "methods",
    # the messages of the protocol
    "ActiveBroadcast": "messages", "PassiveBroadcast": "messages", "Upload": "messages",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

