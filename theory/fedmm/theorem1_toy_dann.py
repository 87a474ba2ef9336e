"""T10 (docs/decisions.md#fedmm-theory-checks): on a nonconvex toy federated DANN, FedMM reaches a
stationary point of
the GLOBAL objective where FedAvgGDA stalls (paper 004, Sec. 4 / Theorem 1 in practice).

TDA instance of docs/decisions.md#fedmm-theory-instances: 2-d source blobs x = (2y-1)(2, 0) + 0.7
N(0, I), n = 200;
target the same rotated by 30 degrees and shifted by (0, 1.5). omega = (W 3x2, b, v, v0),
features z = tanh(W x + b), label logit v'z + v0; psi = (u, u0), h = sigmoid(u'z + u0).
f_S = BCE + nu mean_S log h - rho/2 ||psi||^2 + rho_w/2 ||omega||^2,
f_T = nu mean_T log(1 - h) - rho/2 ||psi||^2 + rho_w/2 ||omega||^2 (nu = 1, rho = 0.1,
rho_w = 0.01); clients f_1 = p f_S + (1-p) f_T, f_2 = (1-p) f_S + p f_T; global f = (f_S+f_T)/2.
Deterministic full gradients (float64 autograd); FedMM and FedAvgGDA with M = 20, eta = 0.05,
mu1 = 1, mu2 = 1.5 (distinct per block), 1,500 rounds; FedSGDA (M = 1) 15,000 rounds, reported.
Pass: FedMM ||grad f(omega0, psi0)|| <= 1e-6 for every p; FedAvgGDA <= 1e-6 at p = 0.5 and
>= 1e-4 at p = 1.

The first rounds of every run (and every 500th) are audited against the round written in
:mod:`theory.fedmm.reference` with the oracle written here; both methods are driven on the
experiments' paths (``loop``, ``vectorized``, ``graphed``; float32), audited. At the paper's own
step (eta = 0.01, mu = 1, M = 20) the statement is held locally: the spectral radius of FedMM's
round linearized (by differences of the round written here) at the stationary point it reached
must be below 1, or FedMM does not return to it (a finding).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from theory.evidence import Evidence, Term
from theory.fedmm.common import BACKENDS, PAPER_ETA, PAPER_M, PAPER_MU, Spec, build
from theory.fedmm.reference import (
    audit,
    avg_round,
    fedmm_round,
    gda,
    linear_round_map,
    spectral_radius,
    tolerance,
)
from theory.registry import register
from theory.result import CheckResult

N_OMEGA, N_PSI = 13, 4
NU, RHO, RHO_W = 1.0, 0.1, 0.01
MU = (1.0, 1.5)
TERMS = (
    Term("client imbalance p > 1/2", "FedAvgGDA ||grad f|| at p minus at p = 1/2", 1e-6),
    Term("FedMM duals at the stationary point", "max_i ||d_i||_inf at the end (p > 1/2)", 1e-6),
    Term("blocks' penalties differ (mu1 != mu2)", "|mu1 - mu2|", 0.0),
)


def make_data(seed: int, n: int = 200):
    """The TDA source and target sets of docs/decisions.md#fedmm-theory-instances"""
    rng = np.random.default_rng(seed)
    ys = rng.integers(0, 2, n)
    xs = (2 * ys - 1)[:, None] * np.array([2.0, 0.0]) + 0.7 * rng.standard_normal((n, 2))
    yt = rng.integers(0, 2, n)
    xt = (2 * yt - 1)[:, None] * np.array([2.0, 0.0]) + 0.7 * rng.standard_normal((n, 2))
    a = math.radians(30)
    R = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    xt = xt @ R.T + np.array([0.0, 1.5])
    return tuple(torch.from_numpy(v) for v in (xs, ys.astype(float), xt, yt.astype(float)))


def _parts(theta):
    W = theta[..., :6].reshape(*theta.shape[:-1], 3, 2)
    b, v, v0 = theta[..., 6:9], theta[..., 9:12], theta[..., 12]
    u, u0 = theta[..., 13:16], theta[..., 16]
    return W, b, v, v0, u, u0


