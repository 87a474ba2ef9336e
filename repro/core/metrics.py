"""Evaluation metrics of the four papers, each with its paper and formula.

- accuracy: all papers.
- Fair VFL (papers 000 [C] / 001 [J]; docs/decisions.md#fairvfl-deo): ``deo`` (loss-based DEO of
  Definition 1), ``fairness_rate`` FR = 1 - DEO, ``harmonic_mean`` HM of AC and FR, ``dfp`` /
  ``dfn`` ([J] §5.2) and the TPR gap ``tpr_gap`` (a decision-based diagnostic).
- Relative fairness (paper 002; docs/decisions.md#relfair-index, in :mod:`repro.core.inequality`,
  re-exported here): ``top_cvar`` / ``bottom_cvar``
  (F_A, F_B over capped simplices), ``relative_fairness_ratio`` R_{A,B}, ``gini``,
  ``lorenz_curve``.
- Constrained FL (paper 003; docs/decisions.md#constrfl-metrics): ``constraint_feasibility``.

Groups for the fairness metrics are a boolean (or 0/1) array: ``True``/1 is group ``a``,
``False``/0 group ``b`` (docs/decisions.md#fairvfl-deo writes D = l^a - l^b; DEO/DFP/DFN are
symmetric).
"""

from __future__ import annotations

import numpy as np

from repro.core.inequality import (
    bottom_cvar,
    capped_simplex_vertex,
    gini,
    lorenz_curve,
    relative_fairness_ratio,
    top_cvar,
)
from repro.core.validation import nonempty_vector as _vector

__all__ = [
    "accuracy",
    "bottom_cvar",
    "capped_simplex_vertex",
    "constraint_feasibility",
    "deo",
    "dfn",
    "dfp",
    "fairness_rate",
    "gini",
    "harmonic_mean",
    "lorenz_curve",
    "relative_fairness_ratio",
    "top_cvar",
    "tpr_gap",
]


def _same_length(**arrays: np.ndarray) -> None:
    lengths = {k: len(v) for k, v in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"arrays must have the same length, got {lengths}")


def _group_mask(group) -> np.ndarray:
    g = _vector(group, "group")
    if g.dtype == bool:
        return g
    if not np.all(np.isin(g, (0, 1))):
        raise ValueError(
            f"group must be boolean or 0/1 (1 = group a), got values {np.unique(g)[:5]}")
    return g.astype(bool)


def accuracy(y_true, y_pred) -> float:
    """Fraction of correct predictions, ``mean(y_pred_i == y_true_i)``.

    Parameters
    ----------
    y_true, y_pred : array_like of shape (n,)
        Labels and predictions in the same coding.

    Returns
    -------
    float in [0, 1].

    Examples
    --------
    >>> accuracy([1, -1, 1, 1], [1, 1, 1, -1])
    0.5
    """
    yt, yp = _vector(y_true, "y_true"), _vector(y_pred, "y_pred")
    _same_length(y_true=yt, y_pred=yp)
    return float(np.mean(yt == yp))


def _conditional_mean(values: np.ndarray, mask: np.ndarray, what: str) -> float:
    count = int(mask.sum())
    if count == 0:
        raise ValueError(f"{what} is empty, the metric is undefined")
    return float(values[mask].sum() / count)


def deo(y_true, group, *, logits=None, losses=None, positive=1, signed: bool = False) -> float:
    r"""Difference of equal opportunity, loss-based (Fair VFL, [C]/[J] Definition 1, [J](2)).

    With ``N^s = {i : s_i = s, y_i = positive}`` and per-sample loss ``l_i``,

        ``D = (1/|N^a|) sum_{i in N^a} l_i - (1/|N^b|) sum_{i in N^b} l_i``,  ``DEO = |D|``.

    For a linear/MLP score ``z`` the loss is the logistic loss of the positive label,
    ``l_i = log(1 + exp(-z_i))`` (natural log, no regularizer; docs/decisions.md#fairvfl-deo). For
    post-processed randomized predictors pass ``losses = -log(clip(p_tilde, 1e-12, 1))``.

    Parameters
    ----------
    y_true : array_like of shape (n,)
        Labels; only samples with ``y_true == positive`` count.
    group : array_like of bool or 0/1, shape (n,)
        ``True``/1 = group ``a``, ``False``/0 = group ``b``.
    logits : array_like of shape (n,), optional
        Scores ``z``; exactly one of ``logits`` and ``losses`` must be given.
    losses : array_like of shape (n,), optional
        Per-sample losses ``l_i``.
    positive : label value, default 1
        The positive ("protected") class (+1 in docs/decisions.md#fairvfl-data).
    signed : bool, default False
        Return ``D`` instead of ``|D|`` (the constraint of [C](4a-b) uses the sign).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If lengths differ, both or neither of ``logits``/``losses`` are given, or a group has
        no positive sample.

    Examples
    --------
    >>> deo([1, 1, 1, 1, -1], [1, 1, 0, 0, 1], losses=[0.5, 1.5, 0.25, 0.75, 9.0])
    0.5
    """
    if (logits is None) == (losses is None):
        raise ValueError("give exactly one of logits and losses")
    yt = _vector(y_true, "y_true")
    mask_a = _group_mask(group)
    if logits is not None:
        z = _vector(logits, "logits").astype(np.float64)
        loss = np.logaddexp(0.0, -z)
    else:
        loss = _vector(losses, "losses").astype(np.float64)
    _same_length(y_true=yt, group=mask_a, losses=loss)
    pos = yt == positive
    d = (_conditional_mean(loss, pos & mask_a, "group a among y == positive")
         - _conditional_mean(loss, pos & ~mask_a, "group b among y == positive"))
    return d if signed else abs(d)


