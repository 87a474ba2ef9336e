"""How far a recomputed value may sit from the committed one and still be round-off.

Another machine (another CPU, BLAS build, thread count or torch kernel) sums the same numbers
in another order, so a cell recomputed there agrees with the committed one only up to
round-off. A value ``x`` (committed) and its recomputation ``y`` are

- **bitwise equal** when ``y`` is ``x`` to the last bit (NaN and inf as written);
- **equal within tolerance** when ``|y - x| <= k * u * (|x| + s)``;
- **different** otherwise (a count that moved, a value beyond the bound, a value missing).

``u`` is the unit round-off of the precision the computation runs in (``2**-53`` for float64,
``2**-24`` for float32). ``s`` is the scale of the terms the value is computed from: a residual,
a disparity or a difference near zero is a difference of such terms, so its round-off is of
the order of ``u * s``, not of ``u * |x|`` (this is what makes the bound usable at zero); the
data are standardised and the losses, weights and probabilities are of order 1 in every
experiment, so ``s = 1``. ``k`` counts the roundings that can reach the value: a computation
whose longest reduction sums ``n`` terms, repeated over ``T`` sequential steps whose errors are
carried forward, rounds about ``n * T`` times; independent rounding errors accumulate like a
random walk, about ``sqrt(n * T)`` units (the usual rule of thumb; the worst case ``n * T`` is
never approached in practice and would make a float32 bound meaningless), and ``k = 8 *
sqrt(n * T)`` covers the walk's tail and the few operations that turn the last iterate into
the metric. ``n`` and ``T`` are declared per family of experiments (:data:`FAMILIES`) from
the sizes of its computation (its largest data set and its step caps), never from the
differences seen. Counts and flags (iterations, rounds, stopping codes, data set sizes) are
integers round-off cannot move without changing the path the computation took: ``k = 0``
(:data:`COUNT_METRICS`).

Non-convex training (the relfair MLP, the fedmm networks, fairvfl's MLP) can amplify a
rounding difference along its path beyond any such bound; a ``different`` verdict there says
so (:attr:`Tolerance.note`).
"""

from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass

__all__ = ["BEYOND", "BITWISE", "COUNT_METRICS", "FAMILIES", "FORM", "WITHIN", "Agreement",
           "Family", "Tolerance", "agreement", "tolerance_for"]

U64 = 2.0 ** -53
U32 = 2.0 ** -24
SAFETY = 8.0
FORM = "|Δ| <= k·u·(|x| + s)"
BITWISE, WITHIN, BEYOND = "bitwise equal", "equal within tolerance", "different"


@dataclass(frozen=True)
class Tolerance:
    """``|Δ| <= k * u * (|x| + s)`` for one metric; ``why`` says where k and s come from."""

    k: float
    s: float
    u: float
    why: str
    note: str = ""  # said beside a ``different`` verdict (non-convex training)

    def bound(self, x: float) -> float:
        return self.k * self.u * (abs(x) + self.s)

    def text(self) -> str:
        if self.k == 0:
            return "exact (k = 0)"
        prec = "float64" if self.u == U64 else "float32"
        return f"k = {self.k:.3g}, u = {prec}, s = {self.s:g}"


@dataclass(frozen=True)
class Family:
    """The computation behind an experiment's values: its longest reduction ``n``, its
    sequential steps ``T`` and its precision.
    """

    pattern: str
    what: str
    n: float
    steps: float
    precision: str = "float64"
    nonconvex: bool = False
    s: float = 1.0

    def tolerance(self) -> Tolerance:
        u = U64 if self.precision == "float64" else U32
        k = SAFETY * math.sqrt(self.n * self.steps)
        note = ("non-convex training can amplify round-off beyond this bound on another "
                "machine" if self.nonconvex else "")
        return Tolerance(k, self.s, u, f"{self.what}: n = {self.n:.3g}, T = {self.steps:.3g}, "
                         f"{self.precision}", note)


