"""Paper 003's merit functions, subproblem solve, KKT residuals and ground truth, written here
from the paper (no check).

The problem's parties (server i = 0, clients i = 1..n) each hold ``f_i`` and constraints
``c_i(w) <= 0`` (``= 0`` for an equality block); their values and derivatives are the problem's
definition (the instance builder's blocks: ``f``, ``grad_f``, ``hess_f``, ``c``, ``jac_c``,
``hess_c_weighted``). Written here:

* (13)-(14) the local merit ``P_{i,k}(w) = f_i(w) + (1/(2 beta)) (||[mu_i + beta c_i(w)]_+||^2 -
  ||mu_i||^2) + (prox/2) ||w - w^k||^2``, its gradient (50) and generalized Hessian (``[.]_+``
  dropped for equality constraints); ``prox = 1/((n+1) beta)`` (paper);
* (12) ``ell_k = sum_i P_{i,k}`` and its minimiser by damped Newton;
* Definition 1's residuals ``||grad f + grad c mu||_inf`` and the complementarity-feasibility
  residual;
* the KKT pair ``(w*, mu*)`` of (5) by cvxpy (Clarabel at 1e-10, else 1e-9, else 1e-8;
  ``optimal`` required),
  polished by Newton's method on the KKT equations of its active constraints
  (``grad f + J_A' mu_A = 0``, ``c_A = 0``) to round-off.
"""

from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np

__all__ = ["Ground", "LocalMerit", "kkt_residuals", "merits", "newton_min", "parties",
           "stack_mu", "subproblem"]


def parties(problem) -> list:
    """The one-party blocks in party order: the server, then every client of every block."""
    out = [problem.server]
    for blk in problem.clients:
        out += [blk.take(j) for j in range(blk.size)]
    return out


def stack_mu(mu_list) -> np.ndarray:
    return np.concatenate([np.ravel(m) for m in mu_list])


@dataclass
class LocalMerit:
    """``P_{i,k}`` of one party (module docstring)."""

    block: object
    mu: np.ndarray
    center: np.ndarray
    beta: float
    prox: float

    def _a(self, w):
        s = self.mu + self.beta * self.block.c(w[None])[0]
        return s if self.block.equality else np.maximum(s, 0.0), s

    def value(self, w) -> float:
        a, _ = self._a(w)
        dw = w - self.center
        return float(self.block.f(w[None])[0] + (a @ a - self.mu @ self.mu) / (2 * self.beta)
                     + 0.5 * self.prox * dw @ dw)

    def grad(self, w) -> np.ndarray:
        a, _ = self._a(w)
        W = w[None]
        return (self.block.grad_f(W)[0] + self.block.jac_c(W)[0].T @ a
                + self.prox * (w - self.center))

    def hess(self, w) -> np.ndarray:
        a, s = self._a(w)
        W = w[None]
        J = self.block.jac_c(W)[0]
        act = np.ones_like(s) if self.block.equality else (s > 0).astype(float)
        H = (self.block.hess_f(W)[0] + self.block.hess_c_weighted(W, a[None])[0]
             + self.beta * (J.T * act) @ J)
        return H + self.prox * np.eye(w.size)


def merits(problem, mu_list, center, beta: float, prox: float) -> list[LocalMerit]:
    """Every party's ``P_{i,k}`` at multipliers ``mu_list`` (party order), centre and prox."""
    return [LocalMerit(b, np.asarray(m, dtype=float).ravel(), np.asarray(center, float), beta,
                       prox) for b, m in zip(parties(problem), mu_list, strict=True)]


def newton_min(ms: list[LocalMerit], w0, tol: float = 1e-13, max_iter: int = 200
               ) -> tuple[np.ndarray, float]:
    """``argmin sum_i P_i`` by Newton's method with backtracking; ``(w, ||grad||_inf)``."""
    w = np.array(w0, dtype=float)

    def val(x):
        return sum(m.value(x) for m in ms)

    g = sum(m.grad(w) for m in ms)
    for _ in range(max_iter):
        if np.abs(g).max() <= tol:
            break
        H = sum(m.hess(w) for m in ms)
        step = np.linalg.solve(H, g)
        if np.abs(g).max() < 1e-6:
            # the quadratic-convergence region: full steps while they shrink the gradient
            # (function values no longer resolve a decrease there)
            g_full = sum(m.grad(w - step) for m in ms)
            if np.abs(g_full).max() >= np.abs(g).max():
                break
            w, g = w - step, g_full
            continue
        t, f0 = 1.0, val(w)
        while val(w - t * step) > f0 - 1e-4 * t * g @ step and t > 1e-10:
            t *= 0.5
        w = w - t * step
        g = sum(m.grad(w) for m in ms)
    return w, float(np.abs(g).max())


