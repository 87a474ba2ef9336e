"""FedBCD ([C] ref. [7], §4.1 of specs/fairvfl.md): Fair VFL without the fairness constraint.

FedBCD is the round of :class:`~repro.fairvfl.fair_vfl.FairVFL` with ``fair=False``: the dual
variable ``lam`` stays 0, so every sample weighs ``w_i = 1/n`` in [J](12) and the primal steps
are those of [C](11) / [J](14) on the regularized logistic loss alone.
"""

from __future__ import annotations

import dataclasses

from repro.fairvfl.fair_vfl import FairVFL, FairVFLParams


def FedBCD(blocks, y, s, params: FairVFLParams | None = None, **options) -> FairVFL:
    """FedBCD ([C] ref. [7], §4.1): :class:`FairVFL` with ``fair=False``, so lam stays 0 and
    every sample weighs 1/n. ``params`` (default ``FairVFLParams()``) and ``options``
    (``init_generators``, ``rng``) are those of :class:`FairVFL`.
    """
    params = FairVFLParams() if params is None else params
    return FairVFL(blocks, y, s, dataclasses.replace(params, fair=False), **options)
