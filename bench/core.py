"""Benchmarks of the shared pieces: the batched projections of :mod:`repro.core.projections`
and the demo's logistic gradient, each against its per-row loop.
"""

from __future__ import annotations

import numpy as np

from bench.bounds import bound_seconds
from bench.harness import Target, benchmark, compare_timings


@benchmark("core.projections", Target("one batch of projections"))
def _projections() -> list[dict]:
    from repro.core.projections import capped_simplex_projection, simplex_projection

    rng = np.random.default_rng(0)
    rows = []
    for batch, d in ((1000, 10), (1000, 100), (200, 1000)):
        x = rng.normal(size=(batch, d))
        rows.append(compare_timings(
            f"simplex, batch {batch} x d {d}",
            lambda x=x: [simplex_projection(r) for r in x], lambda x=x: simplex_projection(x)))
        cap = 2.0 / d
        rows.append(compare_timings(
            f"capped simplex (cap 2/d), batch {batch} x d {d}",
            lambda x=x, cap=cap: [capped_simplex_projection(r, cap) for r in x],
            lambda x=x, cap=cap: capped_simplex_projection(x, cap)))
        for row in rows[-2:]:          # memory traffic: read the points, write the result
            row["bound_s"] = bound_seconds(bytes_=2 * x.nbytes)
    return rows


@benchmark("core.demo", Target("one full logistic gradient on a8a"))
def _demo_gradient() -> list[dict]:
    from repro.core.data.libsvm import load_a8a
    from repro.demo.experiments import logistic_loss_grad

    data = load_a8a("train")
    X, y = data.X, data.y.astype(float)
    w = np.random.default_rng(0).normal(scale=0.1, size=X.shape[1] + 1)

    def per_sample():
        g = np.zeros_like(w)
        for xi, yi in zip(X, y, strict=True):
            m = yi * (xi @ w[:-1] + w[-1])
            c = -yi / (1 + np.exp(m)) / len(y)
            g[:-1] += c * xi
            g[-1] += c
        g[:-1] += 1e-4 * w[:-1]
        return g

    return [compare_timings(f"logistic gradient, a8a n={len(y)} d={X.shape[1]}", per_sample,
                            lambda: logistic_loss_grad(w, X, y, 1e-4), repeat=3)]


@benchmark("core.kernels", Target("one Hessian row sum Xᵀ diag(v) X with the constraint Jacobian"))
def _weighted_gram() -> list[dict]:
    """The batched row sums of constrfl's logistic Hessians (repro/core/kernels.py) against
    numpy's plain ``(Xᵀ * v) @ X`` and ``(Gw * phi') @ X``, at the sizes of Tables 1-2; bound:
    ``2 b M d (d + k)`` flops at the GEMM rate (bench/bounds.py).
    """
    from repro.core.kernels import weighted_gram

    rng = np.random.default_rng(0)
    rows = []
    for b, M, d, what in ((1, 15060, 38, "Table 2 server"), (5, 6031, 38, "Table 2 clients, n=5"),
                          (10, 3000, 14, "Table 1 adult-a clients, n=10")):
        X, v, E = rng.random((b, M, d)), rng.standard_normal((b, M)), rng.random((b, 2, M))
        rows.append(compare_timings(
            f"{what}: b={b}, M={M}, d={d}, k=2",
            lambda X=X, v=v, E=E: (np.matmul(X.transpose(0, 2, 1) * v[:, None, :], X),
                                   np.matmul(E, X)),
            lambda X=X, v=v, E=E: weighted_gram(X, v, E)))
        rows[-1]["bound_s"] = bound_seconds(flops=2 * b * M * d * (d + 2))
    return rows
