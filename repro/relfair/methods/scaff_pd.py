"""Scaff-PD (Yu et al. 2023) as App. J.2 runs it: Scaff-PD-IA's Alg. 1 with Lambda = Delta_alpha
(phi = 0; docs/decisions.md#relfair-scaff-pd-regulariser).
"""

from __future__ import annotations

from repro.core.methods import Method, fields_of
from repro.relfair.federated import ClientProblem
from repro.relfair.methods._options import ambiguity
from repro.relfair.scaff_pd_ia import ScaffPDIA, ScaffPDIAConfig


def configure(problem: ClientProblem, **options) -> ScaffPDIAConfig:
    dual_set = ambiguity(problem.n, options, phi=0.0)
    return ScaffPDIAConfig(dual_set, **options)


METHOD = Method("Scaff-PD", ScaffPDIA, configure,
                "Scaff-PD: Alg. 1 with Lambda = Delta_alpha (phi = 0; App. J.2)",
                fields_of(ScaffPDIAConfig, exclude=("ambiguity",), extra=("alpha",)))
