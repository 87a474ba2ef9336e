"""Prop. 5 of paper 002 (skewness of Lambda_phi), docs/decisions.md#relfair-overview and §8b.

``s(lambda) = n sum_i (lambda_i - 1/n)^2 + 1 = n ||lambda||^2`` (since sum lambda = 1), so
``s(Lambda) = n max_lambda ||lambda||^2`` is attained at a vertex, a permutation of w:
``s(Lambda_phi(Delta_alpha, Delta_beta)) = n ||w||^2`` exactly. For A = B = Delta_alpha with
integer alpha n and alpha <= 1/2 this is ``(1 + phi^2)/((1 - phi)^2 alpha)``; the printed
Prop. 5, ``alpha[(1/((1-phi)alpha) - 1)^2 + (phi/((1-phi)alpha) + 1)^2] + 1 + O(1/n)``, equals that
plus ``2 alpha - 1``: wrong by the constant ``1 - 2 alpha`` (not O(1/n)) except at alpha = 1/2.
(Its proof drops the n - 2 alpha n zero coordinates, each contributing 1/n.)

The quantity under test is the package's ``RelativeAmbiguitySet.skewness`` (what Thm 4's bound
and the experiments' reports use); every reference value is computed here (vertices and ``w``
from (2) and (7), :mod:`theory.relfair.sets`).

Checks: (1) identity s(lambda) = n ||lambda||^2 on random points of Lambda; (2) n||w||^2 equals
the brute-force max over all vertex pairs (a, b) of Delta_alpha x Delta_beta for n <= 8
(docs/decisions.md#relfair-theory values 6.755858, 2.928571, 20.0, 1.539966); (3) the closed form
for
alpha <= 1/2 and for alpha > 1/2 at integer alpha n, n in {10, ..., 10000}; (4) printed - exact
= 2 alpha - 1 at alpha <= 1/2 (the erratum), and n |s_n - s_inf| bounded for non-integer
alpha n.
"""

from __future__ import annotations

import itertools

import numpy as np

from repro.relfair.problem import RelativeAmbiguitySet
from theory.evidence import Evidence, Term
from theory.registry import register
from theory.relfair.sets import capped_vertex, random_points, w_vector
from theory.result import CheckResult

TOL = 1e-10
# the package's skewness is the measured side of this statement (its reference: brute force
# over vertices and the closed forms written here)
UNDER_TEST = {"skewness": "RelativeAmbiguitySet.skewness, the quantity Prop. 5 is about"}
TERMS = (
    Term("phi-part of lambda (negative entries of w)", "-min_i w_i", 1e-12),
    Term("fractional vertex entry (non-integer alpha n)", "|alpha n - round(alpha n)|", 1e-9),
    Term("erratum constant 1 - 2 alpha", "|1 - 2 alpha| (alpha <= 1/2)", 1e-9),
    Term("alpha > 1/2 branch of the closed form", "alpha - 1/2", 0.0),
)


def exact_limit(alpha: float, phi: float) -> float:
    """s_inf for A = B = Delta_alpha (docs/decisions.md#relfair-theory closed forms)."""
    if alpha <= 0.5:
        return (1 + phi ** 2) / ((1 - phi) ** 2 * alpha)
    return ((1 - alpha) * (1 + phi ** 2) + (2 * alpha - 1) * (1 - phi) ** 2) / (
        alpha ** 2 * (1 - phi) ** 2)


def printed_prop5(alpha: float, phi: float) -> float:
    """Prop. 5 as printed, without its O(1/n)."""
    t = 1 / ((1 - phi) * alpha)
    return alpha * ((t - 1) ** 2 + (phi * t + 1) ** 2) + 1


def vertices(n: int, alpha: float) -> np.ndarray:
    v = capped_vertex(n, alpha)
    return np.unique(np.array([v[list(p)] for p in itertools.permutations(range(n))]), axis=0)


def brute_force(n: int, alpha: float, beta: float, phi: float) -> float:
    A, B = vertices(n, alpha), vertices(n, beta)
    lam = (A[:, None, :] - phi * B[None, :, :]) / (1 - phi)
    return float(n * (lam ** 2).sum(-1).max())


BRUTE_REFERENCE = {(6, 0.3, 0.3, 0.3): 6.755858, (7, 0.5, 0.5, 0.2): 2.928571,
                   (8, 0.25, 0.25, 0.5): 20.0, (6, 0.8, 0.8, 0.3): 1.539966}


@register("relfair.proposition5_skewness", paper="002 relfair",
          seed_name="relfair.skewness",
          claim="s(Lambda_phi) = n||w||^2; Prop. 5 is off by 1 - 2 alpha")