def _rate_gap(y_true, y_pred, group, positive, condition_positive: bool, predict_positive: bool,
              what: str) -> float:
    yt, yp = _vector(y_true, "y_true"), _vector(y_pred, "y_pred")
    mask_a = _group_mask(group)
    _same_length(y_true=yt, y_pred=yp, group=mask_a)
    cond = (yt == positive) if condition_positive else (yt != positive)
    hit = ((yp == positive) if predict_positive else (yp != positive)).astype(np.float64)
    rate_a = _conditional_mean(hit, cond & mask_a, f"group a among {what}")
    rate_b = _conditional_mean(hit, cond & ~mask_a, f"group b among {what}")
    return abs(rate_a - rate_b)


def dfp(y_true, y_pred, group, *, positive=1) -> float:
    """Difference in false-positive rates ([J] §5.2; docs/decisions.md#fairvfl-metrics).

    ``FPR_s = #{yhat = +, y = -, s} / #{y = -, s}``, ``DFP = |FPR_a - FPR_b|``, where ``+`` is
    ``positive`` and ``-`` every other label.

    Examples
    --------
    >>> dfp([-1, -1, -1, -1], [1, -1, -1, -1], [1, 1, 0, 0])
    0.5
    """
    return _rate_gap(y_true, y_pred, group, positive, False, True, "y != positive")


def dfn(y_true, y_pred, group, *, positive=1) -> float:
    """Difference in false-negative rates ([J] §5.2; docs/decisions.md#fairvfl-metrics).

    ``FNR_s = #{yhat = -, y = +, s} / #{y = +, s}``, ``DFN = |FNR_a - FNR_b|``.

    Examples
    --------
    >>> dfn([1, 1, 1, 1], [-1, -1, 1, -1], [1, 1, 0, 0])
    0.5
    """
    return _rate_gap(y_true, y_pred, group, positive, True, False, "y == positive")


def tpr_gap(y_true, y_pred, group, *, positive=1) -> float:
    """Decision-based equal-opportunity gap ``|P(yhat=+ | y=+, a) - P(yhat=+ | y=+, b)|``.

    Not the papers' DEO (that one is loss-based, see ``deo``; docs/decisions.md#fairvfl-metrics
    explains why);
    kept as a diagnostic. Equals ``dfn`` since ``TPR = 1 - FNR``.
    """
    return _rate_gap(y_true, y_pred, group, positive, True, True, "y == positive")


def fairness_rate(deo_value):
    """Fairness ``FR = 1 - DEO_test`` ([C] §V-A(c), docs/decisions.md#fairvfl-metrics); multiply by
    100 for %.
    """
    out = 1.0 - np.asarray(deo_value, dtype=np.float64)
    return float(out) if out.ndim == 0 else out


def harmonic_mean(a, b):
    """Harmonic mean ``HM = 2 a b / (a + b)`` of accuracy and fairness ([C] Table I).

    Computed per run (docs/decisions.md#fairvfl-metrics). Vectorized; ``HM(0, 0) = 0`` (its limit).

    Raises
    ------
    ValueError
        If an input is negative or not finite.

    Examples
    --------
    >>> harmonic_mean(0.5, 1.0)
    0.6666666666666666
    """
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("harmonic_mean inputs must be finite")
    if np.any(x < 0) or np.any(y < 0):
        raise ValueError("harmonic_mean inputs must be in [0, inf)")
    s = x + y
    out = np.where(s > 0, 2.0 * x * y / np.where(s > 0, s, 1.0), 0.0)
    return float(out) if out.ndim == 0 else out


def constraint_feasibility(values, kind: str = "ineq", axis=None):
    """Largest constraint violation (paper 003; docs/decisions.md#constrfl-metrics).

    - ``kind="ineq"`` for ``c(w) <= 0``: ``max(0, max_i c_i)``;
    - ``kind="eq"`` for ``C w + d = 0``: ``max_i |c_i|`` (Table 4's
      ``max_i ||C_i w + d_i||_inf``, server included).

    Parameters
    ----------
    values : array_like
        Constraint values ``c_i(w)`` (any shape).
    kind : {"ineq", "eq"}
    axis : int or tuple of int, optional
        Reduce only these axes (e.g. one value per client); all by default.

    Examples
    --------
    >>> constraint_feasibility([-0.5, 0.25, 0.125])
    0.25
    >>> constraint_feasibility([-0.5, -0.25])
    0.0
    >>> constraint_feasibility([-0.5, 0.25], kind="eq")
    0.5
    """
    c = np.asarray(values, dtype=np.float64)
    if c.size == 0:
        raise ValueError("values must not be empty")
    if kind == "ineq":
        out = np.maximum(np.max(c, axis=axis), 0.0)
    elif kind == "eq":
        out = np.max(np.abs(c), axis=axis)
    else:
        raise ValueError(f"kind must be one of ('ineq', 'eq'), got {kind!r}")
    return float(out) if np.ndim(out) == 0 else out
