"""Fair vertical federated learning under a DEO constraint (papers 000 [C] and 001 [J]).

Spec: ``shared/specs/fairvfl.md``. Modules: ``objective`` (loss, D, weights of [J](12)),
``messages`` (one type per arrow of the protocol), ``models`` (per-party linear / MLP blocks),
``parties`` (server, active and passive parties), ``algorithm`` (Fair VFL and FedBCD),
``baselines`` (EO / CEO post-processing LPs), ``data`` (preprocessing and K = 6 blocks),
``evaluate`` (test metrics), ``experiments`` (registered tables and figures).

Public names (imported on first use, see :mod:`repro.core.exports`)::

    from repro.fairvfl import FairVFL, FairVFLParams, FedBCD, LinearBlock, MLPBlock

``FedBCD`` is :class:`FairVFL` with ``fair=False`` (lam stays 0). A party's model is a block
bound to its own feature columns: :class:`LinearBlock`, :class:`MLPBlock`, or any object with
their methods (``init, forward, vjp, sq_norm, to_numpy``). Example: ``docs/usage.md``.
"""

import dataclasses

from repro.core.exports import lazy_exports

_EXPORTS = {
    # Algorithm ([C] Alg. 1-2, [J] Alg. 1-3), its hyperparameters and observable state
    "FairVFL": "algorithm", "FairVFLParams": "algorithm", "RoundState": "algorithm",
    "RoundMessages": "algorithm",
    # the party model interface
    "LinearBlock": "models", "MLPBlock": "models",
    # the objective's groups, D and the dual gradient
    "FairnessGroups": "objective", "dual_gradient": "objective",
    # post-processing baselines (EO, CEO) and test metrics
    "eo_postprocess": "baselines", "ceo_postprocess": "baselines",
    "eo_expected": "baselines", "ceo_expected": "baselines", "roc_eo_expected": "roc_eo",
    "metrics_from_scores": "evaluate", "metrics_from_decisions": "evaluate",
    "metrics_from_predictor": "evaluate",
    # DFP/DFN readings of [J] §5.2 and the registered diagnostics (issue #16)
    "METRIC_READINGS": "metric_readings", "DIAGNOSTICS": "diagnostics",
    # the messages of the protocol
    "ActiveBroadcast": "messages", "PassiveBroadcast": "messages", "Upload": "messages",
}
__all__ = sorted([*_EXPORTS, "FedBCD"])
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


def FedBCD(blocks, y, s, params=None, **options):
    """FedBCD ([C] ref. [7], §4.1): :class:`FairVFL` with ``fair=False``, so lam stays 0 and
    every sample weighs 1/n. ``params`` (default ``FairVFLParams()``) and ``options``
    (``init_generators``, ``rng``) are those of :class:`FairVFL`."""
    from repro.fairvfl.algorithm import FairVFL, FairVFLParams

    params = FairVFLParams() if params is None else params
    return FairVFL(blocks, y, s, dataclasses.replace(params, fair=False), **options)