# First match wins. n: the longest sum a step takes (rows of the largest data set, the model's
# width or dimension); T: the sequential steps whose errors are carried (rounds, iterations).
FAMILIES = (
    Family("constrfl.table4", "LCQP, ADMM with Cholesky solves of order d", n=500, steps=1e3),
    Family("constrfl.*", "logistic losses over a client's rows, ADMM rounds with Newton "
           "steps", n=3.3e4, steps=3e4),
    Family("core.demo", "L-BFGS on a8a's rows", n=2.3e4, steps=1e3),
    Family("fairvfl.*", "VFL rounds over ADULT's rows (linear model or MLP)", n=4.5e4,
           steps=1e4, nonconvex=True),
    Family("relfair.fig1", "closed-form geometry of two or three clients", n=10, steps=1e3),
    Family("relfair.fig2", "closed-form geometry of two or three clients", n=10, steps=1e3),
    Family("relfair.fig3", "logistic regression on the penguins' rows", n=350, steps=1e4),
    Family("relfair.*", "MLP training (float32, 784 inputs), rounds x local steps", n=784,
           steps=500, precision="float32", nonconvex=True),
    Family("fedmm.*", "CNN training (float32, 5x5x32 convolutions), rounds x local steps",
           n=800, steps=1.5e5, precision="float32", nonconvex=True),
    Family("*", "an experiment without a declared family: a long float64 computation",
           n=1e5, steps=1e4),
)

# Integers and flags: exact. Matched against metric and curve names of every experiment.
COUNT_METRICS = ("*_outer", "*rounds", "*_stopped", "*_stop_code", "*_certified_stop",
                 "admm_all_certified", "admm_certified_fraction", "admm_cap_hits", "floats_*",
                 "d", "feature_dimension", "n_samples_*", "iterations", "argmax_round",
                 "r_conv", "on_accelerator", "round", "admm_certified", "t")
EXACT = Tolerance(0.0, 0.0, U64, "a count or flag: round-off cannot move it without changing "
                  "the path the computation took")


def tolerance_for(experiment: str, metric: str) -> Tolerance:
    """The tolerance of ``metric`` (a metric or curve name) of ``experiment``."""
    if any(fnmatch.fnmatchcase(metric, p) for p in COUNT_METRICS):
        return EXACT
    if experiment == "constrfl.table3":  # data set sizes and dimensions only
        return EXACT
    fam = next(f for f in FAMILIES if fnmatch.fnmatchcase(experiment, f.pattern))
    return fam.tolerance()


@dataclass(frozen=True)
class Agreement:
    """One value against the committed one: ``status`` (:data:`BITWISE`, :data:`WITHIN`,
    :data:`BEYOND`), ``|Δ|`` and the bound it is held to.
    """

    name: str
    committed: object
    now: object
    status: str
    delta: float
    bound: float

    def ratio(self) -> float:
        """|Δ| as a share of the bound (inf beyond an exact bound)."""
        if self.delta == 0:
            return 0.0
        return self.delta / self.bound if self.bound > 0 else math.inf


def _float(x: object) -> float | None:
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def agreement(name: str, committed: object, now: object, tol: Tolerance) -> Agreement:
    """``committed`` against ``now`` (floats, or ``"nan"``/``"inf"`` strings, or ``"absent"``)."""
    a, b = _float(committed), _float(now)
    if a is None or b is None:
        same = committed == now
        return Agreement(name, committed, now, BITWISE if same else BEYOND,
                         0.0 if same else math.inf, 0.0)
    if a == b or (math.isnan(a) and math.isnan(b)):
        return Agreement(name, committed, now, BITWISE, 0.0, tol.bound(a) if
                         math.isfinite(a) else 0.0)
    if not (math.isfinite(a) and math.isfinite(b)):
        return Agreement(name, committed, now, BEYOND, math.inf, 0.0)
    delta, bound = abs(b - a), tol.bound(a)
    return Agreement(name, committed, now, WITHIN if delta <= bound else BEYOND, delta, bound)