def check(seed: int, size: str) -> CheckResult:
    rng = np.random.default_rng(seed)
    ev = Evidence(TERMS)
    margins, errata = [], []
    inst = 0
    # (1) identity on random points of Lambda (convex combinations of its vertices)
    for n, al, phi in ((10, 0.2, 0.2), (37, 0.3, 0.5), (100, 0.2, 0.1)):
        w = w_vector(n, al, al, phi)
        ev.activity("phi-part of lambda (negative entries of w)", -w.min())
        ev.activity("fractional vertex entry (non-integer alpha n)",
                    abs(al * n - round(al * n)))
        for lam in random_points(rng, w, 20):
            s = n * np.sum((lam - 1 / n) ** 2) + 1
            margins.append(TOL - abs(s - n * lam @ lam) / (1 + s))
            ev.criterion("s(lambda) = n ||lambda||^2 on Lambda", margins[-1])
            inst += 1
    # (2) brute force over vertex pairs (n <= 8); docs/decisions.md#relfair-theory set-ups use A = B
    brute = {}
    for (n, al, be, phi), ref in BRUTE_REFERENCE.items():
        exact = RelativeAmbiguitySet(n, al, be, phi).skewness
        bf = brute_force(n, al, be, phi)
        brute[f"n={n},alpha={al},phi={phi}"] = (exact, bf, ref)
        margins += [TOL - abs(exact - bf), 5e-7 - abs(exact - ref)]
        ev.criterion("s(Lambda) = max over vertex pairs (brute force)", TOL - abs(exact - bf))
        ev.criterion("s(Lambda) = tabulated values", 5e-7 - abs(exact - ref))
        inst += 1
    # (3)-(4) closed forms and the erratum
    table = []
    tagged = []  # (margin, instance) of the closed form and the erratum, for ``closest``
    for al in (0.1, 0.2, 0.5, 0.7):
        for phi in (0.0, 0.2, 0.5):
            for n in (10, 20, 50, 100, 1000, 10000):
                if abs(al * n - round(al * n)) > 1e-9:
                    continue
                s_n = RelativeAmbiguitySet(n, al, al, phi).skewness
                margins.append(TOL * (1 + s_n) - abs(s_n - exact_limit(al, phi)))
                ev.criterion("s(Lambda) = closed form", margins[-1] / (TOL * (1 + s_n)))
                ev.activity("alpha > 1/2 branch of the closed form", al - 0.5)
                tagged.append((margins[-1], {
                    "criterion": "s(Lambda) = closed form", "alpha": al, "phi": phi, "n": n,
                    "n||w||^2": s_n, "closed form": exact_limit(al, phi),
                    "|difference|": abs(s_n - exact_limit(al, phi)),
                    "tolerance": TOL * (1 + s_n)}))
                inst += 1
            printed = printed_prop5(al, phi)
            diff = exact_limit(al, phi) - printed
            table.append((al, phi, exact_limit(al, phi), printed, diff))
            if al <= 0.5:
                errata.append(TOL - abs(diff - (1 - 2 * al)))
                ev.criterion("exact - printed Prop. 5 = 1 - 2 alpha", errata[-1])
                ev.activity("erratum constant 1 - 2 alpha", abs(1 - 2 * al))
                tagged.append((errata[-1], {
                    "criterion": "exact - printed Prop. 5 = 1 - 2 alpha", "alpha": al,
                    "phi": phi, "exact": exact_limit(al, phi), "printed": printed,
                    "exact - printed": diff, "1 - 2 alpha": 1 - 2 * al, "tolerance": TOL}))
    # non-integer alpha n: O(1/n) correction, n (s_n - s_inf) = -6.5 at alpha = phi = 0.2
    corr = [n * (RelativeAmbiguitySet(n, 0.2, 0.2, 0.2).skewness - exact_limit(0.2, 0.2))
            for n in (11, 51, 101, 1001, 10001)]
    margins += [1e-6 - abs(c + 6.5) for c in corr]
    ev.criterion("n (s_n - s_inf) = -6.5 (non-integer alpha n)",
                 min(1e-6 - abs(c + 6.5) for c in corr))
    ev.activity("fractional vertex entry (non-integer alpha n)", 0.2 * 11 - 2)
    worst = float(min(min(margins), min(errata)))
    closest = min(tagged, key=lambda t: t[0] / t[1]["tolerance"])[1]
    rows = "; ".join(f"alpha={a},phi={p}: exact {e:.4f}, Prop.5 {q:.4f}" for a, p, e, q, _ in
                     table if p == 0.2)
    return CheckResult(
        name="relfair.proposition5_skewness",
        claim=("s(Lambda_phi(Delta_a,Delta_a)) = n||w||^2 = (1+phi^2)/((1-phi)^2 alpha) for "
               "alpha <= 1/2; the printed Prop. 5 equals that + (2 alpha - 1), i.e. it is "
               "too small "
               f"by the constant 1 - 2 alpha (not O(1/n)): {rows}"),
        paper="002 relfair", equation="Prop. 5 (§6), App. I", instances=inst,
        worst_margin=worst, ground_truth={"solver": "closed form + brute force over vertices"},
        passed=bool(worst >= 0), closest=closest,
        paper_setting={"n": 100, "alpha = beta": 0.2, "phi": 0.2,
                       "s(Lambda)": RelativeAmbiguitySet(100, 0.2, 0.2, 0.2).skewness,
                       "closed form": exact_limit(0.2, 0.2)},
        **ev.fields(),
        details={"brute_force (exact, brute, spec)": brute, "table": table,
                 "n(s_n - s_inf), alpha=phi=0.2, n=11..10001": corr})
