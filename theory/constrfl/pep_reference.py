"""Reference quantities of the PEP rate checks, computed here from paper 003's formulas on the
raw data of a quadratic instance (never from the package's merit or solver code).

A party's data are ``f(w) = ½wᵀAw + bᵀw`` and ``c_j(w) = ½wᵀH_jw + g_jᵀw + r_j`` (the arrays
of the package's instance builder). For multipliers ``mu``, centre ``w^k``, penalty beta and
proximal weight ``prox``:

* (13)-(14): ``P(w) = f(w) + (||[mu + beta c(w)]_+||^2 - ||mu||^2) / (2 beta)
  + prox/2 ||w - w^k||^2``;
* (50): ``grad P(w) = grad f(w) + Jc(w)ᵀ [mu + beta c(w)]_+ + prox (w - w^k)``;
* its generalized Hessian ``A + sum_j a_j H_j + beta sum_{j: a_j > 0} grad c_j grad c_jᵀ
  + prox I`` with ``a = [mu + beta c(w)]_+`` (the Lipschitz constant of Lemma B.2 on a ball is
  the largest norm of these over the ball);
* the minimiser of ``ell = sum_i P_i`` (w~* of Sec. 4.2; with prox = 1/((n+1) beta) per party,
  the argmin of (12) and the resolvent's w-part (40)) by damped Newton to
  ``||grad ell||_inf <= 1e-13``;
* the KKT pair ``(w*, mu*)`` of problem (5) by cvxpy (Clarabel).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Party", "kkt_pair", "lipschitz_on_ball", "minimise", "parties_of", "resolvent"]


@dataclass(frozen=True)
class Party:
    """One party's merit P of (13)-(14), from its raw quadratic data."""

    A: np.ndarray        # (d, d)
    b: np.ndarray        # (d,)
    H: np.ndarray        # (m, d, d)
    g: np.ndarray        # (m, d)
    r: np.ndarray        # (m,)
    mu: np.ndarray       # (m,)
    center: np.ndarray   # (d,)
    beta: float
    prox: float
    equality: bool = False

    def _a(self, w):
        s = self.mu + self.beta * self.c(w)
        return s if self.equality else np.maximum(s, 0.0)

    def c(self, w):
        return 0.5 * np.einsum("i,kij,j->k", w, self.H, w) + self.g @ w + self.r

    def jac(self, w):
        return np.einsum("kij,j->ki", self.H, w) + self.g

    def value(self, w) -> float:
        a, dw = self._a(w), w - self.center
        return float(0.5 * w @ self.A @ w + self.b @ w + (a @ a - self.mu @ self.mu)
                     / (2 * self.beta) + 0.5 * self.prox * dw @ dw)

    def grad(self, w) -> np.ndarray:
        return self.A @ w + self.b + self.jac(w).T @ self._a(w) + self.prox * (w - self.center)

    def hess(self, w) -> np.ndarray:
        a, J = self._a(w), self.jac(w)
        active = np.ones_like(a) if self.equality else (a > 0).astype(float)
        return (self.A + np.einsum("k,kij->ij", a, self.H)
                + self.beta * (J.T * active) @ J + self.prox * np.eye(w.size))


def _block_parties(block, mus, center, beta, prox) -> list[Party]:
    d, out = block.d, []
    for j in range(block.G.shape[0]):
        m = block.G.shape[1]
        out.append(Party(
            np.zeros((d, d)) if block.A is None else block.A[j],
            np.zeros(d) if block.bvec is None else block.bvec[j],
            np.zeros((m, d, d)) if block.H is None else block.H[j],
            block.G[j], block.r[j], np.asarray(mus[j], dtype=float), center, beta, prox,
            bool(block.equality)))
    return out


def parties_of(problem, mu0, mus, center, beta: float, prox: float) -> list[Party]:
    """``[P_0, P_1, ..., P_n]`` of (13)-(14) for a one-client-block quadratic instance."""
    (clients,) = problem.clients
    return (_block_parties(problem.server, [mu0], center, beta, prox)
            + _block_parties(clients, mus, center, beta, prox))


def _accepted(parties, w, step, t, f0, slope, res) -> bool:
    """Armijo on the value, or (near the minimiser, where the value's decrease is below its
    float resolution) a gradient at most half as large.
    """
    v = w - t * step
    if sum(p.value(v) for p in parties) <= f0 - 1e-4 * t * slope:
        return True
    return float(np.max(np.abs(sum(p.grad(v) for p in parties)))) < 0.5 * res


