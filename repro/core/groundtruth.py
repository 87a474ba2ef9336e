"""cvxpy/Clarabel ground truth with a recorded fallback, shared by every paper's checks.

Clarabel sometimes ends ``optimal_inaccurate`` at one tolerance and ``optimal`` at a slightly
looser one (exponential cones, squared hinge terms). :func:`solve_clarabel` tries the given
tolerances in order and reports which one ended ``optimal``; a caller accepts only that
status (``optimal_inaccurate`` is a failure) and records the settings it used.
"""

from __future__ import annotations

import warnings

import cvxpy as cp


def clarabel_settings(tol: float, max_iter: int = 500) -> dict:
    """Clarabel options with gap and feasibility tolerances all equal to ``tol``."""
    return {"tol_gap_abs": tol, "tol_gap_rel": tol, "tol_feas": tol, "max_iter": max_iter}


def solve_clarabel(prob: cp.Problem, tolerances: tuple[float, ...] = (1e-10, 1e-9, 1e-8),
                   max_iter: int = 500) -> int:
    """Solve ``prob`` with Clarabel at each tolerance in turn until the status is ``optimal``.

    Returns the index of the tolerance that ended ``optimal``, or ``len(tolerances)`` if none
    did (``prob.status`` then holds the last status; a solver error counts as a failed try).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k, tol in enumerate(tolerances):
            try:
                prob.solve(solver=cp.CLARABEL, **clarabel_settings(tol, max_iter))
            except cp.error.SolverError:
                continue
            if prob.status == "optimal":
                return k
    return len(tolerances)
