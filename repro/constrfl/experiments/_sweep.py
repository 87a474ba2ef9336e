"""Hyperparameters as cell fields: a cell may name any key of its table's hyperparameter set
(``beta``, ``s_bar``, ``rho``, ...) to run that value in place of the paper's.

A cell that names none runs the paper's values and keeps the identity (and so the seed and the
records) it had before the fields existed; a sweep (of rho, say) is a list of cells that name
it, with no copy of ``run_cell``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["sweep_fields"]


def sweep_fields(defaults: Mapping[str, float], given: Mapping[str, Any], *,
                 only: bool = False) -> dict[str, float]:
    """``defaults`` with the keys of ``given`` that name one of them; with ``only``, just those
    keys (what a cell's config sets). A value that is not a real number raises ``ValueError``
    naming the field.
    """
    picked = {}
    for key in defaults:
        if key in given:
            value = given[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"cell field {key!r} must be a number, got {value!r}")
            picked[key] = float(value) if isinstance(defaults[key], float) else value
    if not only:
        unknown = sorted(set(given) - set(defaults))
        if unknown:
            raise ValueError(f"unknown hyperparameter(s) {unknown}; the set is {sorted(defaults)}")
    return picked if only else {**defaults, **picked}