def _z(theta, x):
    W, b, *_ = _parts(theta)
    return torch.tanh(torch.einsum("...kj,nj->...nk", W, x) + b.unsqueeze(-2))


def losses(theta, data):
    """(f_S, f_T) for a (..., 17) batch of parameter vectors."""
    xs, ys, xt, _ = data
    _, _, v, v0, u, u0 = _parts(theta)
    reg = -RHO / 2 * theta[..., 13:].pow(2).sum(-1) + RHO_W / 2 * theta[..., :13].pow(2).sum(-1)
    zs, zt = _z(theta, xs), _z(theta, xt)
    logit = torch.einsum("...nk,...k->...n", zs, v) + v0.unsqueeze(-1)
    bce = torch.nn.functional.softplus(logit) - ys * logit
    ds = torch.einsum("...nk,...k->...n", zs, u) + u0.unsqueeze(-1)
    dt = torch.einsum("...nk,...k->...n", zt, u) + u0.unsqueeze(-1)
    f_s = bce.mean(-1) - NU * torch.nn.functional.softplus(-ds).mean(-1) + reg
    f_t = -NU * torch.nn.functional.softplus(dt).mean(-1) + reg
    return f_s, f_t


def _domain_grads(theta: np.ndarray, x: np.ndarray, z: np.ndarray, ds_coef,
                  dd_coef) -> np.ndarray:
    """Backprop of sum_n [ds_n (v'z_n + v0) + dd_n (u'z_n + u0)] given per-row coefficients
    (the derivatives of the loss w.r.t. the label and domain logits) and the features z
    (C, n, 3), batched over clients; batched matmuls only.
    """
    v, u = theta[:, 9:12], theta[:, 13:16]
    g = np.empty_like(theta)
    dz = ds_coef[..., None] * v[:, None, :] + dd_coef[..., None] * u[:, None, :]
    dpre = dz * (1 - z ** 2)
    g[:, :6] = (dpre.transpose(0, 2, 1) @ x).reshape(-1, 6)
    g[:, 6:9] = dpre.sum(1)
    g[:, 9:12] = (ds_coef[:, None, :] @ z)[:, 0]
    g[:, 12] = ds_coef.sum(1)
    g[:, 13:16] = (dd_coef[:, None, :] @ z)[:, 0]
    g[:, 16] = dd_coef.sum(1)
    return g


def analytic_grads(theta: np.ndarray, data) -> tuple[np.ndarray, np.ndarray]:
    """(grad f_S, grad f_T) for a (C, 17) batch, in closed form (float64 numpy, matmuls)."""
    xs, ys, xt, _ = (d.numpy() for d in data)
    Wt = theta[:, :6].reshape(-1, 3, 2).transpose(0, 2, 1)  # (C, 2, 3)
    zs = np.tanh(xs @ Wt + theta[:, None, 6:9])  # (C, n, 3)
    zt = np.tanh(xt @ Wt + theta[:, None, 6:9])
    v, v0 = theta[:, 9:12, None], theta[:, 12:13]
    u, u0 = theta[:, 13:16, None], theta[:, 16:17]
    s = (zs @ v)[..., 0] + v0
    d_s = (zs @ u)[..., 0] + u0
    d_t = (zt @ u)[..., 0] + u0
    n_s, n_t = len(ys), xt.shape[0]
    cs = (1 / (1 + np.exp(-s)) - ys) / n_s
    cds = NU / (1 + np.exp(d_s)) / n_s  # d/dd of -nu softplus(-d) = nu sigma(-d)
    cdt = -NU / (1 + np.exp(-d_t)) / n_t  # d/dd of -nu softplus(d) = -nu sigma(d)
    g_s = _domain_grads(theta, xs, zs, cs, cds)
    g_t = _domain_grads(theta, xt, zt, np.zeros_like(cdt), cdt)
    reg = np.concatenate([RHO_W * theta[:, :13], -RHO * theta[:, 13:]], axis=1)
    return g_s + reg, g_t + reg


