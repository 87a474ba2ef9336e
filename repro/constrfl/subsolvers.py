"""Inexact solvers of the ADMM subproblems (18)-(19) and of the cProx-AL subproblem.

Every subproblem is, for each party j of a block::

    phi_j(u) = P_j(u) + <lin_j, u> + (rho/2) ||u - ctr_j||^2,  to  ||grad phi_j(u)||_inf <= tol_j

(client (19): ``lin = lambda_i^t - rho w^{t+1}``-free form with ``ctr = w^{t+1}``; server (18):
``lin = 0``, ``rho = sum_i rho_i``, ``ctr = mean of u~_i``).
docs/decisions.md#constrfl-subproblem-solvers:

* ``ExactQuadratic``: P quadratic; ``(Q + rho I)`` is Cholesky-factorized once per outer
  iteration and reused in every ADMM round (its inverse is formed from the factor);
* ``newton``: batched damped Newton on the generalized Hessian with Armijo backtracking and
  per-party convergence masks (convex c: NP, QP-ball);
* ``lbfgsb``: scipy L-BFGS-B with the analytic gradient, ``gtol = tol``, ``ftol = 0`` (scipy's
  ``tol=`` would set ftol too and leave the criterion unenforced), then verified.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.optimize

from repro.constrfl.exact import ExactQuadratic, FactorCache, cholesky_factors
from repro.constrfl.merit import Merit, _add_to_diagonal
from repro.constrfl.rows import restrict as _restrict
from repro.constrfl.rows import rows_of as _rows

__all__ = ["ExactQuadratic", "FactorCache", "NewtonBreakdown", "SolveInfo", "cholesky_factors",
           "clip_spectrum", "lbfgsb_solve", "newton_solve", "solve"]


class NewtonBreakdown(np.linalg.LinAlgError):
    """The generalized Hessian of a Newton step is singular in floating point.

    In exact arithmetic ``∇²phi_j >= (prox + rho) I`` is positive definite, so this happens
    only when the penalty part ``beta ∇c ∇cᵀ`` (rank m) and the weights ``[mu + beta c]_+``
    are so large that ``prox + rho`` is below its round-off: a dual blow-up
    (docs/deviations.md#constrfl-monks-1-with-20-clients-breakdown). ``party`` is the index in
    the block; ``cond`` the 2-norm condition number and ``hess_norm`` the largest eigenvalue.
    """

    def __init__(self, party: int, cond: float, hess_norm: float) -> None:
        super().__init__(f"Newton Hessian of party {party} is singular in float64: "
                         f"cond = {cond:.3g}, ||H||_2 = {hess_norm:.3g}")
        self.party, self.cond, self.hess_norm = party, cond, hess_norm
        self.where = "ADMM"  # set by Algorithm 2 to the step and round that broke down


@dataclass(frozen=True)
class SolveInfo:
    """Per party: achieved ``||grad phi||_inf``, iterations, whether the criterion holds;
    Newton also returns ``P(U)``, ``grad P(U)`` and (logistic blocks) the per-row parts at its
    output (``merit_at``), which the next ADMM round's warm start reuses (P does not change
    within one Algorithm-2 call).
    """

    residual: np.ndarray
    iterations: np.ndarray
    success: np.ndarray
    merit_at: tuple | None = None
    grad_at: np.ndarray | None = None


def _phi_grad(merit: Merit, U, lin, rho, ctr):
    return merit.grad(U) + lin + rho * (U - ctr)


def _phi_value(merit: Merit, U, lin, rho, ctr):
    du = U - ctr
    return merit.value(U) + np.sum(lin * U, axis=1) + 0.5 * rho * np.sum(du * du, axis=1)


def _merit_value_grad(merit, U):
    return merit.value_grad(U) if hasattr(merit, "value_grad") else (merit.value(U),
                                                                      merit.grad(U))


def _phi_from_merit(v, g, U, lin, rho, ctr):
    """``(phi(U), grad phi(U))`` from ``(P(U), grad P(U))``: the linear and proximal terms."""
    du = U - ctr
    return (v + (lin * U).sum(axis=1) + 0.5 * rho * (du * du).sum(axis=1), g + lin + rho * du)


# Rows per party from which keeping the per-row parts pays: below it (monks-1, ~30 rows) the
# pass they save is cheaper than the extra row copies of an active set that keeps changing.
# Only the work changes with it, never a number (the Hessian is the same matrix either way).
PARTS_MIN_ROWS = 256


def _keeps_parts(merit) -> bool:
    """A logistic-block merit with many rows: its value-and-gradient pass also keeps the
    per-row parts of its Hessian (:meth:`Merit.value_grad_parts`).
    """
    return (isinstance(merit, Merit) and hasattr(merit.block, "loss_parts")
            and merit.block.X.shape[1] >= PARTS_MIN_ROWS)


def _start(merit, U, merit_at_start, keep: bool):
    """``(vP, gP, parts, have, owned)`` at the start point: the merit's value and gradient
    (given, or computed with the per-row parts where the block keeps them).
    """
    b = U.shape[0]
    parts, have, owned = None, np.zeros(b, dtype=bool), False
    if merit_at_start is None:
        if keep:
            vP, gP, parts = merit.value_grad_parts(U)
            have[:], owned = True, True
        else:
            vP, gP = _merit_value_grad(merit, U)
    else:
        vP = np.array(merit_at_start[0], dtype=float)
        gP = np.array(merit_at_start[1], dtype=float)
        if keep and len(merit_at_start) > 2 and merit_at_start[2] is not None:
            parts = merit_at_start[2]
            have[:] = True
    return vP, gP, parts, have, owned


def _refresh_hessians(Hc, usable, idx, sub, Ui, parts, have, rho, clip) -> None:
    """Recompute, in place in ``Hc``, the (regularized, clipped) Hessians of the active rows
    ``idx`` whose kept matrix is not usable (from the kept per-row parts where they hold).
    """
    b = Hc.shape[0]
    fresh = (~usable[idx]).nonzero()[0]                 # positions within idx
    if not len(fresh):
        return
    sel = idx[fresh]
    sub_f = _restrict(sub, fresh)
    if parts is not None and have[sel].all():       # the parts of these points
        rows = [p if len(sel) == b else p[sel] for p in parts]
        Hf = sub_f.hess_from_parts(rows)
    else:
        Hf = sub_f.hess(Ui[fresh])
    _add_to_diagonal(Hf, rho)
    if clip is not None:
        Hf = clip_spectrum(Hf, clip)
    Hc[sel] = Hf


def _backtrack(sub, keep, Ui, step, slope, f0, trial, t, at_trial, li, ci, rho):
    """Armijo backtracking (halving, at most 60 times) of the rows whose trial point does not
    decrease ``phi`` enough; ``trial`` and ``at_trial = (vt, gtP, tparts, ft, gt)`` are
    updated in place. Returns the step lengths ``t``.
    """
    vt, gtP, tparts, ft, gt = at_trial
    for _ in range(60):
        bad = ft > f0 + 1e-4 * t * slope
        # Below round-off level the Armijo test cannot decide; accept the full step there.
        bad &= np.abs(t * slope) > 1e-15 * (1 + np.abs(f0))
        if not bad.any():
            break
        t = np.where(bad, 0.5 * t, t)
        jb = bad.nonzero()[0]
        trial[jb] = Ui[jb] + t[jb, None] * step[jb]
        if keep:
            vb, gbP, bparts = _restrict(sub, jb).value_grad_parts(trial[jb])
            for tp, bp in zip(tparts, bparts, strict=True):
                tp[jb] = bp
        else:
            vb, gbP = _merit_value_grad(_restrict(sub, jb), trial[jb])
        vt[jb], gtP[jb] = vb, gbP
        ft[jb], gt[jb] = _phi_from_merit(vb, gbP, trial[jb], _rows(li, jb), rho,
                                         _rows(ci, jb))
    return t


def _store_parts(parts, owned: bool, tparts, idx, b: int):
    """The kept per-row parts with the active rows' new ones written in (copied first where
    the arrays are a caller's). Returns ``(parts, owned)``.
    """
    if len(idx) == b:
        return tparts, True
    if parts is None:
        parts = [np.empty((b,) + tp.shape[1:]) for tp in tparts]
    elif not owned:
        parts = [p.copy() for p in parts]
    for p, tp in zip(parts, tparts, strict=True):
        p[idx] = tp
    return parts, True


def newton_solve(merit: Merit, U0, lin, rho, ctr, tol, *, max_iter: int = 100,
                 clip: float | None = None,
                 merit_at_start: tuple | None = None,
                 hess_cache: dict | None = None,
                 grad_at: np.ndarray | None = None) -> tuple[np.ndarray, SolveInfo]:
    """Batched damped Newton; each party stops as soon as ``||grad phi||_inf <= tol``.

    One Newton iteration of the parties still running is one generalized Hessian, one solve
    of the (b, d, d) systems and Armijo backtracking whose trial points are evaluated with
    value AND gradient in one pass over the rows (an accepted trial's gradient is the next
    iteration's, so no point is evaluated twice). ``clip`` > 0 floors the Hessian's
    eigenvalues (nonconvex phi, fairness), docs/decisions.md#constrfl-subproblem-solvers.
    ``merit_at_start`` = ``(P(U0), grad P(U0)[, parts])`` when the caller has them (the
    previous round's output), else computed.

    Logistic blocks: the pass that evaluates a point also keeps its per-row parts
    (:meth:`Merit.value_grad_parts`), and the Hessian at that point, the next iteration's (or
    the next round's first), is made from them (:meth:`Merit.hess_from_parts`): the same
    matrix, bit for bit, without another ``Xw`` and elementwise pass.

    ``hess_cache`` (a dict kept by the caller across the rounds of one Algorithm-2 call, where
    P is fixed and the iterates move little): the parties' last Hessians of phi (rho, clip
    included). A party keeps its matrix while its step is a full Armijo step that cuts
    ``||grad phi||_inf`` 4-fold (or meets the tolerance), else recomputes it. Every step is a
    descent step with a positive-definite matrix and the stopping rule is unchanged: only the
    work changes (a Hessian costs d/2 passes over the rows, a cached step none).

    ``grad_at`` (b, d), optional: also return ``grad P`` there (``SolveInfo.grad_at``; a
    client's (22) at the broadcast ``w^{t+1}``), in the pass of the first all-party trial
    point on a paired logistic block (:attr:`LogisticBlock.paired`), else after the solve.
    """
    U = np.array(U0, dtype=float, copy=True)
    b, d = U.shape
    tol = np.broadcast_to(np.asarray(tol, dtype=float), (b,))
    iters = np.zeros(b, dtype=int)
    keep = _keeps_parts(merit)
    # parts: per-row (phi, phi', e/(1+e), 1/(1+e)) at U of the parties marked in ``have``;
    # ``owned``: the arrays are this call's (a caller's are copied before a row is written)
    vP, gP, parts, have, owned = _start(merit, U, merit_at_start, keep)
    fval, g = _phi_from_merit(vP, gP, U, lin, rho, ctr)
    res = np.abs(g).max(axis=1)
    Hc, usable = _cached_hessians(hess_cache, b, d)
    sub_key, sub, g_at = None, merit, None
    pair = grad_at is not None and getattr(getattr(merit, "block", None), "paired", False)
    for _ in range(max_iter):
        todo = res > tol
        if not todo.any():
            break
        idx = todo.nonzero()[0]
        if sub_key is None or len(sub_key) != len(idx) or (sub_key != idx).any():
            sub_key, sub = idx, _restrict(merit, idx)       # copy rows once per active set
            li, ci = _rows(lin, idx), _rows(ctr, idx)
        Ui, gi, f0 = U[idx], g[idx], fval[idx]
        _refresh_hessians(Hc, usable, idx, sub, Ui, parts, have, rho, clip)
        step = _newton_direction(Hc[idx], gi, idx)
        slope = np.einsum("bi,bi->b", gi, step)
        t = np.ones(len(idx))
        trial = Ui + step
        both = pair and g_at is None and len(idx) == b     # the trial and grad_at in one pass
        vt, gtP, tparts, g_new = _evaluate_trial(merit, sub, trial, grad_at if both else None,
                                                 keep)
        g_at = g_new if both else g_at
        ft, gt = _phi_from_merit(vt, gtP, trial, li, rho, ci)
        t = _backtrack(sub, keep, Ui, step, slope, f0, trial, t, (vt, gtP, tparts, ft, gt),
                       li, ci, rho)
        U[idx], fval[idx], g[idx], vP[idx], gP[idx] = trial, ft, gt, vt, gtP
        if keep:
            parts, owned = _store_parts(parts, owned, tparts, idx, b)
            have[idx] = True
        iters[idx] += 1
        new_res = np.abs(gt).max(axis=1)
        # keep a matrix for the next step only where it just gave a full step and a 4-fold cut
        usable[idx] = (t == 1.0) & ((new_res <= 0.25 * res[idx]) | (new_res <= tol[idx]))
        res[idx] = new_res
    if hess_cache is not None:
        hess_cache.update(H=Hc, usable=usable)
    out_parts = tuple(parts) if parts is not None and have.all() else None
    if grad_at is not None and g_at is None:
        g_at = merit.grad(grad_at)
    return U, SolveInfo(res, iters, res <= tol, (vP, gP, out_parts), g_at)


def _cached_hessians(hess_cache: dict | None, b: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """The caller's kept Hessians and which parties may step with them (none if the stack's
    shape changed), else an empty stack.
    """
    Hc = hess_cache.get("H") if hess_cache is not None else None
    usable = np.zeros(b, dtype=bool)
    if Hc is not None and Hc.shape == (b, d, d):
        usable[:] = hess_cache["usable"]
    else:
        Hc = np.zeros((b, d, d))
    return Hc, usable


def _newton_direction(Hs: np.ndarray, gi: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``-H⁻¹ g`` for each running party; a singular matrix is a named breakdown."""
    try:
        return -np.linalg.solve(Hs, gi[..., None])[..., 0]
    except np.linalg.LinAlgError as exc:
        raise _breakdown(Hs, idx) from exc


def _evaluate_trial(merit: Merit, sub: Merit, trial, grad_at, keep: bool):
    """Value, gradient and (logistic blocks) per-row parts of P at the first trial point;
    with ``grad_at`` (all parties running, paired block) also ``grad P`` there, in the same
    pass over the rows. Returns ``(value, grad, parts, grad_at or None)``.
    """
    if grad_at is not None:
        return merit.value_grad_and_grad_at(trial, grad_at, keep)
    if keep:
        return (*sub.value_grad_parts(trial), None)
    return (*_merit_value_grad(sub, trial), None, None)


def clip_spectrum(H: np.ndarray, clip: float) -> np.ndarray:
    """``V max(Lambda, clip) Vᵀ`` for each symmetric matrix of the stack (its eigenvalues
    floored at ``clip``). Where ``H - clip I`` has a Cholesky factor no eigenvalue is below
    ``clip`` up to the factorization's backward error (``|E| <= gamma_{d+1} |Rᵀ||R|``,
    docs/design.md#tolerances-of-the-vectorized-paths), so the floored matrix is ``H``
    itself to round-off and ``H`` is returned for it: one factorization instead of an
    eigendecomposition and a product (a Newton step with ``rho`` on the diagonal, as in
    Table 2's server, never floors). The others are decomposed and floored.
    """
    d = H.shape[-1]
    shifted = H - clip * np.eye(d)
    try:
        np.linalg.cholesky(shifted)
        return H
    except np.linalg.LinAlgError:
        pass
    out = H.copy()
    for j, S in enumerate(shifted):
        try:
            np.linalg.cholesky(S)
        except np.linalg.LinAlgError:
            ev, vec = np.linalg.eigh(H[j])
            out[j] = (vec * np.maximum(ev, clip)) @ vec.T
    return out


def _breakdown(Hs: np.ndarray, idx: np.ndarray) -> NewtonBreakdown:
    """The worst-conditioned party of a batch whose Newton system could not be solved."""
    with np.errstate(all="ignore"):
        conds = np.array([np.linalg.cond(H) if np.all(np.isfinite(H)) else np.inf
                          for H in Hs])
    conds = np.where(np.isnan(conds), np.inf, conds)
    j = int(np.argmax(conds))
    H = Hs[j]
    norm = float(np.linalg.norm(H, 2)) if np.all(np.isfinite(H)) else np.inf
    return NewtonBreakdown(int(idx[j]), float(conds[j]), norm)


def lbfgsb_solve(merit: Merit, U0, lin, rho, ctr, tol, *, maxiter: int = 10_000,
                 maxfun: int = 20_000) -> tuple[np.ndarray, SolveInfo]:
    """Per-party L-BFGS-B (docs/decisions.md#constrfl-subproblem-solvers: analytic gradient, gtol =
    tol, ftol = 0),
    verified after.
    """
    U = np.array(U0, dtype=float, copy=True)
    b = U.shape[0]
    tol = np.broadcast_to(np.asarray(tol, dtype=float), (b,))
    iters = np.zeros(b, dtype=int)
    res = np.zeros(b)
    for j in range(b):
        sub = _restrict(merit, np.array([j]))
        lj, cj = _rows(lin, [j]), _rows(ctr, [j])

        def fun(u, sub=sub, lj=lj, cj=cj):
            u2 = u[None]
            return (float(_phi_value(sub, u2, lj, rho, cj)[0]),
                    _phi_grad(sub, u2, lj, rho, cj)[0])

        out = scipy.optimize.minimize(fun, U[j], jac=True, method="L-BFGS-B",
                                      options={"gtol": float(tol[j]), "ftol": 0.0,
                                               "maxiter": maxiter, "maxfun": maxfun})
        U[j] = out.x
        iters[j] = out.nit
        res[j] = np.max(np.abs(_phi_grad(sub, out.x[None], lj, rho, cj)))
    return U, SolveInfo(res, iters, res <= tol)


def solve(method: str, merit: Merit, U0, lin, rho, ctr, tol, merit_at_start=None,
          hess_cache=None, grad_at=None):
    """``merit_at_start``, ``hess_cache``, ``grad_at``: warm-start data and the extra
    gradient of the Newton methods (see :func:`newton_solve`; ignored by L-BFGS-B, the oracle,
    which evaluates everything; ``SolveInfo.grad_at`` is None there).
    """
    if method == "newton":
        return newton_solve(merit, U0, lin, rho, ctr, tol, merit_at_start=merit_at_start,
                            hess_cache=hess_cache, grad_at=grad_at)
    if method == "newton_clip":
        return newton_solve(merit, U0, lin, rho, ctr, tol, clip=1e-8,
                            merit_at_start=merit_at_start, hess_cache=hess_cache,
                            grad_at=grad_at)
    if method == "lbfgsb":
        U, info = lbfgsb_solve(merit, U0, lin, rho, ctr, tol)
        if not info.success.all():
            # Line-search failures close to the tolerance: polish with clipped Newton (§2.4).
            U, info2 = newton_solve(merit, U, lin, rho, ctr, tol, clip=1e-8, max_iter=50)
            info = SolveInfo(info2.residual, info.iterations + info2.iterations, info2.success)
        return U, info
    raise ValueError(f"method must be 'newton', 'newton_clip' or 'lbfgsb', got {method!r}")
