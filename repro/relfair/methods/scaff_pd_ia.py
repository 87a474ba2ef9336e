"""Scaff-PD-IA, the paper's method (Alg. 1 with Alg. 2 inlined): Lambda_phi(Delta_alpha,
Delta_alpha), App. J.2's alpha = phi = 0.2 (docs/decisions.md#relfair-algorithm).
"""

from __future__ import annotations

from repro.core.methods import Method, fields_of
from repro.relfair.federated import ClientProblem
from repro.relfair.methods._options import ambiguity
from repro.relfair.scaff_pd_ia import ScaffPDIA, ScaffPDIAConfig


def configure(problem: ClientProblem, **options) -> ScaffPDIAConfig:
    dual_set = ambiguity(problem.n, options)
    return ScaffPDIAConfig(dual_set, **options)


METHOD = Method("Scaff-PD-IA", ScaffPDIA, configure,
                "Scaff-PD-IA (the paper's method): Alg. 1 with Lambda_phi(Delta_alpha, "
                "Delta_alpha) (§5, App. J.2)",
                fields_of(ScaffPDIAConfig, exclude=("ambiguity",), extra=("alpha", "phi")))
