"""Fair VFL analysis constants, written here from the papers' formulas (no check).

The theory checks hold the package against these; ``repro/fairvfl/analysis.py`` has its own
copy for the package's diagnostics, and tests/theory/test_fairvfl_constants.py shows the two
agree (a check never reads a bound from the code under check).

- Assumption 2 ([C] §IV-D, [J] §4.4) made computable from data
(docs/decisions.md#fairvfl-theory-instances), for
  the logistic loss (``|l'| <= 1``, ``l'' <= 1/4``) and spectral norms ``||.||_2``:
  ``L_L = ||X||^2 / (4 n) + mu`` (Lipschitz constant of grad L),
  ``L_D = ||X_a||^2 / (4 |N^a|) + ||X_b||^2 / (4 |N^b|)`` (of grad D),
  ``G_D = min(||X_a|| / sqrt|N^a| + ||X_b|| / sqrt|N^b|, mean_{N^a} ||X_i|| + mean_{N^b}
  ||X_i||) >= sup ||grad D||``, ``L_12 = sqrt(2) G_D`` (``grad_lam f = (D - eps, -D - eps)``);
  ``L = L_L + Lambda L_D`` with ``Lambda = max_t |lam1 - lam2|`` (§10.2).
- Lemma 1 ([J] App. A, [C] App. A): ``iota_t = eta_t - (L + 1)/2 - L^2 (KQ + 2)(KQ - 1)/4``.
- Theorem 2 ([C] Thm 2, [J] Thm 2): ``eta_t >= [L^2 (KQ+2)(KQ-1) + 2(L+1)]/4
  + L_12^2 KQ (1 + 32 tau sqrt(t)) / (2 beta)``.

Groups ``N^s = {i : s_i = s, y_i = +1}`` (Definition 1) are taken from ``(y, s)`` here too.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit


def groups_masks(y: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Boolean masks of N^a (s = a, y = +1) and N^b (s = b, y = +1), Definition 1."""
    y, s = np.asarray(y), np.asarray(s).astype(bool)
    return (y == 1) & s, (y == 1) & ~s


def assumption2(X: np.ndarray, y: np.ndarray, s: np.ndarray, mu: float) -> dict[str, float]:
    """``{"L_L", "L_D", "G_D", "L_12"}`` of docs/decisions.md#fairvfl-theory-instances (see the
    module doc).
    """
    in_a, in_b = groups_masks(y, s)
    Xa, Xb = X[in_a], X[in_b]
    na, nb = int(in_a.sum()), int(in_b.sum())
    sa, sb, sx = (float(np.linalg.norm(M, 2)) for M in (Xa, Xb, X))
    L_L = sx ** 2 / (4 * len(y)) + mu
    L_D = sa ** 2 / (4 * na) + sb ** 2 / (4 * nb)
    G_D = min(sa / np.sqrt(na) + sb / np.sqrt(nb),
              float(np.linalg.norm(Xa, axis=1).mean() + np.linalg.norm(Xb, axis=1).mean()))
    return {"L_L": L_L, "L_D": L_D, "G_D": float(G_D), "L_12": float(np.sqrt(2) * G_D)}


def iota(eta: float, L: float, K: int, Q: int) -> float:
    """Lemma 1: ``iota_t = eta_t - (L + 1)/2 - L^2 (KQ + 2)(KQ - 1)/4``."""
    return eta - (L + 1) / 2 - L ** 2 * (K * Q + 2) * (K * Q - 1) / 4


def iota_zero_eta(L: float, K: int, Q: int) -> float:
    """The eta at which Lemma 1's ``iota_t = 0``."""
    return (L + 1) / 2 + L ** 2 * (K * Q + 2) * (K * Q - 1) / 4


def theorem2_eta(t: int, L: float, L_12: float, K: int, Q: int, tau: float,
                 beta: float) -> float:
    """Theorem 2's lower bound on eta_t (see the module doc), ``t >= 1``."""
    kq = K * Q
    return ((L ** 2 * (kq + 2) * (kq - 1) + 2 * (L + 1)) / 4
            + L_12 ** 2 * kq * (1 + 32 * tau * np.sqrt(max(t, 1))) / (2 * beta))


def grad_L(X, y, theta, mu: float) -> np.ndarray:
    """Grad of ``L(theta) = mean_i log(1 + exp(-y_i x_i' theta)) + (mu/2)||theta||^2``."""
    z = X @ theta
    return X.T @ (-y * expit(-y * z)) / len(y) + mu * theta


def grad_D(X, y, s, theta) -> np.ndarray:
    """Grad of ``D = mean_{N^a} log(1 + e^{-z}) - mean_{N^b} log(1 + e^{-z})``, z = X theta."""
    in_a, in_b = groups_masks(y, s)
    g = -expit(-(X @ theta))
    return X[in_a].T @ g[in_a] / in_a.sum() - X[in_b].T @ g[in_b] / in_b.sum()
