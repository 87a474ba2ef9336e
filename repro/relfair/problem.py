r"""The problem of paper 002: relative-fair federated learning, (8),

    ``min_theta max_{lambda in Lambda_phi(A, B)} sum_i lambda_i f_i(theta)``,

with the integrated ambiguity set Lambda_phi(A, B) of (7) as constraint set of the dual
variable, and the dual step of Alg. 1 (line 9). The client losses f_i and their gradients are
those of the MLP of App. J.2 (``repro.relfair.models``) on each client's data
(``repro.relfair.clients``).

For capped simplices ``A = Delta_alpha``, ``B = Delta_beta`` ((2)),

    ``Lambda_phi(A, B) = {(a - phi b)/(1 - phi) : a in A, b in B} = P(w)``,
    ``w = (v_alpha(decreasing) - phi v_beta(increasing)) / (1 - phi)``,

the permutohedron of ``w`` (docs/decisions.md#relfair-permutohedron; both sets have the support
function ``h(s) = sum_i w_i s_(i) = (F_A(s) - phi F_B(s)) / (1 - phi)``). Consequences used here:
the inner max of (8) is ``sum_i w_i l_(i)`` (decreasing order,
:meth:`RelativeAmbiguitySet.support`), ``||Lambda||_1 = ||w||_1``, the skewness
``s(Lambda) = n ||w||_2^2`` (Prop. 5, corrected; docs/decisions.md#relfair-theory), and the dual
step of Alg. 1 (line 9) is the Euclidean projection onto ``P(w)``
(docs/decisions.md#relfair-dual-step, method 1).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from repro.core.metrics import capped_simplex_vertex
from repro.core.projections import permutohedron_projection
from repro.core.validation import check_range

__all__ = ["RelativeAmbiguitySet", "dual_step"]


@dataclass(frozen=True)
class RelativeAmbiguitySet:
    """``Lambda_phi(Delta_alpha^{n-1}, Delta_beta^{n-1})`` (paper 002 (7)).

    ``phi = 0`` gives ``Delta_alpha`` itself (the DRO set of (1), Scaff-PD); ``alpha = 1`` with
    ``phi = 0`` gives the singleton ``{1/n}`` (Scaffold, App. J.2).
    """

    n: int
    alpha: float
    beta: float
    phi: float

    def __post_init__(self) -> None:
        if isinstance(self.n, bool) or not isinstance(self.n, (int, np.integer)) or self.n < 1:
            raise ValueError(f"n must be an integer in [1, inf), got {self.n!r}")
        check_range("alpha", self.alpha, low=0, high=1, low_open=True)
        check_range("beta", self.beta, low=0, high=1, low_open=True)
        check_range("phi", self.phi, low=0, high=1, high_open=True)

    @cached_property
    def w(self) -> np.ndarray:
        """Generating vector, decreasing, ``sum(w) = 1``
        (docs/decisions.md#relfair-permutohedron).
        """
        va = capped_simplex_vertex(int(self.n), self.alpha)
        vb = capped_simplex_vertex(int(self.n), self.beta)[::-1]
        return (va - self.phi * vb) / (1.0 - self.phi)

    def support(self, losses) -> np.ndarray | float:
        """``max_{lambda in Lambda} <lambda, l> = sum_i w_i l_(i)`` (decreasing), last axis."""
        f = np.asarray(losses, dtype=np.float64)
        out = np.sum(self.w * np.sort(f, axis=-1)[..., ::-1], axis=-1)
        return float(out) if out.ndim == 0 else out

    def project(self, z) -> np.ndarray:
        """Euclidean projection onto ``Lambda_phi = P(w)`` (docs/decisions.md#relfair-dual-step,
        method 1).
        """
        return permutohedron_projection(z, self.w)

    def contains(self, lam, tol: float = 1e-10) -> bool:
        """Majorization test: sorted partial sums of ``lam`` <= those of ``w``, equal total."""
        lam = np.asarray(lam, dtype=np.float64)
        gap = np.cumsum(np.sort(lam)[::-1]) - np.cumsum(self.w)
        return bool(np.all(gap[:-1] <= tol) and abs(gap[-1]) <= tol)

    @property
    def l1_norm(self) -> float:
        """``||Lambda||_1 = max_lambda ||lambda||_1 = ||w||_1``
        (docs/decisions.md#relfair-permutohedron).
        """
        return float(np.abs(self.w).sum())

    @property
    def skewness(self) -> float:
        """``s(Lambda) = n max_lambda ||lambda||_2^2 = n ||w||_2^2`` (Prop. 5 corrected,
        docs/decisions.md#relfair-theory).
        """
        return float(self.n * np.sum(self.w ** 2))

    @property
    def is_singleton(self) -> bool:
        return bool(np.all(self.w == self.w[0]))


def dual_step(lam, s, sigma: float, ambiguity: RelativeAmbiguitySet) -> np.ndarray:
    r"""Alg. 1 line 9 with ``psi = 0``: ``argmin_{l in Lambda} -<s, l> + ||l - lam||^2/(2 sigma)``.

    Completing the square, this is ``Proj_Lambda(lam + sigma s)``
    (docs/decisions.md#relfair-dual-step); only ``lambda = (a - phi b)/(1 - phi)`` is unique, not
    the pair (a, b), and only lambda is used.
    """
    check_range("sigma", sigma, low=0, low_open=True)
    z = np.asarray(lam, dtype=np.float64) + sigma * np.asarray(s, dtype=np.float64)
    return ambiguity.project(z)