def minimise(parties: list[Party], start: np.ndarray, tol: float = 1e-13,
             max_iter: int = 200) -> tuple[np.ndarray, float]:
    """The argmin of ``sum_i P_i`` by damped Newton (backtracking): ``(w, ||grad||_inf)``.
    Raises ``RuntimeError`` when the tolerance is not reached.
    """
    w = np.array(start, dtype=float)
    for _ in range(max_iter):
        g = sum(p.grad(w) for p in parties)
        res = float(np.max(np.abs(g)))
        if res <= tol:
            return w, res
        step = np.linalg.solve(sum(p.hess(w) for p in parties), g)
        f0, t = sum(p.value(w) for p in parties), 1.0
        while t > 1e-12 and not _accepted(parties, w, step, t, f0, g @ step, res):
            t *= 0.5
        if t <= 1e-12:
            break
        w = w - t * step
    g = sum(p.grad(w) for p in parties)
    res = float(np.max(np.abs(g)))
    if res > 1e3 * tol:
        raise RuntimeError(f"Newton on sum_i P_i stopped at ||grad||_inf = {res:.3g} > {tol}")
    return w, res


def resolvent(problem, beta: float, w_bar: np.ndarray, mu_bar: list[np.ndarray]):
    """``J(w̄, mū)`` of (36)-(41): ``w⁺ = argmin ell`` (prox 1/((n+1) beta) per party, i.e.
    1/beta in all) and ``mu⁺ = [mū + beta c(w⁺)]_+``; returns ``(w⁺, [mu⁺_0, ..., mu⁺_n])``.
    """
    n = problem.n
    parties = parties_of(problem, mu_bar[0], mu_bar[1:], w_bar, beta, 1.0 / ((n + 1) * beta))
    w, _ = minimise(parties, w_bar)
    return w, [np.maximum(p.mu + beta * p.c(w), 0.0) for p in parties]


def kkt_pair(problem) -> tuple[np.ndarray, list[np.ndarray], str]:
    """``(w*, [mu*_0, ..., mu*_n], status)`` of problem (5) (``min sum f_i s.t. c_i <= 0``)
    by cvxpy with Clarabel.
    """
    import cvxpy as cp

    zero = np.zeros(0)
    parties = parties_of(problem, zero, [zero] * problem.n, np.zeros(problem.d), 1.0, 0.0)
    w = cp.Variable(problem.d)
    obj, cons = 0, []
    for p in parties:
        if np.any(p.A):
            obj = obj + 0.5 * cp.quad_form(w, 0.5 * (p.A + p.A.T), assume_PSD=True)
        obj = obj + p.b @ w
        rows = [0.5 * cp.quad_form(w, 0.5 * (Hj + Hj.T), assume_PSD=True) + gj @ w + rj
                if np.any(Hj) else gj @ w + rj for Hj, gj, rj in zip(p.H, p.g, p.r, strict=True)]
        cons.append(cp.hstack(rows) <= 0)
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver=cp.CLARABEL)
    mus = [np.maximum(np.asarray(c.dual_value, dtype=float).ravel(), 0.0) for c in cons]
    return np.asarray(w.value, dtype=float), mus, str(prob.status)


def lipschitz_on_ball(parties: list[Party], center: np.ndarray, radius: float,
                      rng: np.random.Generator, samples: int) -> float:
    """1.1 x the largest generalized-Hessian norm of the parties sampled in ``B(center,
    radius)`` (half on the sphere, where the quadratic penalties bend most): Lemma B.2's
    ``L_{∇P}`` on the ball. The checks then measure, on the run's own points, that the
    instance lies in the class ``F_{sigma, L}`` with this L.
    """
    d = center.size
    g = rng.standard_normal((samples, d))
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    rad = radius * np.where(np.arange(samples) % 2 == 0, 1.0,
                            rng.uniform(size=samples) ** (1.0 / d))
    best = 0.0
    for v in np.vstack([center[None], center + rad[:, None] * g]):
        for p in parties:
            best = max(best, float(np.max(np.abs(np.linalg.eigvalsh(p.hess(v))))))
    return 1.1 * best