def mixed_grads(theta: np.ndarray, x: np.ndarray, ys: np.ndarray, w: np.ndarray) -> np.ndarray:
    """w[c, 0] grad f_S + w[c, 1] grad f_T of client c's (17,) parameters, in one pass over the
    stacked source and target rows ``x`` (source first, ``len(ys)`` of them): by linearity of
    the backprop in its row coefficients this equals the weighted :func:`analytic_grads`
    (tests/theory compare the two) at half the number of array operations.
    """
    n_s = len(ys)
    n_t = len(x) - n_s
    Wt = theta[:, :6].reshape(-1, 3, 2).transpose(0, 2, 1)
    z = np.tanh(x @ Wt + theta[:, None, 6:9])  # (C, n_s + n_t, 3)
    s = (z[:, :n_s] @ theta[:, 9:12, None])[..., 0] + theta[:, 12:13]
    d = (z @ theta[:, 13:16, None])[..., 0] + theta[:, 16:17]
    c_label = np.zeros_like(d)
    c_label[:, :n_s] = w[:, :1] * (1 / (1 + np.exp(-s)) - ys) / n_s
    c_dom = np.empty_like(d)
    c_dom[:, :n_s] = w[:, :1] * NU / (1 + np.exp(d[:, :n_s])) / n_s
    c_dom[:, n_s:] = -w[:, 1:] * NU / (1 + np.exp(-d[:, n_s:])) / n_t
    reg = np.concatenate([RHO_W * theta[:, :13], -RHO * theta[:, 13:]], axis=1)
    return _domain_grads(theta, x, z, c_label, c_dom) + w.sum(1, keepdims=True) * reg


class ToyOracle:
    """Player gradients of the two mixed clients (full batch, closed-form gradients), in
    ``dtype``, with the ``graphed`` backend's hooks (no randomness: nothing to draw).
    """

    def __init__(self, data, p: float, dtype=torch.float64) -> None:
        self.data, self.n_clients, self.dtype = data, 2, dtype
        self.w = np.array([[p, 1 - p], [1 - p, p]])
        self.sign = np.concatenate([np.ones(N_OMEGA), -np.ones(N_PSI)])
        xs, ys, xt, _ = (d.numpy() for d in data)
        self.x, self.ys = np.concatenate([xs, xt]), ys
        self.sizes = {"omega": N_OMEGA, "psi": N_PSI}

    def numpy(self, theta: np.ndarray) -> np.ndarray:
        return self.sign * mixed_grads(theta, self.x, self.ys, self.w)

    def batched(self, theta, t, m):
        return torch.from_numpy(self.numpy(theta.double().numpy())).to(self.dtype)

    def client(self, i, theta_i, t, m):
        return self.batched(theta_i.unsqueeze(0).expand(2, -1), t, m)[i]

    def round_inputs(self, steps: int) -> dict:
        return {}

    def round_gradient(self, theta, inputs, m):
        return self.batched(theta, 0, m)

    def round_state(self) -> tuple:
        return ()


def global_grad_norm(theta0, data) -> float:
    """||grad f(omega0, psi0)|| of the global objective (f_S + f_T) / 2 (autograd)."""
    th = theta0.detach().clone().requires_grad_(True)
    f_s, f_t = losses(th, data)
    (g,) = torch.autograd.grad((f_s + f_t) / 2, th)
    return float(g.norm())


def target_accuracy(theta0, data) -> float:
    """Target accuracy of the label predictor at theta0."""
    _, _, xt, yt = data
    _, _, v, v0, _, _ = _parts(theta0)
    pred = (_z(theta0, xt) @ v + v0 > 0).double()
    return float((pred == yt).double().mean())


class _Dims:
    d1, d2, n = N_OMEGA, N_PSI, 2


def _mu_vector(mu) -> np.ndarray:
    return np.concatenate([np.full(N_OMEGA, mu[0]), np.full(N_PSI, mu[1])])


def toy_reference(oracle: ToyOracle, name: str, M: int, eta: float, mu):
    """The round of ``name`` (FedMM, eta3 = 1; FedAvgGDA; FedSGDA) written here."""
    mu_v, eta_v = _mu_vector(mu), np.full(N_OMEGA + N_PSI, eta)

    def fn(before):
        th0 = before["theta0"]
        if name != "FedMM":
            local = gda(oracle.numpy, 2, th0, None, eta_v, None, 1 if name == "FedSGDA" else M)
            return {"local": local, "theta0": avg_round(local)}
        local = gda(oracle.numpy, 2, th0, before["duals"], eta_v, mu_v, M)
        duals, _, theta0 = fedmm_round(local, th0, before["duals"], mu_v, 1.0)
        return {"local": local, "duals": duals, "theta0": theta0}
    return fn


