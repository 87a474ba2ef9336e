"""DFP / DFN under every reading [J] allows (docs/decisions.md#fairvfl-dfp-dfn).

[J] §5.2 names the metrics ("the difference between false-positive rates (DFP), and the
difference between false-negative rates (DFN)") and gives no formula, no coding of the positive
class and no choice between decisions and scores. Every record carries all five readings, so
choosing one is a *metric reading*: it needs no rerun.

Every rate is computed from ``q_i = P(Y~_i = +1)`` (a 0/1 decision for a deterministic model,
the exact probability of a randomized post-processor) and the score ``h_i`` (the model's
probability of ``y = +1``; post-processed where the post-processor changes it), with ``y`` in
{-1, +1}, ``y = +1`` the protected class (docs/decisions.md#fairvfl-positive-class) and ``s``
True = group a.

| reading   | FP rate of group g                       | FN rate of group g                     |
|-----------|------------------------------------------|----------------------------------------|
| primary   | mean_{g, y=-1} q                         | mean_{g, y=+1} (1 - q)                 |
| swapped   | mean_{g, y=+1} (1 - q)                   | mean_{g, y=-1} q                       |
| joint     | sum_{g, y=-1} q / n_g                    | sum_{g, y=+1} (1 - q) / n_g            |
| score1    | mean_{g, y=-1} h                         | mean_{g, y=+1} (1 - h)                 |
| score0    | mean_{g, y=+1} (1 - h)                   | mean_{g, y=-1} h                       |

DFP = |FP_a - FP_b|, DFN = |FN_a - FN_b|. The metric keys are ``dfp_<suffix>``/``dfn_<suffix>``
(``_cond`` for the primary); ``dfp``/``dfn``, the metrics the tables report, hold the primary's
values in a record and the chosen reading's values once a metric reading
(``repro.fairvfl.experiments._readings``) has read it, while ``dfp_cond`` keeps the primary's
values under every reading. A post-processor's keys carry its prefix (``eo_dfp_joint``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from repro.core.validation import check_labels, check_vector


@dataclass(frozen=True)
class MetricReading:
    """One reading of [J]'s DFP/DFN: id, title, the quoted textual basis, the metric keys."""

    id: str
    title: str
    basis: str
    suffix: str  # keys ``dfp_<suffix>``/``dfn_<suffix>``
    primary: bool = False

    @property
    def keys(self) -> tuple[str, str]:
        return f"dfp_{self.suffix}", f"dfn_{self.suffix}"

    def values(self, metrics: dict, prefix: str = "") -> tuple[float, float]:
        """``(DFP, DFN)`` of this reading from a record's metrics (``prefix``: ``"eo_"`` ...)."""
        return tuple(float(metrics[prefix + k]) for k in self.keys)


METRIC_READINGS: dict[str, MetricReading] = {r.id: r for r in (
    MetricReading(
        "dfpdfn_conditional", "decision rates conditioned on y, protected class = +1",
        "[J] §5.2: 'both groups should have a similar false-positive rate, and both groups "
        "should have a similar false-negative rate'; [J] §5.1.2: 'use \"above 50,000 dollars\" "
        "as the protected class'. The standard false-positive rate P(yhat = + | y = -).",
        "cond", primary=True),
    MetricReading(
        "dfpdfn_swapped", "decision rates conditioned on y, DFP and DFN swapped",
        "[J] §5.1.2 fixes a 'protected class' but no positive label for the rates (Crime: "
        "'take the negative as the protected class'); counting errors with the other class as "
        "positive exchanges FP and FN.", "swap"),
    MetricReading(
        "dfpdfn_joint", "joint within-group frequencies",
        "[J] §5.2: 'the difference between false-positive rates (DFP)' gives no denominator; "
        "read as #{false positives in g} / #{g}.", "joint"),
    MetricReading(
        "dfpdfn_score_label1", "score-based generalized rates, protected class = label 1",
        "[J] §5.1.1: 'we use the codes published by the authors [7], [10], [19]'; the code of "
        "[19] (Pleiss et al.) prints the generalized F.P. / F.N. cost: mean score on the "
        "negatives, mean of 1 - score on the positives.", "score1"),
    MetricReading(
        "dfpdfn_score_label0", "score-based generalized rates, protected class = label 0",
        "[J] §5.1.1 as above (code of [19]), with the protected class coded as label 0: the "
        "score of the positive label is 1 - h.", "score0"),
)}
PRIMARY_METRIC_READING = next(r for r in METRIC_READINGS.values() if r.primary)


