"""FedBCD ([C] ref. [7], docs/decisions.md#fairvfl-fedbcd): Fair VFL without the fairness
constraint.

FedBCD is the round of :class:`~repro.fairvfl.fair_vfl.FairVFL` with ``fair=False``: the dual
variable ``lam`` stays 0, so every sample weighs ``w_i = 1/n`` in [J](12) and the primal steps
are those of [C](11) / [J](14) on the regularized logistic loss alone.
"""

from __future__ import annotations

import dataclasses

from repro.fairvfl.fair_vfl import FairVFL, FairVFLConfig
from repro.fairvfl.problem import VFLProblem


class FedBCD(FairVFL):
    """FedBCD ([C] ref. [7], docs/decisions.md#fairvfl-fedbcd): :class:`FairVFL` with
    ``fair=False``, so lam stays 0 and every sample weighs 1/n. ``config`` (default
    ``FairVFLConfig(fair=False)``) is used with ``fair=False`` whatever its ``fair`` (its ``eps``
    and ``c`` then act on nothing); ``init``, ``rng`` and ``backend`` are those of :class:`FairVFL`.
    """

    def __init__(self, problem: VFLProblem, config: FairVFLConfig | None = None, *,
                 init=None, rng: int | None = None, backend: str = "vectorized") -> None:
        config = FairVFLConfig(fair=False) if config is None else config
        if not isinstance(config, FairVFLConfig):
            raise ValueError(f"config must be a FairVFLConfig, got {type(config).__name__}")
        super().__init__(problem, dataclasses.replace(config, fair=False), init=init, rng=rng,
                         backend=backend)
