"""Fair VFL's trained methods, one module per method (docs/decisions.md#fairvfl-fedbcd,
docs/decisions.md#fairvfl-hyperparameters).

Each module defines ``METHOD = Method(name, algorithm, configure, summary)``
(:mod:`repro.core.methods`); the names are those of the cell configs (``config["method"]``)
and of the papers' tables. A new module here is a new library method, listed by ``repro list``
and run by no experiment until one names it in its ``methods``::

    from repro.fairvfl.methods import build
    alg = build("FairVFL", VFLProblem(blocks, y, s), rng=seed, eps=0.01, roles="journal")

Each declares the options it reads, :data:`OPTIONS` (the fields of
:class:`~repro.fairvfl.fair_vfl.FairVFLConfig` but ``fair``, which the method sets); the
defaults are those of the config. The post-processing baselines EO and CEO (``eo``, ``ceo``,
``roc_eo``) are not methods here: they train nothing, and a FedBCD cell applies them to its
scores (docs/decisions.md#fairvfl-pooling).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from repro.core.methods import Method, discover
from repro.core.methods import build as _build
from repro.fairvfl.methods._options import OPTIONS
from repro.fairvfl.problem import VFLProblem

__all__ = ["METHODS", "OPTIONS", "build", "tiny_problem"]

METHODS: dict[str, Method] = discover(__name__, __path__)


def build(name: str, problem: VFLProblem, **kwargs: Any):
    """The algorithm of method ``name`` on ``problem``; ``kwargs``: ``init``, ``rng``,
    ``backend`` and the options the methods declare (an unknown name raises ``ValueError``
    listing the known ones).
    """
    return _build(METHODS, name, problem, **kwargs)


def tiny_problem(seed: int = 0) -> VFLProblem:
    """A synthetic instance (docs/decisions.md#fairvfl-theory-instances): 80 rows, 6 columns over
    3 linear parties, deterministic in ``seed``; a round takes well under a millisecond.
    """
    from repro.fairvfl.instances import linear_blocks, synthetic_instance

    X, y, s, blocks = synthetic_instance(np.random.default_rng(seed), n=80, m=6, K=3)
    return VFLProblem(linear_blocks(X, blocks), y, s)
