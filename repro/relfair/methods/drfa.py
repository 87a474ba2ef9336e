"""DRFA (Deng et al. 2020) with full participation as App. J.2 runs it: J local epochs (or
steps), snapshot-loss dual ascent on Delta_alpha (docs/decisions.md#relfair-drfa).
"""

from __future__ import annotations

from repro.core.methods import Method, fields_of
from repro.relfair.drfa import DRFA, DRFAConfig
from repro.relfair.federated import ClientProblem
from repro.relfair.methods._options import ambiguity


def configure(problem: ClientProblem, **options) -> DRFAConfig:
    dual_set = ambiguity(problem.n, options, phi=0.0)
    return DRFAConfig(dual_set, **options)


METHOD = Method("DRFA", DRFA, configure,
                "DRFA, full participation: local SGD, dual ascent on Delta_alpha at a "
                "snapshot (App. J.2)",
                fields_of(DRFAConfig, exclude=("ambiguity",), extra=("alpha",)))
