"""CEO: calibrated equalized odds post-processing of Pleiss et al. (2017), [C] ref [19]
(docs/decisions.md#fairvfl-ceo), on FedBCD's pooled scores.

The ``"fnr"`` cost is primary (docs/decisions.md#fairvfl-ceo-reading); ``"fpr"`` and ``"weighted"``
(AIF360's default) are the alternatives. ``ceo_expected`` gives the exact expectations the
records report; ``ceo_apply`` / ``ceo_postprocess`` draw once.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from repro.core.validation import check_choice
from repro.fairvfl.evaluate import post_processed_losses
from repro.fairvfl.postprocessing import (
    TEST_SEED_OFFSET,
    ExpectedPrediction,
    check_postprocess_inputs,
    labels01,
)


def ceo_mixing(h_train, Y01, a_mask, cost: str = "fnr") -> dict:
    """Pleiss et al. calibrated equalized odds: the group ``g_lo`` with the lower generalized
    cost, its mixing rate ``alpha`` and the training base rates (docs/decisions.md#fairvfl-ceo).
    """
    check_choice("cost", cost, ("fnr", "fpr", "weighted"))
    out = {}
    for name, mask in (("a", a_mask), ("b", ~a_mask)):
        mu = Y01[mask].mean()
        c_fn = (1 - h_train[mask & (Y01 == 1)]).mean()
        c_fp = h_train[mask & (Y01 == 0)].mean()
        if cost == "fnr":
            C, C_mu = c_fn, 1 - mu
        elif cost == "fpr":
            C, C_mu = c_fp, mu
        else:
            C, C_mu = 0.5 * c_fp * (1 - mu) + 0.5 * c_fn * mu, mu * (1 - mu)
        out[name] = {"mu": float(mu), "C": float(C), "C_mu": float(C_mu)}
    lo, hi = ("a", "b") if out["a"]["C"] <= out["b"]["C"] else ("b", "a")
    denom = out[lo]["C_mu"] - out[lo]["C"]
    alpha = 0.0 if denom == 0 else (out[hi]["C"] - out[lo]["C"]) / denom
    return {"groups": out, "lo": lo, "alpha": float(np.clip(alpha, 0.0, 1.0))}



def _ceo_lo_rows(mix: dict, s_test) -> np.ndarray:
    s_test = np.asarray(s_test, bool)
    return np.flatnonzero(s_test if mix["lo"] == "a" else ~s_test)



def ceo_apply(mix: dict, z_test, s_test, rng: np.random.Generator):
    """One draw: ``floor(alpha n_test(g_lo))`` test rows of ``g_lo``, chosen uniformly without
    replacement, get the training base rate ``mu_{g_lo}`` as score; ``Y~ = 1[h~ >= 1/2]``.
    """
    idx = _ceo_lo_rows(mix, s_test)
    chosen = rng.choice(idx, size=int(np.floor(mix["alpha"] * len(idx))), replace=False)
    h_tilde = expit(np.asarray(z_test, dtype=np.float64))
    h_tilde[chosen] = mix["groups"][mix["lo"]]["mu"]
    return np.where(h_tilde >= 0.5, 1, -1), h_tilde



def ceo_postprocess(z_train, y_train, s_train, z_test, s_test, seed: int, *,
                    cost: str = "fnr"):
    """Calibrated equalized odds (docs/decisions.md#fairvfl-ceo), one draw with
    ``Generator(PCG64(seed + 10_000))``. The records report ``ceo_expected`` instead (the exact
    expectation per test row, free of the draw's noise).
    """
    check_postprocess_inputs(z_train, y_train, s_train, z_test, s_test)
    h_train = expit(np.asarray(z_train, dtype=np.float64))
    mix = ceo_mixing(h_train, labels01(y_train), np.asarray(s_train, bool), cost)
    rng = np.random.Generator(np.random.PCG64(seed + TEST_SEED_OFFSET))
    return ceo_apply(mix, z_test, s_test, rng)



def ceo_expected(z_train, y_train, s_train, z_test, s_test, *,
                 cost: str = "fnr") -> ExpectedPrediction:
    """Exact expectations of ``ceo_apply``: a row of ``g_lo`` is moved to ``mu_{g_lo}`` with
    probability ``floor(alpha n_lo) / n_lo`` (a uniform subset of that size), others never.
    """
    check_postprocess_inputs(z_train, y_train, s_train, z_test, s_test)
    h_train = expit(np.asarray(z_train, dtype=np.float64))
    mix = ceo_mixing(h_train, labels01(y_train), np.asarray(s_train, bool), cost)
    h = expit(np.asarray(z_test, dtype=np.float64))
    idx = _ceo_lo_rows(mix, s_test)
    move = np.zeros(len(h))
    if len(idx):
        move[idx] = np.floor(mix["alpha"] * len(idx)) / len(idx)
    mu = mix["groups"][mix["lo"]]["mu"]
    q = (1.0 - move) * (h >= 0.5) + move * float(mu >= 0.5)
    losses = (1.0 - move) * post_processed_losses(h) + move * post_processed_losses(
        np.full(len(h), mu))
    return ExpectedPrediction(q, (1.0 - move) * h + move * mu, losses)