def start(seed: int, dtype=torch.float64) -> np.ndarray:
    """omega0 ~ 0.5 N(0, I) (generator seed + 10), psi0 = 0."""
    g = torch.Generator().manual_seed(seed + 10)
    return torch.cat([0.5 * torch.randn(N_OMEGA, generator=g, dtype=torch.float64),
                      torch.zeros(N_PSI, dtype=torch.float64)]).numpy()


def run(data, p: float, name: str, M: int, rounds: int, seed: int, ev: Evidence | None = None,
        eta: float = 0.05, mu=MU, backend: str = "vectorized", dtype=torch.float64):
    """Method ``name`` on the two mixed TDA clients of imbalance p from :func:`start`: the
    first 3 rounds and every 500th audited; ``(||grad f(omega0, psi0)||, target accuracy,
    algorithm)``.
    """
    oracle = ToyOracle(data, p, dtype)
    spec = Spec(_Dims, mu=mu, eta=(eta, eta), solver="gda", M=M, algorithm=name,
                backend=backend, dtype=dtype, init=start(seed))
    alg = build(spec, oracle)
    ref = toy_reference(oracle, name, M, eta, mu)
    key = f"fedmm:{name}/{backend}/{str(dtype).replace('torch.', '')}"
    label = ("Algorithm 3 round (11)-(16)" if name == "FedMM"
             else "Algorithm 2 round (lines 9-16)") + f" [{name}]"
    for r in range(rounds):
        if ev is not None and (r < 3 or r % 500 == 0):
            audit(alg, ev, label, key, ref, tolerance(dtype, M))
        else:
            alg.step()
    th = alg.state.theta0.double()
    return global_grad_norm(th, data), target_accuracy(th, data), alg


def paper_radius(data, p: float, alg) -> float:
    """Spectral radius of FedMM's round at the paper's eta = 0.01, mu = 1, M = 20, linearized
    at the point ``alg`` reached (theta0 and duals), by central differences of the round
    written here.
    """
    oracle = ToyOracle(data, p)
    ref = toy_reference(oracle, "FedMM", PAPER_M, PAPER_ETA, (PAPER_MU, PAPER_MU))
    th_star = alg.state.theta0.double().numpy()
    du_star = alg.state.duals.double().numpy()
    h = 1e-6

    def at(th, du):
        out = ref({"theta0": th_star + th, "duals": du_star + du})
        return out["theta0"] - th_star, out["duals"] - du_star

    def central(th, du):
        a = at(th * h, du * h)
        b = at(-th * h, -du * h)
        return (a[0] - b[0]) / (2 * h), (a[1] - b[1]) / (2 * h)

    return spectral_radius(linear_round_map(central, N_OMEGA + N_PSI, 2))


@register("fedmm.theorem1_toy_dann", seed_name="fedmm.t10_toy_dann",
          paper="004 fedmm",
          claim="FedMM reaches a stationary point of the global toy-DANN objective for every "
                "imbalance p; FedAvgGDA stalls at p = 1")
