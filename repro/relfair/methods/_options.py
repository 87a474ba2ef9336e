"""What relfair's method files share (not a method: its name starts with ``_``): the paper's
common options and the ambiguity set of App. J.2.

Every method's ``configure(problem, **options)`` accepts the common options :data:`OPTIONS`
(so one call can configure any method, as the training cells do) and reads only those it uses
(:func:`used`); an option outside :data:`OPTIONS` is a ``ValueError`` naming it, never ignored.
An option not given keeps its default, written once: in the method's config dataclass
(``local_steps``, ``local_work``, ``tau``: :class:`repro.relfair.federated.LocalWork`,
:class:`repro.relfair.scaff_pd_ia.ScaffPDIAConfig`) or here (``alpha``, ``phi``: App. J.2's
0.2 and 0.2, :data:`ALPHA`, :data:`PHI`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from repro.relfair.problem import RelativeAmbiguitySet

__all__ = ["ALPHA", "OPTIONS", "PHI", "ambiguity", "used"]

# alpha, phi of Lambda_phi(Delta_alpha, Delta_alpha); local_steps J; local_work "epochs" or
# "steps"; tau, the server step of the Scaffold-type methods (the server-step ablation)
OPTIONS = ("alpha", "phi", "local_steps", "local_work", "tau")
ALPHA, PHI = 0.2, 0.2  # App. J.2: "alpha = 0.2", "phi = 0.2"


def used(method: str, options: Mapping[str, Any], *names: str) -> dict[str, Any]:
    """The given ``options`` among ``names`` (those ``method`` reads); an unknown option raises
    ``ValueError`` naming it and listing :data:`OPTIONS`.
    """
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ValueError(f"{method}: unknown option(s) {unknown}; the options of relfair's "
                         f"methods are {OPTIONS}")
    return {k: options[k] for k in names if k in options}


def ambiguity(n: int, given: dict[str, Any], *, phi: float | None = None
              ) -> RelativeAmbiguitySet:
    """``Lambda_phi(Delta_alpha, Delta_alpha)`` over ``n`` clients, ``alpha`` (and ``phi``,
    unless the method fixes it: ``phi = 0`` gives ``Delta_alpha``, the DRO set of SAFL, DRFA
    and Scaff-PD) taken out of ``given`` (what :func:`used` returned), App. J.2's
    :data:`ALPHA` and :data:`PHI` where not given.
    """
    alpha = given.pop("alpha", ALPHA)
    phi = given.pop("phi", PHI) if phi is None else phi
    return RelativeAmbiguitySet(n, alpha, alpha, phi)