def _gap(values: np.ndarray, masks: tuple[np.ndarray, np.ndarray], denominators) -> float:
    rates = []
    for mask, den in zip(masks, denominators, strict=True):
        if den == 0:
            raise ValueError("a DFP/DFN rate has an empty denominator (a group without one "
                             "of the labels); the metric is undefined on this split")
        rates.append(values[mask].sum() / den)
    return float(abs(rates[0] - rates[1]))


def group_rates(y, s, q) -> dict[str, float]:
    """Conditional rates of the primary reading per group: ``fpr_a, fpr_b, fnr_a, fnr_b``."""
    y, s, q = _inputs(y, s, q)
    out = {}
    for g, mask in (("a", s), ("b", ~s)):
        neg, pos = mask & (y == -1), mask & (y == 1)
        if not neg.any() or not pos.any():
            raise ValueError(f"group {g} lacks one of the labels; its rates are undefined")
        out[f"fpr_{g}"] = float(q[neg].mean())
        out[f"fnr_{g}"] = float((1.0 - q[pos]).mean())
    return out


def _inputs(y, s, q, score=None):
    y = check_vector("y", y)
    check_labels("y", y, (-1, 1), shown="labels in {-1, +1}",
                 remedy="for labels in {0, 1} pass 2 * y - 1")
    s = np.asarray(check_vector("s", s, length=len(y), length_of="y"), dtype=bool)
    q = np.asarray(check_vector("q", q, length=len(y), length_of="y"), dtype=np.float64)
    if np.any((q < 0) | (q > 1)):
        raise ValueError("q must hold probabilities P(Y~ = +1) in [0, 1] (a 0/1 decision for "
                         "a deterministic model)")
    if score is None:
        return y, s, q
    score = np.asarray(check_vector("score", score, length=len(y), length_of="y"),
                       dtype=np.float64)
    return y, s, q, score


def rate_readings(y, s, q, score) -> dict[str, float]:
    """DFP and DFN under all five readings (table in the module docstring).

    ``q``: P(Y~ = +1) per row (0/1 decisions allowed); ``score``: probability of ``y = +1``.
    """
    y, s, q, score = _inputs(y, s, q, score)
    groups = (s, ~s)
    neg = tuple(m & (y == -1) for m in groups)
    pos = tuple(m & (y == 1) for m in groups)
    n_neg = [m.sum() for m in neg]
    n_pos = [m.sum() for m in pos]
    n_grp = [m.sum() for m in groups]
    fp_dec, fn_dec = q, 1.0 - q
    out = {
        "dfp": _gap(fp_dec, neg, n_neg), "dfn": _gap(fn_dec, pos, n_pos),
        "dfp_joint": _gap(np.where(y == -1, fp_dec, 0.0), groups, n_grp),
        "dfn_joint": _gap(np.where(y == 1, fn_dec, 0.0), groups, n_grp),
        "dfp_score1": _gap(score, neg, n_neg), "dfn_score1": _gap(1.0 - score, pos, n_pos),
    }
    out["dfp_cond"], out["dfn_cond"] = out["dfp"], out["dfn"]
    out["dfp_swap"], out["dfn_swap"] = out["dfn"], out["dfp"]
    out["dfp_score0"], out["dfn_score0"] = out["dfn_score1"], out["dfp_score1"]
    return out