def subproblem(problem, mu_list, center, beta: float, prox: float, w0=None,
               tol: float = 1e-13) -> tuple[np.ndarray, float]:
    """The minimiser of (12) ``ell_k`` (all parties' merits with per-party ``prox``)."""
    ms = merits(problem, mu_list, center, beta, prox)
    return newton_min(ms, center if w0 is None else w0, tol)


def kkt_residuals(problem, w, mu_list) -> tuple[float, float]:
    """Definition 1: ``(||grad f(w) + grad c(w) mu||_inf, max_j e_j)`` with ``e_j = |c_j|``
    where ``mu_j > 0`` (and for equality constraints), ``max(c_j, 0)`` where ``mu_j = 0``.
    """
    g = np.zeros_like(w)
    feas = 0.0
    for b, mu in zip(parties(problem), mu_list, strict=True):
        W = w[None]
        mu = np.asarray(mu, dtype=float).ravel()
        g += b.grad_f(W)[0] + b.jac_c(W)[0].T @ mu
        c = b.c(W)[0]
        e = np.abs(c) if b.equality else np.where(mu > 0, np.abs(c), np.maximum(c, 0.0))
        feas = max(feas, float(np.max(e, initial=0.0)))
    return float(np.max(np.abs(g))), feas


def _cvx_f(b, w):
    """A one-party block's objective as a cvxpy expression."""
    if hasattr(b, "X"):  # logistic: sum_j fw_j (log(1 + e^{x_j'w}) - y_j x_j'w)
        z = b.X[0] @ w
        return b.fw[0] @ (cp.logistic(z) - cp.multiply(b.y[0], z))
    out = 0
    if b.A is not None:
        out = out + 0.5 * cp.quad_form(w, cp.psd_wrap(b.A[0]))
    if b.bvec is not None:
        out = out + b.bvec[0] @ w
    return out


def _cvx_c(b, w) -> list:
    """A one-party block's constraints as cvxpy expressions."""
    if hasattr(b, "X"):
        z = b.X[0] @ w
        phi = cp.logistic(z) - cp.multiply(b.y[0], z)
        return [b.Gw[0, k] @ phi - b.r[0, k] for k in range(b.Gw.shape[1])]
    out = []
    for k in range(b.G.shape[1]):
        e = b.G[0, k] @ w + b.r[0, k]
        if b.H is not None:
            e = e + 0.5 * cp.quad_form(w, cp.psd_wrap(b.H[0, k]))
        out.append(e)
    return out


def polish_kkt(problem, w, mus, steps: int = 8):
    """Newton's method on the KKT equations of the active constraints (multiplier above 1e-7
    or constraint within 1e-7 of 0): ``grad f(w) + sum_A mu_j grad c_j(w) = 0``, ``c_A(w) = 0``;
    the inactive multipliers are 0. Returns the pair unchanged when no step reduces the
    residual.
    """
    ps = parties(problem)
    flat = stack_mu(mus)
    cvals = np.concatenate([b.c(w[None])[0] for b in ps])
    equality = np.concatenate([np.full(b.c(w[None]).shape[1], b.equality) for b in ps])
    active = np.flatnonzero(equality | (flat > 1e-7) | (np.abs(cvals) < 1e-7))
    d = w.size

    def parts(x, lam_a):
        lam = np.zeros_like(flat)
        lam[active] = lam_a
        g, H, J, c, i = np.zeros(d), np.zeros((d, d)), [], [], 0
        for b in ps:
            W = x[None]
            m = b.c(W).shape[1]
            mu_b = lam[i:i + m]
            Jb = b.jac_c(W)[0]
            g += b.grad_f(W)[0] + Jb.T @ mu_b
            H += b.hess_f(W)[0] + b.hess_c_weighted(W, mu_b[None])[0]
            J.append(Jb)
            c.append(b.c(W)[0])
            i += m
        J, c = np.concatenate(J)[active], np.concatenate(c)[active]
        return g, H, J, c

    x, la = w.copy(), flat[active].copy()
    for _ in range(steps):
        g, H, J, c = parts(x, la)
        res = np.concatenate([g, c])
        if np.abs(res).max() < 1e-14:
            break
        K = np.block([[H, J.T], [J, np.zeros((len(active), len(active)))]])
        try:
            step = np.linalg.solve(K, res)
        except np.linalg.LinAlgError:
            break
        x, la = x - step[:d], la - step[d:]
    if np.any(la[~equality[active]] < 0):  # the active set was wrong: keep the solver's pair
        return w, mus
    lam = np.zeros_like(flat)
    lam[active] = la
    out, i = [], 0
    for m in mus:
        out.append(lam[i:i + len(m)])
        i += len(m)
    return x, out


