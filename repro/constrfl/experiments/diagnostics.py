"""Diagnostics behind the constrfl deviation entries.

``constrfl.rho_freeze``: why Table 2's paper set (beta 10, s_bar 1e-3, rho_i = 1e8, Sec. 5.2)
leaves w at w^0. It runs the first call of Algorithm 2 of that set (outer iteration k = 0, from
w^0, mu = 0; the package's classes, flags off) on the Table 2 problem for ``t_max`` rounds
without stopping, and records per round t

- how far w has moved, ``||w^{t+1} - w~^0||_inf``, and
- the stopping certificate of (23), ``eps_{t+1} + sum_i epst_i``, against tau_0 = s_bar;

then

- the **rho law**: ``||w^{T} - w~^0||_inf · rho`` at T = ``t_max`` for every rho of ``rhos``
  (same problem, same start). Constant across rho means the movement is c/rho: the
  algorithm's own rate in exact arithmetic (the bound (65): r = sigma rho/(rho^2 + 2L^2) ~
  sigma/rho), not round-off; a reformulation equal to Algorithm 2 in exact arithmetic (any
  rescaling of u, lambda, u~) gives the same iterates and cannot unfreeze it;
- the **float64 floor** of the clients' inner solves (19): the smallest ``||grad phi_{i,t}||_inf``
  the batched Newton reaches from the last round's state with tolerance 0 (``floor_iters``
  Newton steps), beside ``rho · ulp(||u||_inf)`` (the resolution of the rho (u - w) term),
  and the round ``t*`` from which eps_{t+1} = q^t (times the solver tolerance factor) asks
  for less than that floor: beyond it every client solve spins to Newton's iteration cap,
  which is why long T runs do not finish;
- ``rounds_per_efold``: 1/r of (65) with sigma = 1/((n+1) beta) (the prox term's modulus, a
  lower bound on the subproblem's) and L taken as 0, the fewest rounds the bound needs to
  cut its distance measure e-fold.

Scale: ``subsample`` rows as Table 2's smoke cells (2,000) or 0 for the paper's data.
"""

from __future__ import annotations

import numpy as np

from repro.constrfl.admm import ClientSide, InexactADMM, ServerSide
from repro.constrfl.experiments._fair import HYPER, config_for, fair_problem
from repro.constrfl.problem import unit_sphere_w0
from repro.constrfl.proxal import FedProxAL
from repro.constrfl.start import ProxALInit
from repro.constrfl.subsolvers import newton_solve

__all__ = ["first_admm_call", "inner_floor", "rho_freeze"]



def first_admm_call(n: int, trial: int, subsample: int, rho: float, t_max: int,
                    hyper: str = "paper") -> tuple[InexactADMM, dict]:
    """Run Algorithm 2's first call of Table 2's ``hyper`` set with ``rho`` for ``t_max``
    rounds without the (23) stop; return it and the per-round curves.
    """
    cfg = config_for(hyper, k_max=1, t_max=t_max).replace(rho=float(rho))
    problem = fair_problem(n, subsample)[0]
    w0 = unit_sphere_w0(problem.d, trial)
    alg = FedProxAL(problem, cfg, init=ProxALInit(w0))
    server_m, client_ms = alg.merits(w0)
    clients = ClientSide(client_ms, cfg.rho, cfg, "vectorized", alg.factor_cache)
    server = ServerSide(server_m, cfg.rho, clients.n, cfg, "vectorized", alg.factor_cache)
    admm = InexactADMM(server, clients, cfg.tau(0), w0, q=cfg.q, t_max=t_max,
                       eps_floor=cfg.reference.eps_floor)
    moved, cert, eps = [], [], []
    for _ in range(t_max):
        admm.step()
        moved.append(float(np.max(np.abs(server.w - w0))))
        cert.append(float(admm.certificate))
        eps.append(admm.eps(admm.t - 1))
    return admm, {"w_moved_inf": moved, "certificate": cert, "eps": eps,
                  "tau": cfg.tau(0), "d": problem.d, "config": cfg}


def inner_floor(admm: InexactADMM, iters: int = 30) -> dict:
    """Smallest ``||grad phi_{i,t}||_inf`` the clients' Newton (the Table 2 solver, clip 1e-8)
    reaches on their current subproblems (19) with tolerance 0, and ``rho · ulp(||u||_inf)``.
    """
    c = admm.clients
    floors, ulps = [], []
    for m, U, lam in zip(c.merits, c.U, c.Lam, strict=True):
        _, info = newton_solve(m, U, lam, c.rho, admm.server.w, 0.0, max_iter=iters, clip=1e-8)
        floors.append(float(np.min(info.residual)))
        ulps.append(float(c.rho * np.spacing(np.max(np.abs(U)))))
    return {"newton_floor": min(floors), "rho_ulp": max(ulps)}


def rho_freeze(n: int = 5, trial: int = 1, subsample: int = 0, t_max: int = 200,
               t_points: tuple[int, ...] = (10, 50, 100, 200),
               rhos: tuple[float, ...] = (1e4, 1e6, 1e8), floor_iters: int = 30) -> dict:
    """The ``constrfl.rho_freeze`` numbers (module docstring); ``rhos`` must contain 1e8."""
    rho = HYPER["paper"]["rho"]
    if rho not in rhos:
        raise ValueError(f"rhos must contain the paper's rho = {rho:g}, got {rhos}")
    if max(t_points) > t_max or min(t_points) < 1:
        raise ValueError(f"t_points must lie in 1..t_max = {t_max}, got {t_points}")
    out: dict = {"n": n, "trial": trial, "subsample": subsample, "t_max": t_max}
    law = {}
    for r in rhos:
        admm, curves = first_admm_call(n, trial, subsample, r, t_max)
        law[r] = curves["w_moved_inf"][-1] * r
        if r == rho:
            cfg = curves["config"]
            out.update(tau=curves["tau"], d=curves["d"],
                       vs_T={t: {"w_moved_inf": curves["w_moved_inf"][t - 1],
                                 "certificate": curves["certificate"][t - 1],
                                 "eps": curves["eps"][t - 1]} for t in t_points},
                       certified_by_T=bool(min(curves["certificate"]) <= curves["tau"]),
                       floor=inner_floor(admm, floor_iters))
            fl = out["floor"]["newton_floor"]
            # first round whose inner tolerance max(floor_tol, factor q^t) falls below it
            t_star = int(np.ceil(np.log(fl / cfg.reference.solver_tol_factor) / np.log(cfg.q)))
            out["t_star"] = t_star
            out["inner_tol_at_cap50"] = cfg.inner_tol(cfg.q ** 49)
            sigma = 1.0 / ((n + 1) * cfg.beta)
            out["rounds_per_efold"] = float(r / sigma)
    out["rho_times_moved"] = law
    vals = np.array(list(law.values()))
    out["rho_law_spread"] = float(vals.max() / vals.min() - 1.0)
    return out
