"""Post-processing baselines on pooled FedBCD scores (spec ``fairvfl.md`` §4.2-4.4).

Both are functions ``(z_train, y_train, s_train, z_test, s_test, seed) -> (yhat_test,
p_tilde_test)`` with ``y`` in {-1, +1}, ``s`` True = group a, fitted on the training split
(§11 A9) and applied to the test split. ``p_tilde`` is the post-processed probability of the
label ``+1``-side decision used by the loss-based DEO (``-log p_tilde`` on positives, §6).

- ``eo_postprocess``: Hardt, Price & Srebro (2016), [C] ref [10]: the derived predictor
  ``P(Y~ = 1 | Yhat, A)`` minimizing the training error subject to equalized odds (primary,
  §11 A7) or equal opportunity (``constraint="opportunity"``). An LP in 4 variables solved
  exactly by HiGHS.
- ``ceo_postprocess``: Pleiss et al. (2017), [C] ref [19]: calibrated equalized odds with
  the ``"fnr"`` cost (primary, §11 A8), ``"fpr"`` or ``"weighted"`` (AIF360's default).

Both are randomized predictors. ``eo_expected`` / ``ceo_expected`` give their exact
expectations per test row from the fitted mixing probabilities (``ExpectedPrediction``); the
records report those (issue #16 item 2: one Bernoulli draw per seed adds noise of the size of
the printed DFP/DFN). ``eo_apply`` / ``ceo_apply`` draw once (tests check the expectations
against 10^5 draws). The ROC-based reading of "EO" on continuous scores is ``roc_eo``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog
from scipy.special import expit

from repro.core.validation import check_choice, check_labels, check_vector
from repro.fairvfl.evaluate import post_processed_losses

TEST_SEED_OFFSET = 10_000  # §4.2: Generator(PCG64(seed_run + 10_000)) for test-time draws


@dataclass(frozen=True)
class EOProgram:
    """The LP ``min c^T p  s.t.  A_eq p = 0,  0 <= p <= 1`` over
    ``p = (p_1a, p_0a, p_1b, p_0b)``, ``p_{yhat,g} = P(Y~ = 1 | Yhat = yhat, A = g)``."""

    c: np.ndarray
    A_eq: np.ndarray
    constant: float  # objective = constant + c^T p (the training error rate)


def _rates(yhat01: np.ndarray, Y01: np.ndarray, mask: np.ndarray):
    pos, neg = mask & (Y01 == 1), mask & (Y01 == 0)
    P, N = pos.sum(), neg.sum()
    if P == 0 or N == 0:
        raise ValueError("each group needs both labels to fit the EO post-processor")
    return P, N, yhat01[pos].mean(), yhat01[neg].mean()


def eo_program(yhat01, Y01, a_mask, constraint: str = "odds") -> EOProgram:
    """Build the Hardt et al. LP (§4.2). Error = sum_g [P_g (1 - TPR~_g) + N_g FPR~_g] / n with
    ``TPR~_g = p_1g TPR_g + p_0g (1 - TPR_g)``, ``FPR~_g = p_1g FPR_g + p_0g (1 - FPR_g)``."""
    check_choice("constraint", constraint, ("odds", "opportunity"))
    yhat01, Y01 = np.asarray(yhat01), np.asarray(Y01)
    n = len(Y01)
    c, const, tpr_rows, fpr_rows = np.zeros(4), 0.0, np.zeros(4), np.zeros(4)
    for j, (mask, sign) in enumerate(((a_mask, 1.0), (~a_mask, -1.0))):
        P, N, tpr, fpr = _rates(yhat01, Y01, mask)
        const += P / n
        c[2 * j] += (-P * tpr + N * fpr) / n
        c[2 * j + 1] += (-P * (1 - tpr) + N * (1 - fpr)) / n
        tpr_rows[2 * j:2 * j + 2] = sign * np.array([tpr, 1 - tpr])
        fpr_rows[2 * j:2 * j + 2] = sign * np.array([fpr, 1 - fpr])
    A = np.stack([tpr_rows, fpr_rows]) if constraint == "odds" else tpr_rows[None, :]
    return EOProgram(c, A, const)


def solve_eo_program(prog: EOProgram) -> tuple[np.ndarray, float]:
    """Exact LP solution with HiGHS; returns ``(p, training error)``."""
    res = linprog(prog.c, A_eq=prog.A_eq, b_eq=np.zeros(len(prog.A_eq)), bounds=[(0, 1)] * 4,
                  method="highs")
    if res.status != 0:
        raise RuntimeError(f"EO linear program failed: {res.message}")
    return res.x, float(prog.constant + res.fun)


def _labels01(y) -> np.ndarray:
    return (np.asarray(y) == 1).astype(np.int64)


def check_postprocess_inputs(z_train, y_train, s_train, z_test, s_test) -> None:
    """One score, label in {-1, +1} and group per training row; one group per test row."""
    z_train = check_vector("z_train", z_train)
    check_vector("y_train", y_train, length=len(z_train), length_of="z_train")
    check_labels("y_train", y_train, (-1, 1), shown="labels in {-1, +1}",
                 remedy="for labels in {0, 1} pass 2 * y - 1")
    check_vector("s_train", s_train, length=len(z_train), length_of="z_train")
    z_test = check_vector("z_test", z_test)
    check_vector("s_test", s_test, length=len(z_test), length_of="z_test")


def eo_fit(z_train, y_train, s_train, constraint: str = "odds") -> np.ndarray:
    """The mixing probabilities ``p = (p_1a, p_0a, p_1b, p_0b)`` of the Hardt et al. derived
    predictor fitted on the training split (§4.2, §11 A9)."""
    z_train = check_vector("z_train", z_train)
    check_vector("y_train", y_train, length=len(z_train), length_of="z_train")
    check_labels("y_train", y_train, (-1, 1), shown="labels in {-1, +1}",
                 remedy="for labels in {0, 1} pass 2 * y - 1")
    check_vector("s_train", s_train, length=len(z_train), length_of="z_train")
    prog = eo_program((np.asarray(z_train) >= 0).astype(int), _labels01(y_train),
                      np.asarray(s_train, bool), constraint)
    return solve_eo_program(prog)[0]


def _eo_prob_one(p: np.ndarray, z_test, s_test) -> tuple[np.ndarray, np.ndarray]:
    """``P(Y~ = 1)`` per test row and the base decision ``yhat`` in {0, 1}."""
    yhat = (np.asarray(z_test) >= 0).astype(int)
    group = np.where(np.asarray(s_test, bool), 0, 1)
    return p[2 * group + (1 - yhat)], yhat  # index (yhat=1 -> p_1g, yhat=0 -> p_0g)


def eo_apply(p: np.ndarray, z_test, s_test, rng: np.random.Generator):
    """One draw of the derived predictor: ``Y~ ~ Bernoulli(p_{Yhat,A})``; score-flip
    convention ``p~ = p`` if the decision is kept, ``1 - p`` if flipped (§11 A10)."""
    prob_one, yhat = _eo_prob_one(p, z_test, s_test)
    ytilde = (rng.random(len(yhat)) < prob_one).astype(int)
    score = expit(np.asarray(z_test, dtype=np.float64))
    p_tilde = np.where(ytilde == yhat, score, 1.0 - score)
    return np.where(ytilde == 1, 1, -1), p_tilde


def eo_postprocess(z_train, y_train, s_train, z_test, s_test, seed: int, *,
                   constraint: str = "odds"):
    """Hardt et al. derived predictor (§4.2), one draw with ``Generator(PCG64(seed +
    10_000))``. The records report ``eo_expected`` instead (issue #16 item 2)."""
    check_postprocess_inputs(z_train, y_train, s_train, z_test, s_test)
    p = eo_fit(z_train, y_train, s_train, constraint)
    rng = np.random.Generator(np.random.PCG64(seed + TEST_SEED_OFFSET))
    return eo_apply(p, z_test, s_test, rng)


@dataclass(frozen=True)
class ExpectedPrediction:
    """A randomized predictor by its exact expectations per test row: ``q = P(Y~ = +1)``,
    ``score = E[p~]`` (probability of ``y = +1`` after post-processing) and ``losses =
    E[-log clip(p~)]`` (the loss-based DEO is linear in the per-row losses)."""

    q: np.ndarray
    score: np.ndarray
    losses: np.ndarray


def flip_expectation(q, z_test) -> ExpectedPrediction:
    """Expectations of a predictor that flips the base decision ``1[z >= 0]`` at random with
    ``P(Y~ = 1) = q`` and, where it flips, replaces the score ``h`` by ``1 - h`` (§11 A10)."""
    q = np.asarray(q, dtype=np.float64)
    h = expit(np.asarray(z_test, dtype=np.float64))
    keep = np.where(np.asarray(z_test) >= 0, q, 1.0 - q)
    losses = (keep * post_processed_losses(h) + (1.0 - keep) * post_processed_losses(1.0 - h))
    return ExpectedPrediction(q, keep * h + (1.0 - keep) * (1.0 - h), losses)


def eo_expected(z_train, y_train, s_train, z_test, s_test, *,
                constraint: str = "odds") -> ExpectedPrediction:
    """Exact expectations of the derived predictor from its mixing probabilities (no draw)."""
    check_postprocess_inputs(z_train, y_train, s_train, z_test, s_test)
    p = eo_fit(z_train, y_train, s_train, constraint)
    return flip_expectation(_eo_prob_one(p, z_test, s_test)[0], z_test)


def ceo_mixing(h_train, Y01, a_mask, cost: str = "fnr") -> dict:
    """Pleiss et al. calibrated equalized odds: the group ``g_lo`` with the lower generalized
    cost, its mixing rate ``alpha`` and the training base rates (§4.3)."""
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
    replacement, get the training base rate ``mu_{g_lo}`` as score; ``Y~ = 1[h~ >= 1/2]``."""
    idx = _ceo_lo_rows(mix, s_test)
    chosen = rng.choice(idx, size=int(np.floor(mix["alpha"] * len(idx))), replace=False)
    h_tilde = expit(np.asarray(z_test, dtype=np.float64))
    h_tilde[chosen] = mix["groups"][mix["lo"]]["mu"]
    return np.where(h_tilde >= 0.5, 1, -1), h_tilde


def ceo_postprocess(z_train, y_train, s_train, z_test, s_test, seed: int, *,
                    cost: str = "fnr"):
    """Calibrated equalized odds (§4.3), one draw with ``Generator(PCG64(seed + 10_000))``.
    The records report ``ceo_expected`` instead (issue #16 item 2)."""
    check_postprocess_inputs(z_train, y_train, s_train, z_test, s_test)
    h_train = expit(np.asarray(z_train, dtype=np.float64))
    mix = ceo_mixing(h_train, _labels01(y_train), np.asarray(s_train, bool), cost)
    rng = np.random.Generator(np.random.PCG64(seed + TEST_SEED_OFFSET))
    return ceo_apply(mix, z_test, s_test, rng)


def ceo_expected(z_train, y_train, s_train, z_test, s_test, *,
                 cost: str = "fnr") -> ExpectedPrediction:
    """Exact expectations of ``ceo_apply``: a row of ``g_lo`` is moved to ``mu_{g_lo}`` with
    probability ``floor(alpha n_lo) / n_lo`` (a uniform subset of that size), others never."""
    check_postprocess_inputs(z_train, y_train, s_train, z_test, s_test)
    h_train = expit(np.asarray(z_train, dtype=np.float64))
    mix = ceo_mixing(h_train, _labels01(y_train), np.asarray(s_train, bool), cost)
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
