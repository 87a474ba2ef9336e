"""Round-off bounds of the dense kernels: the tolerances the vectorized paths are held to
against their loop oracles (docs/design.md#tolerances-of-the-vectorized-paths).

A vectorized path may sum in another order than its loop (blocked BLAS products, batched
factorizations, fused updates), so the two agree to round-off, not bit for bit. Round-off of
a sum of ``k`` products in any order is bounded by ``gamma_k`` times the sum of the products'
absolute values (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., Thm. 3.5,
eq. (3.5)): the bound depends on the data through ``|x|ᵀ|y|``, i.e. on the conditioning of the
sum, and on nothing tuned. Two paths that each meet it differ by at most twice it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["gamma", "unit_roundoff"]


def unit_roundoff(dtype) -> float:
    """``u = eps / 2``: 2^-53 for float64, 2^-24 for float32."""
    return float(np.finfo(np.dtype(str(dtype).replace("torch.", ""))).eps) / 2


def gamma(k: int, dtype="float64") -> float:
    """``gamma_k = k u / (1 - k u)``: the relative bound of ``k`` roundings in a row."""
    u = unit_roundoff(dtype)
    if k * u >= 1:
        raise ValueError(f"gamma_k is defined for k u < 1, got k = {k} at u = {u:g}")
    return k * u / (1 - k * u)
