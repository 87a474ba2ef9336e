"""Is there a point that meets every constraint? Asked before Algorithms 1 and 3 iterate.

Algorithms 1 and 3 assume the constraint set ``{w : c_i(w) <= 0 for every party i}`` is not
empty. On an empty one the multipliers grow without end and the run takes every outer and
ADMM round its caps allow (10,001 x 10,001 by default) before it says anything. Where the
constraints are convex inequalities (every block's ``convex_constraints``, no equality block,
the quadratic constraints' Hessians positive semidefinite), a small problem decides it first:

    minimise t over (w, t)  subject to  c_j(w) <= t for every constraint j of every party,

whose optimum ``t*`` is the smallest achievable largest constraint value. SLSQP solves it
(the blocks' own values and Jacobians; d + 1 unknowns); where ``t* > 0`` its multipliers
``lambda`` (summing to 1) give the dual bound ``g(lambda) = min_w sum_j lambda_j c_j(w) <=
t*`` (weak duality), computed by L-BFGS. The set is declared empty only when both exceed the
margin: then :class:`InfeasibleConstraints` is raised, naming ``t*``. Nonconvex or equality
constraints are not checked (:attr:`Feasibility.checked` False, with the reason).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

__all__ = ["Feasibility", "InfeasibleConstraints", "check_feasible", "feasibility"]

MARGIN = 1e-6  # t* and the dual bound must both exceed it (relative to 1 + |r|)


class InfeasibleConstraints(ValueError):
    """No point meets every constraint: said before any round is run."""


@dataclass(frozen=True)
class Feasibility:
    """The answer: ``checked`` (False: not decidable here, ``why``), ``feasible``, the
    smallest largest constraint value found (``violation``, at ``w``) and the dual bound.
    """

    checked: bool
    feasible: bool
    why: str
    violation: float = float("nan")
    dual_bound: float = float("nan")
    w: np.ndarray | None = None


def _blocks(problem):
    return [(problem.server, True), *((b, False) for b in problem.clients)]


def _not_checkable(problem) -> str:
    for block, _ in _blocks(problem):
        if block.m == 0:
            continue
        if getattr(block, "equality", False):
            return "equality constraints are not checked"
        if not block.convex_constraints:
            return "nonconvex constraints are not checked"
        H = getattr(block, "H", None)
        if H is not None and np.min(np.linalg.eigvalsh(H), initial=0.0) < -1e-12:
            return "a quadratic constraint with an indefinite Hessian is not checked"
    return ""


def _values(problem, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every constraint value ``c_j(w)`` and its gradient row, stacked over the parties."""
    vals, jacs = [], []
    for block, server in _blocks(problem):
        if block.m == 0:
            continue
        W = w[None] if server else np.broadcast_to(w, (block.size, w.size))
        vals.append(np.asarray(block.c(W)).reshape(-1))
        jacs.append(np.asarray(block.jac_c(W)).reshape(-1, w.size))
    if not vals:
        return np.zeros(0), np.zeros((0, w.size))
    return np.concatenate(vals), np.concatenate(jacs)


def _dual_bound(problem, lam: np.ndarray, w0: np.ndarray) -> float:
    """``min_w sum_j lam_j c_j(w)`` by L-BFGS (a lower bound on t* where it converged)."""
    def fun(w):
        c, J = _values(problem, w)
        return float(lam @ c), lam @ J

    res = minimize(fun, w0, jac=True, method="L-BFGS-B",
                   options={"maxiter": 500, "gtol": 1e-10})
    return float(res.fun) if res.success else float("nan")


def feasibility(problem, w0: np.ndarray | None = None) -> Feasibility:
    """Decide whether the problem's constraint set is empty (see the module docstring)."""
    why = _not_checkable(problem)
    if why:
        return Feasibility(False, True, why)
    d = problem.d
    w0 = np.zeros(d) if w0 is None else np.asarray(w0, dtype=float)
    c0, _ = _values(problem, w0)
    if c0.size == 0 or c0.max() <= 0:
        return Feasibility(True, True, "the start point meets every constraint",
                           float(c0.max(initial=-np.inf)), w=w0)
    scale = 1.0 + float(np.max(np.abs(c0)))

    def cons(x):
        return x[-1] - _values(problem, x[:-1])[0]

    def cons_jac(x):
        _, J = _values(problem, x[:-1])
        return np.hstack([-J, np.ones((J.shape[0], 1))])

    res = minimize(lambda x: x[-1], np.append(w0, c0.max()), method="SLSQP",
                   jac=lambda x: np.eye(d + 1)[-1],
                   constraints=[{"type": "ineq", "fun": cons, "jac": cons_jac}],
                   bounds=[(None, None)] * d + [(-1.0, None)],
                   options={"maxiter": 200, "ftol": 1e-12})
    w = res.x[:-1]
    worst = float(_values(problem, w)[0].max())
    if worst <= MARGIN * scale:
        return Feasibility(True, True, "a point meets every constraint", worst, w=w)
    if not res.success:
        return Feasibility(False, True, f"undecided (SLSQP: {res.message})", worst, w=w)
    lam = np.clip(np.asarray(getattr(res, "multipliers", []), dtype=float), 0.0, None)
    if lam.size != c0.size or lam.sum() <= 0:
        return Feasibility(False, True, "undecided (no multipliers)", worst, w=w)
    bound = _dual_bound(problem, lam / lam.sum(), w)
    if bound > MARGIN * scale:
        return Feasibility(True, False, "no point meets every constraint", worst, bound, w)
    return Feasibility(False, True, "undecided (the dual bound does not confirm it)", worst,
                       bound, w)


def check_feasible(problem, algorithm: str) -> Feasibility:
    """:func:`feasibility`, raising :class:`InfeasibleConstraints` on an empty constraint set."""
    f = feasibility(problem)
    if f.checked and not f.feasible:
        raise InfeasibleConstraints(
            f"{algorithm}: the constraints are infeasible: no w meets every constraint "
            f"c_i(w) <= 0 (the smallest achievable largest c_i(w) is {f.violation:.4g} > 0; "
            f"a dual bound proves it at least {f.dual_bound:.4g}); "
            "nothing was run. Loosen the constraints (e.g. a larger r for neyman_pearson) or "
            "check the data")
    return f
