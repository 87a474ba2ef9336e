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


@benchmark("core.kernel_floor", Target(
    "one product of a hot path's shape: as the path runs it (\"oracle\") and the same flops "
    "as one matrix product (\"vectorized\")",
    "no numeric target (how close a product of that shape can come to the bound here)"))
def _kernel_floor() -> list[dict]:
    """What the bounds of the other sections can be met to at best: each hot path's dominant
    product, in the form the path runs it and as ONE matrix product of the same flops, at one
    thread, against its flop bound (the 1000 x 1000 GEMM rate, bench/bounds.py). Narrow
    products (50 or 32 columns) run well below that rate even as one call, so a path made of
    them alone cannot reach time / bound 1.
    """
    import torch

    g = torch.Generator().manual_seed(0)
    rows = []
    # relfair's local step: 100 clients x (32 x 784 @ 784 x 50), float32
    X = torch.rand(100, 32, 784, generator=g)
    W = torch.rand(100, 784, 50, generator=g)
    Z = torch.empty(100, 32, 50)
    Xf, W0 = X.view(3200, 784), W[0].clone()
    rows.append(compare_timings(
        "relfair local step's first layer: bmm of 100 x (32x784 @ 784x50) vs one 3200x784 "
        "@ 784x50, float32", lambda: torch.bmm(X, W, out=Z), lambda: Xf @ W0))
    rows[-1]["bound_s"] = bound_seconds(flops=2 * 3200 * 784 * 50, dtype="float32")
    # fairvfl's MLP: 40,000 rows x (32 @ 32), float32, in chunks of 4096 as the path runs it
    H = torch.rand(40000, 32, generator=g)
    W2 = torch.rand(32, 32, generator=g)
    out = torch.empty(40000, 32)

    def chunked():
        for lo in range(0, 40000, 4096):
            torch.mm(H[lo:lo + 4096], W2, out=out[lo:lo + 4096])
    rows.append(compare_timings(
        "fairvfl MLP's hidden layer: 40000x32 @ 32x32 in chunks of 4096 vs one product, "
        "float32", chunked, lambda: torch.mm(H, W2, out=out)))
    rows[-1]["bound_s"] = bound_seconds(flops=2 * 40000 * 32 * 32, dtype="float32")
    # constrfl's Hessian row sums: 5 parties x (38 x 6031 @ 6031 x 38), float64
    V = torch.rand(5, 38, 6031, generator=g, dtype=torch.float64)
    Xc = torch.rand(5, 6031, 38, generator=g, dtype=torch.float64)
    Vf, Xcf = V.transpose(0, 1).reshape(38, 5 * 6031), Xc.reshape(5 * 6031, 38)
    rows.append(compare_timings(
        "constrfl Table 2's Hessian row sums: bmm of 5 x (38x6031 @ 6031x38) vs one 38x30155 "
        "@ 30155x38, float64", lambda: torch.bmm(V, Xc), lambda: Vf @ Xcf))
    rows[-1]["bound_s"] = bound_seconds(flops=2 * 5 * 6031 * 38 * 38)
    return rows