@dataclass
class Ground:
    """The cvxpy solves of a check: statuses kept for the result's ``ground_truth``."""

    statuses: Counter = field(default_factory=Counter)

    def kkt(self, problem) -> tuple[np.ndarray, list[np.ndarray]]:
        """``(w*, [mu*_i])`` of (5) (inequality constraints) by cvxpy/Clarabel at 1e-10."""
        w = cp.Variable(problem.d)
        ps = parties(problem)
        exprs = [_cvx_c(b, w) for b in ps]
        cons = [e == 0 if b.equality else e <= 0 for b, party in zip(ps, exprs, strict=True)
                for e in party]
        prob = cp.Problem(cp.Minimize(sum(_cvx_f(b, w) for b in ps)), cons)
        for tol in (1e-10, 1e-9, 1e-8):  # "optimal_inaccurate" at one tolerance: the next
            try:
                with warnings.catch_warnings():  # an inaccurate status is retried, then counted
                    warnings.simplefilter("ignore", UserWarning)
                    prob.solve(solver=cp.CLARABEL, tol_gap_abs=tol, tol_gap_rel=tol,
                               tol_feas=tol, max_iter=500)
            except cp.error.SolverError:
                continue
            if prob.status == "optimal":
                break
        self.statuses[prob.status] += 1
        duals, i = [], 0
        for b, party in zip(ps, exprs, strict=True):
            dual = np.array([float(np.ravel(cons[i + k].dual_value)[0])
                             for k in range(len(party))])
            duals.append(dual if b.equality else np.maximum(dual, 0.0))
            i += len(party)
        return polish_kkt(problem, np.asarray(w.value, dtype=float), duals)

    def subproblem(self, problem, mu_list, center, beta: float, prox_total: float
                   ) -> np.ndarray:
        """The minimiser of (12) by cvxpy (Clarabel at 1e-9), an independent cross-check of
        :func:`subproblem` (``prox_total`` the summed prox weight).
        """
        w = cp.Variable(problem.d)
        al = 0
        for b, mu in zip(parties(problem), mu_list, strict=True):
            for k, e in enumerate(_cvx_c(b, w)):
                s_k = float(np.ravel(mu)[k]) + beta * e
                al = al + cp.square(s_k if b.equality else cp.pos(s_k))
        obj = (sum(_cvx_f(b, w) for b in parties(problem)) + al / (2 * beta)
               + 0.5 * prox_total * cp.sum_squares(w - center))
        prob = cp.Problem(cp.Minimize(obj))
        for tol in (1e-9, 1e-8, 1e-7):
            try:
                with warnings.catch_warnings():  # an inaccurate status is retried, then counted
                    warnings.simplefilter("ignore", UserWarning)
                    prob.solve(solver=cp.CLARABEL, tol_gap_abs=tol, tol_gap_rel=tol,
                               tol_feas=tol, max_iter=500)
            except cp.error.SolverError:
                continue
            if prob.status == "optimal":
                break
        self.statuses[prob.status] += 1
        return np.asarray(w.value, dtype=float)

    @property
    def all_optimal(self) -> bool:
        return set(self.statuses) <= {"optimal"} and bool(self.statuses)

    def as_dict(self) -> dict:
        return {"solver": "CLARABEL", "cvxpy_version": cp.__version__,
                "settings": "tolerances 1e-10", "statuses": dict(self.statuses)}


def state_mu(state) -> list[np.ndarray]:
    """The per-party multipliers of an Algorithm 1 state (``mu0`` (1, m0), ``mus`` one array
    per client block): the iterate as the package holds it, in party order.
    """
    out = [np.asarray(state.mu0, dtype=float)[0]]
    for m in state.mus:
        out += [np.asarray(row, dtype=float) for row in m]
    return out


def outer_merits(problem, w_k, mu_list, beta: float, offset: int = 1) -> list[LocalMerit]:
    """The merits of outer iteration k (13)-(14): centre w^k, multipliers mu^k, prox
    ``1/((n + offset) beta)`` per party (``offset = 1``: the paper's n + 1 parties).
    """
    return merits(problem, mu_list, w_k, beta, 1.0 / ((problem.n + offset) * beta))


def grad_sum(ms: list[LocalMerit], w) -> np.ndarray:
    """``grad ell_k(w) = sum_i grad P_{i,k}(w)``."""
    return sum(m.grad(w) for m in ms)


__all__ += ["grad_sum", "outer_merits", "state_mu"]