def check(seed: int, size: str) -> CheckResult:
    """FedMM stationary on the toy DANN for every p; FedAvgGDA stalls at p = 1."""
    # small: half the rows; FedMM at p = 1 only (at p = 1/2 the clients are identical and
    # FedMM's run is FedAvgGDA's), 1,300 rounds (stationarity 1e-6 is reached at ~1,200), and
    # FedAvgGDA's stall at p = 1 read at round 400 (it is flat from round ~300)
    small = size == "small"
    ps = (0.5, 1.0) if small else (0.5, 0.75, 1.0)
    fedmm_ps = (1.0,) if small else ps
    rounds = 1300 if small else 1500
    data = make_data(0, 100 if small else 200)
    # the closed-form player gradients against autograd at a random point
    th = torch.from_numpy(np.random.default_rng(seed).standard_normal((2, 17)))
    t = th.clone().requires_grad_(True)
    f_s, f_t = losses(t, data)
    auto = [torch.autograd.grad(f.sum(), t, retain_graph=True)[0].numpy() for f in (f_s, f_t)]
    grad_err = max(float(np.abs(a - b).max()) for a, b in zip(
        analytic_grads(th.numpy(), data), auto, strict=True))
    ev = Evidence(TERMS)
    ev.activity("blocks' penalties differ (mu1 != mu2)", abs(MU[0] - MU[1]))
    res, algs = {}, {}
    for p in ps:
        if p in fedmm_ps:
            *res[f"FedMM p={p}"], algs[p] = run(data, p, "FedMM", 20, rounds, 0, ev)
        stall = small and p == 1.0
        *res[f"FedAvgGDA p={p}"], _ = run(data, p, "FedAvgGDA", 20, 400 if stall else rounds,
                                          0, ev)
        if not small and p == 1.0:  # reported: FedSGDA at the largest imbalance
            *res[f"FedSGDA p={p}"], _ = run(data, p, "FedSGDA", 1, 10 * rounds, 0, ev)
        if p > 0.5:
            ev.activity("FedMM duals at the stationary point",
                        float(algs[p].state.duals.abs().max()))
            ev.activity("client imbalance p > 1/2",
                        res[f"FedAvgGDA p={p}"][0] - res["FedAvgGDA p=0.5"][0])
    stat = 1e-6
    margins = {"fedmm_stationary": min(stat - res[f"FedMM p={p}"][0] for p in fedmm_ps),
               "fedavg_stationary_p05": stat - res["FedAvgGDA p=0.5"][0],
               "fedavg_stalls_p1": res["FedAvgGDA p=1.0"][0] - 1e-4,
               "analytic_gradient_vs_autograd": 1e-12 - grad_err}
    ev.criterion("Thm 1 (eps = 0): FedMM stationary for every p",
                 margins["fedmm_stationary"] / stat)
    ev.criterion("FedAvgGDA stationary at p = 1/2", margins["fedavg_stationary_p05"] / stat)
    ev.criterion("FedAvgGDA stalls at p = 1", margins["fedavg_stalls_p1"] / 1e-4)
    ev.criterion("oracle: closed-form gradients = autograd",
                 margins["analytic_gradient_vs_autograd"] / 1e-12)
    # the experiments' paths: both methods, every backend, float32 (audited)
    for name in ("FedMM", "FedAvgGDA"):
        for backend in BACKENDS:
            ev.path(f"fedmm:{name}/{backend}/float32")
            run(data, 1.0, name, 5, 3, 0, ev, backend=backend, dtype=torch.float32)
    # the paper's step: the linearized round at the stationary point FedMM reached
    radii = {p: paper_radius(data, p, algs[p]) for p in fedmm_ps}
    finding = None
    if max(radii.values()) >= 1:
        finding = (f"at the paper's eta = {PAPER_ETA}, mu = {PAPER_MU}, M = {PAPER_M} FedMM's "
                   "round linearized at the stationary point has spectral radius "
                   + ", ".join(f"p={p}: {r:.4g}" for p, r in radii.items())
                   + ": the stationary point repels where it is >= 1")
    worst = ev.worst()
    return CheckResult(
        name="fedmm.theorem1_toy_dann", claim="FedMM stationary on toy DANN, FedAvgGDA stalls",
        paper="004 fedmm", equation="Sec. 4; Theorem 1 (eps = 0)", instances=len(res),
        worst_margin=float(worst),
        ground_truth={"solver": "autograd", "quantity": "||grad f(omega0, psi0)|| of the global "
                      "objective (f_S + f_T)/2, float64; the algorithms use closed-form "
                      "gradients checked against autograd"},
        passed=bool(worst >= 0),
        paper_setting={"eta": PAPER_ETA, "mu": PAPER_MU, "M": PAPER_M,
                       **{f"rho at the stationary point, p={p}": round(r, 5)
                          for p, r in radii.items()}},
        paper_finding=finding,
        details={"margins": margins, "grad_norm_and_target_acc": res, "rounds": rounds,
                 "fedsgda_rounds": 10 * rounds, "eta": 0.05, "(mu1, mu2)": MU, "M": 20},
        **ev.fields())
