"""The qualitative statements of paper 002, checked on the records (§7, App. A, §3.2, §4.3),
and the verified reference values they are judged against
(docs/decisions.md#relfair-penguins-values, docs/decisions.md#relfair-figures).

Each check takes the records of one experiment and returns ``(verdict, measured)``; a verdict
is None (inconclusive) when an ordering lies within the seeds' noise (``ordering_verdict``).
"""

from __future__ import annotations

import numpy as np

from repro.engine.experiment import RecordsMissing, ordering_verdict
from repro.engine.records.query import by
from repro.engine.records.records import RunRecord
from repro.relfair.experiments._cells import TABLE1_METHODS
from repro.relfair.metrics import transformed_lorenz

__all__ = ["FIG1_REFERENCE", "FIG3_CONTINUOUS", "FIG3_REFERENCE", "comparable_accuracy",
           "fairest_at_comparable_accuracy", "fig1_centers_match", "fig2_nested",
           "fig3_monotone", "fig3_reference", "fig4_lorenz", "ia_beats_pd", "lowest"]

# docs/decisions.md#relfair-figures [verified]: Fig. 1's centers and sums of distances.
FIG1_REFERENCE = {"minmax": ((0.0, 0.0), 7.081139), "spread": ((0.0, -0.25), 7.104862)}

# docs/decisions.md#relfair-penguins-values [verified]: phi -> (theta, R) of the grid solution.
FIG3_REFERENCE = {
    0.0: ((-34.90, 0.724, 0.339), 4.278400), 0.01: ((-34.82, 0.598, 0.351), 2.884110),
    0.02: ((-34.85, 0.234, 0.387), 1.013252), 0.03: ((-34.85, 0.234, 0.387), 1.013252),
    0.04: ((-34.85, 0.234, 0.387), 1.013252), 0.05: ((-34.70, 0.226, 0.387), 1.001831)}

# docs/decisions.md#relfair-penguins-values: continuous box-constrained optimum (multi-start SLSQP)
FIG3_CONTINUOUS = {0.0: 4.4586, 0.01: 2.5988, 0.02: 1.0, 0.03: 1.0, 0.04: 1.0, 0.05: 1.0}


# =========================================================================== Table 1 and Fig. 4

def _mean_metric(records, task, method, metric) -> float | None:
    recs = by(records, "task", "method").get((task, method), [])
    return float(np.mean([r.metrics[metric] for r in recs])) if recs else None


def _paired(records, metric: str, better: str, worse: str) -> list[float]:
    """Per seed, ``worse``'s metric minus ``better``'s (MNIST): positive when ``better`` is
    lower, as the claim says.
    """
    g = by(records, "task", "method", "seed")
    seeds = sorted({k[2] for k in g})
    return [g[("MNIST", worse, sd)][0].metrics[metric] - g[("MNIST", better, sd)][0].metrics[metric]
            for sd in seeds if ("MNIST", worse, sd) in g and ("MNIST", better, sd) in g]


def lowest(metric: str):
    """Scaff-PD-IA lowest: an ordering claim against the runner-up (the other method of lowest
    mean), judged on the paired differences over seeds (:func:`ordering_verdict`).
    """
    def check(records: list[RunRecord]) -> tuple[bool | None, str]:
        vals = {m: _mean_metric(records, "MNIST", m, metric) for m in TABLE1_METHODS}
        vals = {m: v for m, v in vals.items() if v is not None}
        if "Scaff-PD-IA" not in vals:
            raise RecordsMissing("no MNIST Scaff-PD-IA record")
        text = ", ".join(f"{m} {v:.4g}" for m, v in vals.items())
        others = {m: v for m, v in vals.items() if m != "Scaff-PD-IA"}
        if not others:
            raise RecordsMissing(f"MNIST {metric}: {text}; no other method recorded")
        runner = min(others, key=others.get)
        verdict, why = ordering_verdict(_paired(records, metric, "Scaff-PD-IA", runner),
                                        f"margin to {runner}")
        return verdict, f"MNIST {metric}: {text}; {why}"
    return check


def _all_of(verdicts) -> bool | None:
    """A conjunction of verdicts: False if any fails, else None if any is inconclusive."""
    verdicts = list(verdicts)
    if any(v is False for v in verdicts):
        return False
    return None if any(v is None for v in verdicts) else True


def _word(v: bool | None) -> str:
    return "inconclusive" if v is None else "yes" if v else "NO"


def comparable_accuracy(records: list[RunRecord]) -> tuple[bool, str]:
    """Scaff-PD-IA's MNIST acc_all within 0.03 of the best method's
    (docs/decisions.md#relfair-table1).
    """
    vals = {m: _mean_metric(records, "MNIST", m, "acc_all") for m in TABLE1_METHODS}
    vals = {m: v for m, v in vals.items() if v is not None}
    if "Scaff-PD-IA" not in vals:
        raise RecordsMissing("no MNIST Scaff-PD-IA record")
    gap = max(vals.values()) - vals["Scaff-PD-IA"]
    return gap <= 0.03, (f"MNIST acc_all: IA {vals['Scaff-PD-IA']:.4f}, best "
                         f"{max(vals, key=vals.get)} {max(vals.values()):.4f} (gap {gap:.4f})")


def fairest_at_comparable_accuracy(records: list[RunRecord]) -> tuple[bool, str]:
    """The paper's headline (§7): lowest R_AB and lowest Gini, with acc_all within 0.03 of
    the best method's (docs/decisions.md#relfair-table1 tolerance).
    """
    parts = [lowest("R_AB")(records), lowest("gini")(records), comparable_accuracy(records)]
    names = ("lowest R_AB", "lowest Gini", "comparable acc_all")
    return _all_of([p[0] for p in parts]), "; ".join(
        f"{n}: {_word(p[0])} ({p[1]})" for n, p in zip(names, parts, strict=True))


