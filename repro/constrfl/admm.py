"""Algorithm 2: inexact ADMM on the consensus form (24)-(28) of subproblem (12).

    min_{w, u_1..u_n}  P_0(w) + h(w) + sum_i P_i(u_i)   s.t.  u_i = w                   (24)

One ``step()`` is one round t (lines 3-10)::

    eps_{t+1} = q^t
    server : w^{t+1} ≈ argmin P_0(w) + sum_i (rho_i/2) ||u~_i^t - w||^2                 (18)
    client : u_i^{t+1} ≈ argmin P_i(u) + <lambda_i^t, u - w^{t+1}> + (rho_i/2)||u - w^{t+1}||^2 (19)
             epst_i = ||grad P_i(w^{t+1}) + lambda_i^t - rho_i (w^{t+1} - u_i^t)||_inf       (22)
             lambda_i^{t+1} = lambda_i^t + rho_i (u_i^{t+1} - w^{t+1})                       (20)
             u~_i^{t+1} = u_i^{t+1} + lambda_i^{t+1} / rho_i                                 (21)
    server : stop with w^{t+1} if  eps_{t+1} + sum_i epst_i <= tau                        (23)

Initialisation (line 1): ``u_i^0 = w~0``, ``lambda_i^0 = -grad P_i(w~0)``,
``u~_i^0 = w~0 - grad P_i(w~0)/rho_i`` (sent once, Sec. 4.3). The server and the clients are
separate objects exchanging only the messages of :mod:`repro.constrfl.messages`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from repro.constrfl.config import ProxALConfig
from repro.constrfl.merit import Merit
from repro.constrfl.messages import Broadcast, ClientUpload, InitialUpload
from repro.constrfl.subsolvers import ExactQuadratic, FactorCache, NewtonBreakdown, solve

__all__ = ["ADMMResult", "ClientSide", "InexactADMM", "ServerSide", "choose_method"]


def choose_method(block, solver: str) -> str:
    """``auto`` (docs/decisions.md#constrfl-subproblem-solvers): exact for quadratic P, Newton for
    convex c, L-BFGS-B otherwise.
    """
    if solver != "auto":
        if solver == "exact" and not block.quadratic_merit:
            raise ValueError("solver='exact' needs quadratic merit functions")
        return solver
    if block.quadratic_merit:
        return "exact"
    return "newton" if block.convex_constraints else "lbfgsb"


class _BlockSolver:
    """Solves ``min P(u) + <lin, u> + (rho/2)||u - ctr||^2`` for every party of one block."""

    def __init__(self, merit: Merit, rho: float, method: str, backend: str,
                 cache: FactorCache | None = None, hessian_reuse: bool = False):
        self.merit, self.rho, self.method, self.backend = merit, rho, method, backend
        self.hessian_reuse = hessian_reuse
        if method == "exact":
            fast = backend == "vectorized"
            if fast and cache is not None:      # Q and its factors: once per Algorithm-1 run
                Q, factors = cache.get(merit, rho)
            else:
                Q, factors = merit.quadratic_matrix(), None
            self.exact = ExactQuadratic(Q, merit.quadratic_linear(), rho, factorize=fast,
                                        factors=factors)

    def __call__(self, U0, lin, ctr, tol, cache: dict | None = None, grad_at=None):
        """``(U, residuals, iterations, grad P(grad_at) or None)``. ``cache`` (vectorized
        Newton only): ``{"at": U, "merit": (P(U), grad P(U), parts)}`` of this block, reused
        when ``U0`` is that ``U`` and refreshed with the output. ``grad_at`` (vectorized Newton
        only): points whose ``grad P`` the solve evaluates with its first trial point
        (:func:`repro.constrfl.subsolvers.newton_solve`); None is returned otherwise.
        """
        if self.method == "exact":
            U = self.exact.solve(lin, np.broadcast_to(ctr, U0.shape))
            res = self.exact.residual(U, lin, np.broadcast_to(ctr, U0.shape))
            return U, res, np.zeros(len(U), dtype=int), None
        if self.backend == "loop":
            outs = []
            for j in range(U0.shape[0]):
                sub = Merit(self.merit.block.take(j), self.merit.mu[j:j + 1],
                            self.merit.center, self.merit.beta, self.merit.prox)
                ctr_j = ctr if np.ndim(ctr) == 1 else ctr[j:j + 1]
                outs.append(solve(self.method, sub, U0[j:j + 1], lin[j:j + 1], self.rho,
                                  ctr_j, tol))
            U = np.concatenate([o[0] for o in outs])
            return (U, np.concatenate([o[1].residual for o in outs]),
                    np.concatenate([o[1].iterations for o in outs]), None)
        start = None
        if cache is not None and cache.get("at") is U0:
            start = cache["merit"]
        hess = (cache.setdefault("hess", {}) if cache is not None and self.hessian_reuse
                else None)
        U, info = solve(self.method, self.merit, U0, lin, self.rho, ctr, tol, start, hess,
                        grad_at)
        if cache is not None:
            cache.pop("at", None)
            cache.pop("merit", None)
            if info.merit_at is not None:
                cache.update(at=U, merit=info.merit_at)
        return U, info.residual, info.iterations, info.grad_at


class ClientSide:
    """The clients' half of Algorithm 2: their merits P_i, states u_i, lambda_i, never shared.

    ``merits`` is a list of blocks (clients of equal size form one vectorized block).
    """

    def __init__(self, merits: list[Merit], rho: float, config: ProxALConfig, backend: str,
                 factor_cache: FactorCache | None = None):
        self.merits, self.rho, self.config = merits, rho, config
        self.solvers = [_BlockSolver(m, rho, choose_method(m.block, config.solver), backend,
                                     factor_cache, config.hessian_reuse) for m in merits]
        self.U: list[np.ndarray] = []
        self.Lam: list[np.ndarray] = []
        # per block: P and grad P at the current u_i (P is fixed within this Algorithm-2 call)
        self._merit_cache: list[dict] = [{} for _ in merits]
        self.solver_iterations = 0
        self.max_residual_ratio = 0.0

    @property
    def n(self) -> int:
        return sum(m.block.size for m in self.merits)

    def start(self, w0: np.ndarray) -> list[InitialUpload]:
        """Line 1: ``u_i^0 = w~0``, ``lambda_i^0 = -grad P_i(w~0)``; upload u~_i^0."""
        ups, j = [], 0
        self.U, self.Lam = [], []
        self._merit_cache = [{} for _ in self.merits]
        for m, cache in zip(self.merits, self._merit_cache, strict=True):
            W = np.broadcast_to(w0, (m.block.size, w0.size)).copy()
            if hasattr(m.block, "loss_parts"):       # value and gradient from one pass
                cache.update(at=W, merit=m.value_grad_parts(W))
                lam = -cache["merit"][1]
            else:
                lam = -m.grad(W)
            self.U.append(W)
            self.Lam.append(lam)
            for ut in W + lam / self.rho:
                ups.append(InitialUpload(j, ut))
                j += 1
        return ups

    def round(self, msg: Broadcast, eps: float) -> list[ClientUpload]:
        """Lines 7-9 for every client, given the broadcast w^{t+1} and eps_{t+1}."""
        w = msg.w
        cfg = self.config
        tol = cfg.inner_tol(eps)
        ups, j = [], 0
        for b, (m, solver) in enumerate(zip(self.merits, self.solvers, strict=True)):
            U_old, lam_old = self.U[b], self.Lam[b]
            W = np.broadcast_to(w, U_old.shape)
            # grad P_i(w^{t+1}) of (22) comes from the solve's first pass over the rows
            U_new, res, its, gW = solver(U_old, lam_old, w, tol, self._merit_cache[b], W)
            self.solver_iterations += int(np.sum(its))
            if eps > 0:   # q^t underflows to 0 after ~7,000 rounds (q = 0.9, eps_floor = 0)
                self.max_residual_ratio = max(self.max_residual_ratio, float(np.max(res)) / eps)
            lam_new = lam_old + self.rho * (U_new - w)                             # (20)
            gW = m.grad(W) if gW is None else gW
            lam_e = lam_new if cfg.reference.epst_lambda == "new" else lam_old
            u_e = U_new if cfg.reference.epst_u == "new" else U_old
            epst = np.max(np.abs(gW + lam_e - self.rho * (W - u_e)), axis=1)      # (22)
            self.U[b], self.Lam[b] = U_new, lam_new
            for ut, e in zip(U_new + lam_new / self.rho, epst, strict=True):     # (21)
                ups.append(ClientUpload(j, ut, float(e)))
                j += 1
        return ups


class ServerSide:
    """The server's half of Algorithm 2: P_0, the aggregation (18) and the stop test (23)."""

    def __init__(self, merit: Merit, rho: float, n_blocks: int, config: ProxALConfig,
                 backend: str, factor_cache: FactorCache | None = None):
        self.merit, self.config = merit, config
        self.rho_total = rho * n_blocks
        self.solver = _BlockSolver(merit, self.rho_total,
                                   choose_method(merit.block, config.solver), backend,
                                   factor_cache)
        self.w: np.ndarray | None = None
        self.u_tilde: np.ndarray | None = None
        self.residual = 0.0
        # P_0 and grad P_0 at the last output (P_0 is fixed within one Algorithm-2 call): the
        # next round's solve starts there, so its start is not evaluated again (same numbers).
        self._cache: dict = {}
        self._W: np.ndarray | None = None
        self._w_out: np.ndarray | None = None

    def receive_initial(self, w0: np.ndarray, ups: list[InitialUpload]) -> None:
        self.w = np.array(w0, dtype=float)
        self._cache, self._W = {}, None
        self.u_tilde = np.stack([u.u_tilde for u in sorted(ups, key=lambda u: u.client)])

    def aggregate(self, eps: float) -> Broadcast:
        """Lines 4-6: solve (18) to ``dist_inf(0, ∂phi_0) <= eps`` and broadcast w^{t+1}."""
        ctr = self.u_tilde.mean(axis=0)
        tol = self.config.inner_tol(eps)
        same = self._W is not None and self._w_out is self.w    # w not replaced since then
        start = self._W if same else self.w[None]
        W, res, _, _ = self.solver(start, np.zeros((1, self.w.size)), ctr, tol, self._cache)
        self._W, self._w_out = W, W[0]
        self.w, self.residual = self._w_out, float(res[0])
        return Broadcast(self.w.copy())

    def receive(self, ups: list[ClientUpload]) -> float:
        """Line 10: store the u~_i^{t+1}; return ``sum_i epst_i``."""
        ups = sorted(ups, key=lambda u: u.client)
        self.u_tilde = np.stack([u.u_tilde for u in ups])
        return float(sum(u.epst for u in ups))

    def server_term(self, eps: float) -> float:
        """The server's term in (23) (flag ``stop_server_term``): ``"bound"`` is the printed
        eps_{t+1}; the default ``"measured"`` is docs/decisions.md#constrfl-server-term-23's
        recommendation (the achieved residual of an exact solve, eps_{t+1} otherwise), not the
        paper's text.
        """
        mode = self.config.reference.stop_server_term
        if mode == "bound" or (mode == "measured" and self.solver.method != "exact"):
            return eps
        return self.residual if mode == "measured" else 0.0


@dataclass
class ADMMResult:
    """One call's output ``w``, its round count, whether it stopped by (23) (``certified``)
    and its last certificate, the floats sent each way and (``keep_history``) per-round data.
    """

    w: np.ndarray
    rounds: int
    certified: bool
    certificate: float
    floats_up: int
    floats_down: int
    history: list[dict] = field(default_factory=list)


class InexactADMM:
    """Algorithm 2 for one subproblem (12), given the merits of the server and the clients."""

    def __init__(self, server: ServerSide, clients: ClientSide, tau: float, w_init: np.ndarray,
                 *, q: float, t_max: int, eps_floor: float = 0.0, keep_history: bool = False):
        self.server, self.clients = server, clients
        self.tau, self.q, self.t_max, self.eps_floor = tau, q, t_max, eps_floor
        self.keep_history = keep_history
        self.t = 0
        self.floats_up = self.floats_down = 0
        ups = clients.start(np.asarray(w_init, dtype=float))
        self.floats_up += sum(u.floats() for u in ups)
        server.receive_initial(w_init, ups)
        self.certificate = np.inf
        self.history: list[dict] = []
        # what crossed the wire in this call, in order: line 1's uploads, then per round t the
        # broadcast w^{t+1} (line 6) and the clients' uploads (line 9)
        self.initial_uploads: list[InitialUpload] = ups
        self.exchanged: list[tuple[Broadcast, list[ClientUpload]]] = []

    def eps(self, t: int) -> float:
        """Line 3: ``eps_{t+1} = q^t`` (floored at ``eps_floor`` in the reference scripts)."""
        return max(self.eps_floor, self.q ** t)

    def step(self) -> tuple[Broadcast, list[ClientUpload]]:
        eps = self.eps(self.t)
        try:
            msg = self.server.aggregate(eps)
        except NewtonBreakdown as exc:   # say where Algorithm 2 broke down (Algorithm 1 reports)
            exc.where = f"server step (18) of ADMM round {self.t}"
            raise
        try:
            ups = self.clients.round(msg, eps)
        except NewtonBreakdown as exc:
            exc.where = f"client step (19) of ADMM round {self.t}"
            raise
        self.floats_down += msg.floats() * self.clients.n
        self.floats_up += sum(u.floats() for u in ups)
        total = self.server.receive(ups)
        self.certificate = self.server.server_term(eps) + total
        if self.keep_history:
            self.history.append({"t": self.t, "eps": eps, "server_residual":
                                 self.server.residual, "sum_epst": total,
                                 "w": msg.w.copy(), "U": [u.copy() for u in self.clients.U],
                                 "Lam": [lam.copy() for lam in self.clients.Lam],
                                 "epst": [u.epst for u in ups]})
        self.exchanged.append((msg, ups))
        self.t += 1
        return msg, ups

    def run(self) -> ADMMResult:
        certified = False
        while self.t < self.t_max:
            self.step()
            if self.certificate <= self.tau:
                certified = True
                break
        return ADMMResult(self.server.w.copy(), self.t, certified, self.certificate,
                          self.floats_up, self.floats_down, self.history)
