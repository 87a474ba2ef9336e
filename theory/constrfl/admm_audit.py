"""Algorithm 2 as the package runs it, its rounds re-evaluated with the paper's formulas, and
the constants of Lemma B.2 and Theorem 4.2 (no check; :mod:`theory.constrfl.inner_bounds` and
:mod:`theory.constrfl.admm_rate` use them).
"""

from __future__ import annotations

import numpy as np

from repro.constrfl.admm import ClientSide, InexactADMM, ServerSide
from repro.constrfl.config import ProxALConfig, ReferenceFlags
from repro.constrfl.merit import Merit
from theory.constrfl.reference import LocalMerit
from theory.constrfl.schedule import admm_tolerance

__all__ = ["BETA", "ROUND_OFF", "audit_admm", "b_constant", "lipschitz_on_ball",
           "package_admm", "q_r", "rounds_bound", "rounds_floor"]

BETA = 2.0
ROUND_OFF = 1e-13


def package_admm(sm: Merit, cm: Merit, w0: np.ndarray, rho: float, q: float, tau: float,
                 t_max: int):
    """Algorithm 2 as the package runs it (``repro.constrfl.admm``: ``ServerSide``,
    ``ClientSide``, ``InexactADMM``) on the package's merit objects it is handed (its inputs),
    paper settings: inner tolerance ``eps_{t+1}`` (floored at 1e-13, round-off), (23) with the
    server term ``q^t`` ("bound"), history kept.
    """
    cfg = ProxALConfig(beta=BETA, rho=rho, q=q, t_max=t_max, solver_tol_floor=ROUND_OFF,
                       reference=ReferenceFlags(stop_server_term="bound"))
    clients = ClientSide([cm], rho, cfg, "vectorized")
    server = ServerSide(sm, rho, clients.n, cfg, "vectorized")
    admm = InexactADMM(server, clients, tau, w0, q=q, t_max=t_max, keep_history=True)
    res = admm.run()
    return admm, res


def audit_admm(history: list[dict], sm: LocalMerit, cms: list[LocalMerit], w0: np.ndarray,
               rho: float, q: float, tau: float) -> dict:
    """Algorithm 2's lines 1-10 re-evaluated on the package's iterates, with the paper's
    formulas written here: line 1 ``u_i^0 = w~0``, ``lambda_i^0 = -grad P_i(w~0)``; line 3
    ``eps_{t+1} = q^t`` (``theory.constrfl.schedule``); the residuals of (18)
    ``e_0 = grad P_0(w^{t+1}) + rho sum_i (w^{t+1} - u~_i^t)``, ``u~_i^t = u_i^t + lambda_i^t /
    rho``, and of (19) ``e_i = grad P_i(u_i^{t+1}) + lambda_i^t + rho (u_i^{t+1} - w^{t+1})``,
    each ``<= eps_{t+1}`` in the inf-norm (the inexactness Lemma 4.2 assumes); (20)
    ``lambda_i^{t+1} = lambda_i^t + rho (u_i^{t+1} - w^{t+1})`` (identity); (22)-(23) the
    certificate ``eps_{t+1} + sum_i epst_i`` and the first round where it is ``<= tau``. The
    merits (``sm`` the server's, ``cms`` the clients') are written here
    (:mod:`theory.constrfl.reference`).
    """
    n, d = len(cms), w0.size

    def cgrad(U):
        return np.stack([m.grad(u) for m, u in zip(cms, U, strict=True)])

    U = np.broadcast_to(w0, (n, d)).copy()
    Lam = -cgrad(U)
    ratios, dual_err, certs, cert_err = [], 0.0, [], 0.0
    for t, h in enumerate(history):
        eps = admm_tolerance(q, t)
        floor = max(eps, ROUND_OFF)
        w, U1, Lam1 = h["w"], h["U"][0], h["Lam"][0]
        ut = U + Lam / rho
        e0 = sm.grad(w) + rho * np.sum(w - ut, axis=0)
        Wb = np.broadcast_to(w, (n, d))
        ei = cgrad(U1) + Lam + rho * (U1 - Wb)
        ratios.append(max(float(np.max(np.abs(e0))), float(np.max(np.abs(ei)))) / floor)
        scale = 1.0 + float(np.max(np.abs(Lam1)))
        dual_err = max(dual_err, float(np.max(np.abs(Lam1 - Lam - rho * (U1 - Wb)))) / scale)
        epst = np.max(np.abs(cgrad(Wb) + Lam - rho * (Wb - U)), axis=1)
        certs.append(eps + float(epst.sum()))
        # relative 1e-10, plus the round-off of gradients evaluated twice (1e-14 absolute)
        cert_err = max(cert_err, abs(certs[-1] - (h["eps"] + h["sum_epst"]))
                       / (certs[-1] + 1e-4))
        U, Lam = U1, Lam1
    below = [t for t, c in enumerate(certs) if c <= tau]
    return {"residual_over_eps": np.array(ratios), "dual_identity_error": dual_err,
            "certificate": np.array(certs), "certificate_rel_error": cert_err,
            "stop_round": below[0] + 1 if below else None}


def rounds_floor(q: float, tau: float) -> int:
    """(23) with its server term ``q^t``: no stop before ``q^t <= tau``, i.e. at least
    ``t + 1`` rounds for the first such t.
    """
    t = 0
    while admm_tolerance(q, t) > tau:
        t += 1
    return t + 1


def lipschitz_on_ball(merit_list: list[LocalMerit], center: np.ndarray, radius: float,
                      rng: np.random.Generator, samples: int) -> float:
    """1.1 x the largest spectral norm of the generalized Hessians of the merits sampled in
    ``B(center, radius)`` (half uniform in the ball, half on its sphere, where the quadratic
    penalties' curvature is largest) — Lemma B.2's ``L_{∇P}``.
    """
    d = center.size
    g = rng.standard_normal((samples, d))
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    rad = radius * np.where(np.arange(samples) % 2 == 0, 1.0,
                            rng.uniform(size=samples) ** (1.0 / d))
    pts = np.vstack([center[None], center + rad[:, None] * g])
    best = 0.0
    for m in merit_list:
        for v in pts:
            best = max(best, float(np.max(np.abs(np.linalg.eigvalsh(m.hess(v))))))
    return 1.1 * best


def b_constant(S0: float, n: int, rho: float, sigma: float, L: float, q: float,
               dfac: float) -> float:
    """``b`` of App. B.4 with every eps^2 term multiplied by ``dfac`` (d: corrected; 1: printed)."""
    lead = 2 / np.sqrt(sigma) * n * (L + rho) + np.sqrt(2 * n * rho)
    inner = S0 + dfac / (1 - q) * ((n + 1) / (2 * sigma) + n * sigma / (rho ** 2 + 2 * L ** 2))
    return float(lead * (np.sqrt(inner) + np.sqrt(dfac * (n + 1) / (2 * sigma))))


def q_r(q: float, rho: float, sigma: float, L: float) -> float:
    """(65): ``q_r = max(q, 1/(1+r))``, ``r = sigma rho / (rho^2 + 2 L^2)``."""
    return max(q, 1.0 / (1.0 + sigma * rho / (rho ** 2 + 2 * L ** 2)))


def rounds_bound(tau: float, n: int, b: float, qr: float) -> float:
    """(74): ``ceil(2 log(tau/(n+1+b)) / log q_r) + 1``."""
    return float(np.ceil(2 * np.log(tau / (n + 1 + b)) / np.log(qr)) + 1)