def ia_beats_pd(records: list[RunRecord]) -> tuple[bool | None, str]:
    """Phi = 0.2 lowers R_AB and Gini relative to phi = 0 (Scaff-PD), paired over seeds."""
    out, verdicts = [], []
    for metric in ("R_AB", "gini"):
        a = _mean_metric(records, "MNIST", "Scaff-PD-IA", metric)
        b = _mean_metric(records, "MNIST", "Scaff-PD", metric)
        if a is None or b is None:
            raise RecordsMissing("no MNIST Scaff-PD-IA or Scaff-PD record")
        diffs = _paired(records, metric, "Scaff-PD-IA", "Scaff-PD")
        verdict, why = ordering_verdict(diffs, "PD - IA")
        verdicts.append(verdict)
        wins = sum(d > 0 for d in diffs)
        out.append(f"{metric} IA {a:.4g} vs PD {b:.4g} (IA lower in {wins}/{len(diffs)} "
                   f"seeds; {why})")
    return _all_of(verdicts), "; ".join(out)


def fig4_lorenz(records: list[RunRecord]) -> tuple[bool, str]:
    """Both halves of §7's sentence on Fig. 4: Scaffold's curve below Scaff-PD-IA's near x = 0
    and above it near x = 1.
    """
    groups = by(records, "method")
    if ("Scaff-PD-IA",) not in groups or ("Scaffold",) not in groups:
        raise RecordsMissing("no Scaff-PD-IA or Scaffold record")
    curves = {m: transformed_lorenz(groups[(m,)][0].curves["client_val_loss"])
              for m in ("Scaff-PD-IA", "Scaffold")}

    def at(m, x0):
        x, y = curves[m]
        return float(np.interp(x0, x, y))

    ia02, sc02 = at("Scaff-PD-IA", 0.2), at("Scaffold", 0.2)
    ia09, sc09 = at("Scaff-PD-IA", 0.9), at("Scaffold", 0.9)
    near0, near1 = ia02 > sc02, sc09 > ia09
    return near0 and near1, (f"near x = 0, l'(0.2): IA {ia02:.4f} vs Scaffold {sc02:.4f} "
                             f"(Scaffold below: {'yes' if near0 else 'NO'}); near x = 1, "
                             f"l'(0.9): IA {ia09:.4f} vs Scaffold {sc09:.4f} (Scaffold above: "
                             f"{'yes' if near1 else 'NO'}); one seed (Fig. 4 is seed 0)")


# =========================================================================== Figures 1-3

def fig1_centers_match(records: list[RunRecord]) -> tuple[bool, str]:
    """Fig. 1's centers to 1e-6 and sums of distances to 1e-4 (:data:`FIG1_REFERENCE`)."""
    m = records[0].metrics
    ok, parts = True, []
    for kind, ((cx, cy), total) in FIG1_REFERENCE.items():
        dc = max(abs(m[f"{kind}_center_x"] - cx), abs(m[f"{kind}_center_y"] - cy))
        ds = abs(m[f"{kind}_sum"] - total)
        ok &= dc <= 1e-6 and ds <= 1e-4
        parts.append(f"{kind}: center err {dc:.1e}, sum {m[f'{kind}_sum']:.6f} (ref {total})")
    return ok, "; ".join(parts)


def fig2_nested(records: list[RunRecord]) -> tuple[bool, str]:
    """Lambda_phi grows with phi: the vertices of each hexagon lie in the next one."""
    from repro.relfair.geometry import hexagon_vertices
    from repro.relfair.problem import RelativeAmbiguitySet

    phis = records[0].config["phis"]
    ok = True
    for a, b in zip(phis, phis[1:], strict=False):
        small = RelativeAmbiguitySet(3, 0.5, 0.5, a)
        big = RelativeAmbiguitySet(3, 0.5, 0.5, b)
        vertices = hexagon_vertices(small.phi, small.n, small.alpha)
        ok &= all(big.contains(v) for v in vertices)
    return ok, f"vertices of Lambda_phi lie in Lambda_phi' for consecutive phi in {phis}"


def fig3_monotone(records: list[RunRecord]) -> tuple[bool, str]:
    """R(theta*_phi) non-increasing in phi (Thm. 1) on the grid solutions."""
    from repro.relfair.penguins import PHIS

    R = [records[0].metrics[f"R_phi{p}"] for p in PHIS]
    ok = all(b <= a + 1e-12 for a, b in zip(R, R[1:], strict=False))
    return ok, "R: " + ", ".join(f"{r:.6f}" for r in R)


def fig3_reference(records: list[RunRecord]) -> tuple[bool, str]:
    """The grid and continuous solutions against :data:`FIG3_REFERENCE` and
    :data:`FIG3_CONTINUOUS` (paper-scale grid only).
    """
    from repro.relfair.penguins import PHIS

    m = records[0].metrics
    if records[0].config["theta23_step"] != 0.001:
        return False, "reference values need the paper-scale grid (smoke grid is coarser)"
    err_r = max(abs(m[f"R_phi{p}"] - FIG3_REFERENCE[p][1]) for p in PHIS)
    err_t = max(abs(m[f"theta{j + 1}_phi{p}"] - FIG3_REFERENCE[p][0][j])
                for p in PHIS for j in range(3))
    err_c = max(abs(m[f"R_continuous_phi{p}"] - FIG3_CONTINUOUS[p]) for p in PHIS)
    return err_r <= 1e-4 and err_t <= 1e-9 and err_c <= 1e-4, (
        f"grid: max |R - ref| {err_r:.2e}, max |theta - ref| {err_t:.1e}; continuous: "
        f"max |R - ref| {err_c:.1e}")
