"""What relfair's method files share (not a method: its name starts with ``_``): the ambiguity
set of App. J.2 built from the options ``alpha`` and ``phi``.

Each method declares the options it reads (:class:`repro.core.methods.Method`'s ``options``:
its config's fields, plus ``alpha`` and ``phi`` where it builds its ambiguity set from them);
one call may pass the options of every method (the training cells do), each method receiving
its own. An option not given keeps its default, written once: in the method's config dataclass
(``local_steps``, ``local_work``: :class:`repro.relfair.federated.LocalWork`; ``tau``:
:class:`repro.relfair.scaff_pd_ia.ScaffPDIAConfig`) or here (``alpha``, ``phi``: App. J.2's
0.2 and 0.2, :data:`ALPHA`, :data:`PHI`).
"""

from __future__ import annotations

from typing import Any

from repro.relfair.problem import RelativeAmbiguitySet

__all__ = ["ALPHA", "PHI", "ambiguity"]

ALPHA, PHI = 0.2, 0.2  # App. J.2: "alpha = 0.2", "phi = 0.2"


def ambiguity(n: int, given: dict[str, Any], *, phi: float | None = None
              ) -> RelativeAmbiguitySet:
    """``Lambda_phi(Delta_alpha, Delta_alpha)`` over ``n`` clients, ``alpha`` (and ``phi``,
    unless the method fixes it: ``phi = 0`` gives ``Delta_alpha``, the DRO set of SAFL, DRFA
    and Scaff-PD) taken out of ``given`` (the method's options), App. J.2's :data:`ALPHA` and
    :data:`PHI` where not given.
    """
    alpha = given.pop("alpha", ALPHA)
    phi = given.pop("phi", PHI) if phi is None else phi
    return RelativeAmbiguitySet(n, alpha, alpha, phi)
