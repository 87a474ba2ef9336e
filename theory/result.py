"""The evidence a theory check returns."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

__all__ = ["CheckResult", "jsonable"]


@dataclass
class CheckResult:
    """Outcome of one claim checked on many instances.

    Attributes
    ----------
    name : str
        Registry name, ``"<module>.<claim>"`` (e.g. ``"projections.capped_simplex"``).
    claim : str
        The statement checked, in words.
    paper : str
        Paper id and short name, e.g. ``"002 relfair"``.
    equation : str
        Where the claim sits in the paper (equation, proposition, algorithm line).
    instances : int
        Number of random or constructed instances tried.
    worst_margin : float
        Sign convention: for every criterion the margin is ``tolerance - error`` (or
        ``quantity - bound`` for an inequality ``quantity >= bound``); ``worst_margin`` is the
        smallest over criteria and instances. ``>= 0`` means every instance passed, ``> 0``
        passed with room, ``< 0`` failed; ``-inf`` when the check raised.
    ground_truth : dict
        How the reference values were obtained: ``solver``, ``solver_version``,
        ``cvxpy_version``, ``settings`` and ``statuses`` (status -> count) for cvxpy checks;
        ``{"solver": "closed form", ...}`` otherwise.
    passed : bool
        ``worst_margin >= 0`` and every reference solve reported ``"optimal"``.
    details : dict
        Per-criterion tolerances/errors, the worst instance, a counterexample when failed.
    seconds : float
        Wall time of the check (filled by the harness).
    seed : int or None
        The seed the harness passed (derived from ``name``, see ``theory.registry.seed_for``).
    size : str or None
        ``"small"`` or ``"default"``.
    """

    name: str
    claim: str
    paper: str
    equation: str
    instances: int
    worst_margin: float
    ground_truth: dict
    passed: bool
    details: dict = field(default_factory=dict)
    seconds: float = 0.0
    seed: int | None = None
    size: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON dictionary: numpy values become Python ones, non-finite floats strings."""
        return {f.name: jsonable(getattr(self, f.name)) for f in fields(self)}


def jsonable(value: Any) -> Any:
    """Convert numpy scalars/arrays, tuples and non-finite floats into strict-JSON values."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else str(v)
    if value is None or isinstance(value, str):
        return value
    return repr(value)
