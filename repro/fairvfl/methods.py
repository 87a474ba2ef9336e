"""The table of Fair VFL's trained methods: name -> factory (specs/fairvfl.md §4.1, §7).

Every factory has the signature of :class:`~repro.fairvfl.fair_vfl.FairVFL`,
``(blocks, y, s, params=None, **options)``, and returns an algorithm with ``step`` / ``run`` /
``state`` / ``test_scores``. The names are those of the cell configs (``config["method"]``)::

    alg = build("FairVFL", blocks, y, s, FairVFLParams(eps=0.01))

The post-processing baselines EO and CEO (``eo``, ``ceo``, ``roc_eo``) are not in this table:
they train nothing, and a FedBCD cell applies them to its scores (specs/fairvfl.md §4.4).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from repro.fairvfl.fair_vfl import FairVFL, FairVFLParams
from repro.fairvfl.fedbcd import FedBCD


def fair_vfl(blocks, y, s, params: FairVFLParams | None = None, **options) -> FairVFL:
    """Fair VFL ([C] Alg. 1-2, [J] Alg. 1-3) with the fairness constraint on (``fair=True``)."""
    params = FairVFLParams() if params is None else params
    return FairVFL(blocks, y, s, dataclasses.replace(params, fair=True), **options)


METHODS: dict[str, Callable[..., FairVFL]] = {"FedBCD": FedBCD, "FairVFL": fair_vfl}


def build(name: str, blocks, y, s, params: FairVFLParams | None = None, **options) -> FairVFL:
    """The algorithm ``METHODS[name]`` on the party blocks, labels ``y`` and groups ``s``."""
    if name not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {name!r}")
    return METHODS[name](blocks, y, s, params, **options)
