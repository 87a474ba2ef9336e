"""Scaffold (Karimireddy et al. 2020) as App. J.2 runs it: Scaff-PD-IA's Alg. 1 with the
singleton ambiguity set {1/n} (alpha = 1, phi = 0; docs/decisions.md#relfair-scaffold).
"""

from __future__ import annotations

from repro.core.methods import Method, fields_of
from repro.relfair.federated import ClientProblem
from repro.relfair.problem import RelativeAmbiguitySet
from repro.relfair.scaff_pd_ia import ScaffPDIA, ScaffPDIAConfig


def configure(problem: ClientProblem, **options) -> ScaffPDIAConfig:
    return ScaffPDIAConfig(RelativeAmbiguitySet(problem.n, 1.0, 1.0, 0.0),
                           **options)


METHOD = Method("Scaffold", ScaffPDIA, configure,
                "Scaffold: Alg. 1 with Lambda = {1/n} (App. J.2)",
                fields_of(ScaffPDIAConfig, exclude=("ambiguity",)))
