"""Stochastic-AFL (Mohri et al. 2019) as App. J.2 runs it: one minibatch gradient step per round
(no local work, under every reading of J), projected dual ascent on Delta_alpha
(docs/decisions.md#relfair-safl).
"""

from __future__ import annotations

from repro.core.methods import Method, fields_of
from repro.relfair.federated import ClientProblem
from repro.relfair.methods._options import ambiguity
from repro.relfair.safl import SAFL, SAFLConfig


def configure(problem: ClientProblem, **options) -> SAFLConfig:
    dual_set = ambiguity(problem.n, options, phi=0.0)
    return SAFLConfig(dual_set, **options)


METHOD = Method("SAFL", SAFL, configure,
                "Stochastic-AFL: one gradient step per round, dual ascent on Delta_alpha "
                "(App. J.2)",
                fields_of(SAFLConfig, exclude=("ambiguity",), extra=("alpha",)))
