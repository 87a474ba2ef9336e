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
    commit : str
        The checkout's commit the check ran at (``+dirty`` when the package's files differed
        from it), filled by ``python -m theory``; ``""`` in files written before it was kept.
    measured : float or None
        Where a theorem bounds a measured quantity: the worst (closest to the bound) measured
        value over the instances.
    bound : float or None
        The theorem's own bound on ``measured`` at that instance (not the exact value).
    exact : float or None
        The exact value of the bounded quantity where one is computable (e.g. the spectral
        rate of a linear iteration), held against both ``measured`` and ``bound``.
    looseness : float or None
        How loose the theorem's bound is at the closest instance (``bound / measured`` for an
        upper bound on a positive quantity; the check's docstring says which ratio).
    closest : dict
        The instance that came closest to violating the claim, with its numbers.
    applies : bool
        ``False`` when the theorem's conditions do not hold where the paper uses it (e.g. a
        step-size condition the experiments violate): the check then reports a *finding*, not
        a pass, whatever ``worst_margin`` says; ``finding`` says what was found.
    finding : str or None
        One sentence: what the check found, where it is more than pass/fail.
    nontrivial : float or None
        Share (0 to 1) of the instances where the statement was non-trivial: the constraint
        active, the right-hand side negative where the lemma bites, the bound below what holds
        for any iterate. ``None`` means not reported. ``0``
        means nothing was tested: the check then fails (``passed`` is set ``False``).
    diverged : bool
        Every run of the check diverged, so nothing was measured: verdict ``"diverged"``, a
        failure with ``worst_margin = -inf`` (never the ``+inf`` of a max over no runs).
    criteria : dict
        Worst margin per criterion, each named after the statement it tests
        (:class:`theory.evidence.Evidence`). A negative (or NaN) one fails the check whatever
        else it says, and ``worst_margin`` is at most it.
    terms : dict
        The statement's terms: ``{name: {predicate, threshold, active, instances, max}}``. A
        term active on no instance fails the check.
    paths : list
        The package code paths the check drove (keys of :mod:`theory.paths`).
    paper_setting : dict
        The instance run at the paper's own hyperparameters and what the statement gave there.
    paper_finding : str or None
        The statement fails at the paper's own hyperparameters (its counter-example): the
        verdict is ``"finding"`` when every criterion passed on the check's instances.

    Normalisation (``__post_init__``, so every check gets it without code of its own): a
    result that did not pass never carries a margin ``>= 0`` or NaN. Where the check's own
    criteria left one (a failure by a count, by ``nontrivial = 0`` or by divergence), the
    margin becomes ``-inf`` and ``details["margin_before_normalisation"]`` keeps the check's
    value and ``details["failed_because"]`` the reason.
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
    commit: str = ""
    measured: float | None = None
    bound: float | None = None
    exact: float | None = None
    looseness: float | None = None
    closest: dict = field(default_factory=dict)
    applies: bool = True
    finding: str | None = None
    nontrivial: float | None = None
    diverged: bool = False
    criteria: dict = field(default_factory=dict)
    terms: dict = field(default_factory=dict)
    paths: list = field(default_factory=list)
    paper_setting: dict = field(default_factory=dict)
    paper_finding: str | None = None

    def __post_init__(self) -> None:
        reasons = []
        if self.diverged:
            reasons.append("every run diverged (nothing measured)")
        if self.nontrivial is not None:
            share = float(self.nontrivial)
            if not 0.0 <= share <= 1.0:  # NaN fails both comparisons
                raise ValueError(f"{self.name}: nontrivial must be a share in [0, 1], got "
                                 f"{self.nontrivial!r}")
            if share == 0.0:
                reasons.append("no instance made the statement non-trivial (nontrivial = 0)")
        idle = [name for name, t in (self.terms or {}).items() if not t.get("active")]
        if idle:
            reasons.append(f"term(s) active on no instance: {', '.join(idle)}")
        crit = {k: float(v) for k, v in (self.criteria or {}).items()}
        broken = [k for k, v in crit.items() if not v >= 0]  # NaN counts as broken
        if broken:
            reasons.append(f"criterion failed: {'; '.join(broken)}")
            self.worst_margin = min(float(self.worst_margin), *(
                -math.inf if math.isnan(crit[k]) else crit[k] for k in broken))
        if reasons:
            self.passed = False
        margin = float(self.worst_margin)
        if not self.passed and not margin < 0 and (self.applies or self.diverged):
            self.details = {**self.details, "margin_before_normalisation": margin,
                            "failed_because": "; ".join(reasons) or
                            "the check's own criteria (margin was not negative)"}
            self.worst_margin = -math.inf

    @property
    def verdict(self) -> str:
        """``"pass"``, ``"fail"``, ``"diverged"`` (every run diverged: a failure) or
        ``"finding"`` (the theorem's conditions do not apply, or its statement fails at the
        paper's own hyperparameters while every criterion of the check passed).
        """
        if self.diverged:
            return "diverged"
        if not self.applies:
            return "finding"
        if not self.passed:
            return "fail"
        return "finding" if self.paper_finding else "pass"

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
