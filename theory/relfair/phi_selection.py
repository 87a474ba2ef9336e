"""Formula (13) of paper 002 (choice of phi), docs/decisions.md#relfair-overview and §8d, by sympy.

(12): ``u(phi) = (a + phi^2 c / 2)(b + phi c)^(-1/2)`` with a, b, c > 0 ((17) in App. C).
General p: ``u = (a + phi^2 c/2)(b + phi c)^(-p)``; ``d log u / d phi = 0`` iff
``(1 - p/2) c phi^2 + b phi - p a = 0``, whose positive root is
``phi* = (sqrt(b^2 + 2p(2-p) a c) - b) / ((2-p) c)``. At p = 1/2 this is the printed (13),
``(sqrt(b^2 + 2(1 - 0.25) a c) - b) / (c (1 + 0.5))``. Checks: the symbolic identities; the other
root is negative; ``u'(0) = -p c u / b < 0`` and ``u''(phi*) > 0`` on random positive (a, b, c).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from theory.evidence import Evidence, Term
from theory.registry import register
from theory.result import CheckResult

TERMS = (
    Term("phi* > 0: u decreases at 0 (-u'(0))", "-u'(0) = p c u(0)/b", 0.0),
    Term("curvature at phi* (u''(phi*))", "u''(phi*)", 0.0),
    Term("a-term of (12) (a p weight in phi*)", "phi*(a) - phi*(a/2)", 1e-9),
)


def printed_13(a, b, c):
    return (np.sqrt(b ** 2 + 2 * (1 - 0.25) * a * c) - b) / (c * (1 + 0.5))


@register("relfair.equation13_phi_selection", paper="002 relfair",
          seed_name="relfair.phi_selection",
          claim="(13) is the minimizer of (12)'s approximation u(phi)")
def check(seed: int, size: str) -> CheckResult:
    a, b, c, p, phi = sp.symbols("a b c p phi", positive=True)
    u = (a + phi ** 2 * c / 2) * (b + phi * c) ** (-p)
    dlog = sp.together(sp.diff(sp.log(u), phi))
    num, den = sp.fraction(dlog)
    quad = (1 - p / 2) * c * phi ** 2 + b * phi - p * a
    # d log u / d phi = (positive factor) * quad: numerator / quad and the denominator are
    # positive for positive symbols, so the stationary points are the roots of quad.
    ratio = sp.simplify(num / quad)
    ratio_sign_ok = bool(ratio.is_positive) and bool(den.is_positive)
    roots = sp.solve(sp.Eq(quad, 0), phi)
    general = (sp.sqrt(b ** 2 + 2 * p * (2 - p) * a * c) - b) / ((2 - p) * c)
    root_match = any(sp.simplify(r - general) == 0 for r in roots)
    half = sp.simplify(general.subs(p, sp.Rational(1, 2))
                       - (sp.sqrt(b ** 2 + 2 * (1 - sp.Rational(1, 4)) * a * c) - b)
                       / (c * (1 + sp.Rational(1, 2))))
    other = [r for r in roots if sp.simplify(r - general) != 0]
    other_negative = all(bool(sp.simplify(r).subs({a: 1, b: 1, c: 1, p: sp.Rational(1, 2)}) < 0)
                         for r in other)
    symbolic_ok = ratio_sign_ok and root_match and half == 0 and other_negative
    # numeric: u'(0) < 0, u''(phi*) > 0 at p = 1/2, and (13) is the grid argmin of u
    rng = np.random.default_rng(seed)
    du = sp.lambdify((a, b, c, phi), sp.diff(u.subs(p, sp.Rational(1, 2)), phi))
    d2u = sp.lambdify((a, b, c, phi), sp.diff(u.subs(p, sp.Rational(1, 2)), phi, 2))
    uf = sp.lambdify((a, b, c, phi), u.subs(p, sp.Rational(1, 2)))
    count = 50 if size == "small" else 500
    ev = Evidence(TERMS)
    margins = []
    for _ in range(count):
        av, bv, cv = np.exp(rng.normal(size=3))
        ps = printed_13(av, bv, cv)
        margins += [-du(av, bv, cv, 0.0), d2u(av, bv, cv, ps), 1e-9 - abs(du(av, bv, cv, ps))]
        ev.activity("phi* > 0: u decreases at 0 (-u'(0))", -du(av, bv, cv, 0.0))
        ev.activity("curvature at phi* (u''(phi*))", d2u(av, bv, cv, ps))
        ev.activity("a-term of (12) (a p weight in phi*)", ps - printed_13(av / 2, bv, cv))
        ev.criterion("u'(0) < 0", -du(av, bv, cv, 0.0))
        ev.criterion("u''(phi*) > 0", d2u(av, bv, cv, ps))
        ev.criterion("u'(phi*) = 0 at (13)", 1e-9 - abs(du(av, bv, cv, ps)))
        grid = np.linspace(0, 10 * ps + 1, 20001)
        margins.append((grid[1] - grid[0]) - abs(grid[np.argmin(uf(av, bv, cv, grid))] - ps))
        ev.criterion("(13) = grid argmin of u", margins[-1])
    ev.criterion("symbolic: (13) is the positive root at p = 1/2", 1.0 if symbolic_ok else -1.0)
    worst = float(min(margins)) if symbolic_ok else -1.0
    return CheckResult(
        name="relfair.equation13_phi_selection",
        claim=("(13) is exactly the positive root of (1 - p/2) c phi^2 + b phi - p a = 0 at "
               "p = 1/2, i.e. the minimizer of (12); the other root is negative"),
        paper="002 relfair", equation="(11)-(13), App. C (17)-(19)", instances=count,
        worst_margin=worst, ground_truth={"solver": f"sympy {sp.__version__} (symbolic)"},
        passed=bool(symbolic_ok and worst >= 0),
        paper_setting={"p": 0.5, "formula": "(13) as printed"},
        **ev.fields(),
        details={"general root": str(general), "roots": [str(r) for r in roots],
                 "symbolic_ok": symbolic_ok})
