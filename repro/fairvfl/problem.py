"""The Fair VFL problem on the training data: objective, DEO constraint, Lagrangian and
gradients ([C](1)-(8), [J](1)-(9), (12)), written once and used by every party.

docs/decisions.md#fairvfl. With scores ``z`` (``z_i = sum_k g_k(theta_k, X_i^k)``):

- logistic loss ``l(z, y) = log(1 + exp(-y z))`` and its derivative
  ``o_i = dl/dz_i = -y_i sigmoid(-y_i z_i)``;
- ``D(theta) = mean_{N^a} log(1 + e^{-z}) - mean_{N^b} log(1 + e^{-z})`` (Definition 1,
  [J](2)), ``N^s = {i : s_i = s, y_i = +1}``;
- weights of the masked message, [J](12): ``w_i = 1/n + (lam1 - lam2)/|N^a|`` on ``N^a``,
  ``1/n - (lam1 - lam2)/|N^b|`` on ``N^b``, ``1/n`` elsewhere, so that
  ``grad_k f = sum_i w_i o_i dg_k/dtheta_k + mu theta_k`` ([C](8) = [J](9));
- dual gradient ``grad_lam f~ = (D - eps - c lam1, -D - eps - c lam2)`` ([C](7) = [J](8)).

:class:`VFLProblem` bundles what the parties and the server hold (the party blocks, ``y``,
``s`` and their :class:`FairnessGroups`): the ``problem`` of
:class:`~repro.fairvfl.fair_vfl.FairVFL` (:mod:`repro.core.algorithm`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from scipy.special import expit

from repro.core.validation import check_labels, check_vector

LABEL_REMEDY = ("labels in {0, 1} give a different objective (a 0-labelled row adds log 2 and "
                "no gradient): pass 2 * y - 1")


@dataclass(frozen=True)
class FairnessGroups:
    """Label and group information: held by the server and the active parties only."""

    y: np.ndarray  # {-1, +1}
    in_a: np.ndarray  # bool, N^a membership (s = a and y = +1)
    in_b: np.ndarray  # bool, N^b membership
    coef: np.ndarray  # 1/|N^a| on N^a, -1/|N^b| on N^b, 0 elsewhere
    _memo: tuple | None = field(default=None, repr=False, compare=False)
    _weights_memo: tuple | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_labels(cls, y: np.ndarray, s: np.ndarray) -> FairnessGroups:
        """``y`` in {-1, +1} (``ValueError`` otherwise, with the remedy for 0/1 labels) and
        ``s`` booleans or 0/1 (True = group a), one per row of ``y``.
        """
        y = check_vector("y", y)
        check_labels("y", y, (-1, 1), shown="labels in {-1, +1}", remedy=LABEL_REMEDY)
        s = check_vector("s", s, length=len(y), length_of="y")
        check_labels("s", s, (0, 1), shown="booleans or 0/1 (True = group a)")
        y = y.astype(np.float64)
        s = s.astype(bool)
        pos = y == 1
        in_a, in_b = pos & s, pos & ~s
        if not in_a.any() or not in_b.any():
            raise ValueError("each group needs at least one positive sample (N^a, N^b nonempty)")
        coef = in_a / in_a.sum() - in_b / in_b.sum()
        return cls(y, in_a, in_b, coef)

    @property
    def n(self) -> int:
        return len(self.y)

    def weights(self, lam: np.ndarray) -> np.ndarray:
        """[J](12) weights ``w(lam)``; exactly ``1/n`` everywhere when ``lam1 = lam2``."""
        return 1.0 / self.n + float(lam[0] - lam[1]) * self.coef

    # Computed once per problem, not per round (they never change): ``-y`` and the rows of N^a, N^b.
    # The values are those the per-round ``-self.y`` and ``z[self.in_a]`` gave, so every
    # result is bitwise the same.
    @cached_property
    def _neg_y(self) -> np.ndarray:
        return -self.y

    @cached_property
    def _rows_ab(self) -> tuple[np.ndarray, np.ndarray]:
        return np.flatnonzero(self.in_a), np.flatnonzero(self.in_b)

    def loss_derivative(self, z: np.ndarray) -> np.ndarray:
        """``o_i = -y_i sigmoid(-y_i z_i)``."""
        return self._neg_y * expit(self._neg_y * z)

    def masked_message(self, z: np.ndarray, lam: np.ndarray) -> np.ndarray:
        """``nu = w(lam) * o(z)``, [J](12).

        Several active parties of one round receive the same broadcast object; the last
        result is memoized on the identity of ``z`` (kept alive here, so its id cannot be
        reused) and the value of ``lam``. Callers never mutate ``z`` or the result.
        """
        key = (float(lam[0]), float(lam[1]))
        if self._memo is not None and self._memo[0] is z and self._memo[1] == key:
            return self._memo[2]
        # w(lam) is the same for every local step of a round (Q > 1 reads a new z each
        # step): kept for the last lam.
        if self._weights_memo is None or self._weights_memo[0] != key:
            object.__setattr__(self, "_weights_memo", (key, self.weights(lam)))
        nu = self._weights_memo[1] * self.loss_derivative(z)
        object.__setattr__(self, "_memo", (z, key, nu))
        return nu

    def mean_loss(self, z: np.ndarray) -> float:
        """``(1/n) sum_i log(1 + exp(-y_i z_i))`` (no regularizer)."""
        return float(np.mean(softplus(self._neg_y * z)))

    def deo_signed(self, z: np.ndarray) -> float:
        """``D = l^a - l^b`` on the positives of each group (Definition 1); only the rows of
        ``N^a`` and ``N^b`` are evaluated.
        """
        rows_a, rows_b = self._rows_ab
        return float(softplus(-z[rows_a]).mean() - softplus(-z[rows_b]).mean())


@dataclass(frozen=True, eq=False)
class VFLProblem:
    """The training problem of one Fair VFL run: ``blocks``, one model block per party
    (``LinearBlock`` / ``MLPBlock`` or an object with their methods) bound to that party's
    columns ``X^k`` of the training rows; ``y`` in {-1, +1} and ``s`` (True = group a), one
    entry per row, held by the server and the active parties only; ``groups``, the
    :class:`FairnessGroups` of ``(y, s)``.

    ``groups=None`` (every experiment) means Definition 1, ``FairnessGroups.from_labels(y, s)``.
    A handed ``groups`` is for diagnostics that run a rejected reading of Definition 1 (a
    subclass with other ``N^s``, ``repro.fairvfl.diagnostics``); its labels must equal ``y``.
    Bad inputs raise ``ValueError`` naming the argument; that every block holds the rows of
    ``y`` is checked when an algorithm first evaluates the blocks.
    """

    blocks: tuple
    y: np.ndarray
    s: np.ndarray
    groups: FairnessGroups | None = None

    def __post_init__(self) -> None:
        groups = self.groups
        if groups is None:
            groups = FairnessGroups.from_labels(self.y, self.s)
        elif not (isinstance(groups, FairnessGroups)
                  and np.array_equal(groups.y, np.asarray(self.y, dtype=np.float64))):
            raise ValueError("groups must be a FairnessGroups built from these labels y")
        blocks = tuple(self.blocks)
        if not blocks:
            raise ValueError("blocks must hold at least one party's model block")
        object.__setattr__(self, "blocks", blocks)
        object.__setattr__(self, "groups", groups)
        object.__setattr__(self, "y", groups.y)
        object.__setattr__(self, "s", np.asarray(self.s).astype(bool))

    @property
    def n(self) -> int:
        """Number of training rows."""
        return self.groups.n


def softplus(x: np.ndarray) -> np.ndarray:
    """``log(1 + e^x)`` computed stably (equals ``np.logaddexp(0, x)``, ~1.5x faster)."""
    return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0.0)


def dual_gradient(d: float, lam: np.ndarray, eps: float, c: float) -> np.ndarray:
    """``grad_lam f~_t = (-c lam1 + D - eps, -c lam2 - D - eps)``, [C](7) = [J](8)."""
    return np.array([d - eps, -d - eps]) - c * np.asarray(lam, dtype=np.float64)


def lagrangian(loss_reg: float, d: float, lam: np.ndarray, eps: float) -> float:
    """``f(theta, lam) = L + lam1 (D - eps) - lam2 (D + eps)``, [C](5) = [J](6)."""
    return float(loss_reg + lam[0] * (d - eps) - lam[1] * (d + eps))
