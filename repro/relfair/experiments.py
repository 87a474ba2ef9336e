"""Paper 002's Table 1 and Figures 1-4 as registered experiments (spec relfair §6-7).

- ``relfair.table1``: six methods x {MNIST, CIFAR10} x seeds (CIFAR-10 cells are ``not_run``
  here: no copy of the data is reachable, docs/deviations.md#data-unavailable).
- ``relfair.fig1``: the eight-point toy of App. A (verified numbers, spec §7).
- ``relfair.fig2``: the hexagons Lambda_phi(Delta_0.5^2, Delta_0.5^2).
- ``relfair.fig3``: Penguins, R(theta*_phi) over phi by exhaustive grid search (§4.3).
- ``relfair.fig4``: transformed Lorenz curves of the MNIST client losses (seed 0).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

from repro.core.metrics import lorenz_curve
from repro.engine.experiment import (
    CellResult,
    Claim,
    Experiment,
    Reproduced,
    RunContext,
    ordering_verdict,
)
from repro.engine.plotting import figure, plot_mean_band, save_figure
from repro.engine.readings import Reading
from repro.engine.records import RunRecord
from repro.engine.registry import register
from repro.engine.report import Table, paper_values, write_table
from repro.relfair.algorithms import METHODS
from repro.relfair.data import TASKS
from repro.relfair.training import SCALES, run_training

PAPER = "002_fd6ea8b278c89851.txt"
MNIST_DATA = (("mnist", "train-images-idx3-ubyte.gz"), ("mnist", "train-labels-idx1-ubyte.gz"))
METRICS = ("acc_all", "acc_worst20", "acc_best20", "R_AB", "gini")
DEV = "docs/deviations.md"
# spec §6: accuracy +-0.03 absolute, Gini +-0.03 absolute, R +-20% relative (single-run paper).
TOLERANCE_NOTE = f"{DEV}#relfair-table-1-tolerances"
DEVIATION_NOTE = f"{DEV}#relfair-table-1-deviations"
CLAIMS_NOTE = f"{DEV}#relfair-claims"  # linked by every failing or inconclusive claim
# the cause of each method's deviations (docs/deviations.md, relfair section)
CAUSE_NOTES = {
    "Scaffold": "relfair-table-1-scaffold-type-methods-under-trained-tau-0025",
    "Scaff-PD": "relfair-table-1-scaffold-type-methods-under-trained-tau-0025",
    "Scaff-PD-IA": "relfair-table-1-scaffold-type-methods-under-trained-tau-0025",
    "FedAvg": "relfair-table-1-fedavg-and-drfa-fairer-than-printed-local-steps",
    "DRFA": "relfair-table-1-fedavg-and-drfa-fairer-than-printed-local-steps",
    "SAFL": "relfair-table-1-safl-less-accurate-one-minibatch-step-per-round",
}
SEEDS = {"smoke": (0,), "paper": (0, 1, 2)}


# =========================================================================== readings (#15)

def _not_safl(config: dict) -> bool:
    return config["method"] != "SAFL"


J2_EPOCHS = (f"{PAPER} App. J.2 (line 1261): \"We set the numbers of global epochs R of all the "
             "algorithms to be 100 and the numbers of local epochs J of all the algorithms "
             "except for SAFL to be 5\"")
# Chosen by the text before any run: the paper's own settings appendix (J.2) wins over the
# generic "for j = 1..J" of Alg. 2; spec A1 chose steps, the paper wins (docs/deviations.md).
READINGS = (
    Reading("epochs", "J = 5 local epochs (App. J.2): client i takes 5 ceil(N_i/B) minibatch "
            "steps per round; the Scaffold-type methods normalise Delta u by eta 5 (one Alg. 2 "
            "step = one epoch), tau = 2.5e-2, eta = 1e-2; FedAvg/DRFA lr 0.1; SAFL one "
            "FedSGD step per round", basis=J2_EPOCHS, spec="relfair A1, A4",
            overrides={"local_work": "epochs"}, applies_to=_not_safl, primary=True),
    Reading("steps", "J = 5 local SGD steps of B = 32 (Alg. 2's j = 1..J read as minibatch "
            "steps; the package's reading before issue #15)",
            basis=f"{PAPER} Alg. 2 (\"for j = 1, ..., J\") and spec relfair A1",
            spec="relfair A1"),
    Reading("summed-loss", "as `epochs`, with R_AB and Gini of the per-client validation losses "
            "summed over samples (the paper never says mean; its Penguins losses are sums)",
            basis=f"{PAPER} §7 / Fig. 4 (\"loss\" of each client, unqualified) and the "
                  "Penguins loss of §4.3 (a sum over samples)", spec="relfair A18",
            overrides={"local_work": "epochs"}, applies_to=_not_safl,
            metrics={"R_AB": "R_AB_summed", "gini": "gini_summed"}),
)


# =========================================================================== Table 1

def table1_cells(scale: str) -> list[dict]:
    s = SCALES[scale]
    return [{"task": task, "method": m, "seed": seed, **{k: s[k] for k in (
        "n_clients", "subset", "rounds", "local_steps", "batch", "eval_every")}}
            for task in TASKS for m in METHODS for seed in SEEDS[scale]]


def training_cell(config: dict, ctx: RunContext) -> CellResult:
    metrics, curves = run_training(config, ctx)
    return CellResult(metrics=metrics, curves=curves)


def _by(records: list[RunRecord], *keys: str) -> dict[tuple, list[RunRecord]]:
    out: dict[tuple, list[RunRecord]] = defaultdict(list)
    for r in records:
        if r.ok:
            out[tuple(r.config[k] for k in keys)].append(r)
    return out


def _tolerance(metric: str, reported: float) -> float:
    return 0.2 * reported if metric == "R_AB" else 0.03


def table1_reproduce(records: list[RunRecord]) -> list[Reproduced]:
    import csv

    reported = {}
    with open(Path(__file__).resolve().parents[1] / "reported" / "relfair_table1.csv") as f:
        for row in csv.DictReader(f):
            reported[(row["task"], row["method"], row["metric"])] = float(row["value"])
    out = []
    for (task, method), recs in sorted(_by(records, "task", "method").items()):
        for metric in METRICS:
            values = tuple(r.metrics[metric] for r in sorted(recs, key=lambda r: r.config["seed"]))
            ref = reported.get((task, method, metric), np.nan)
            out.append(Reproduced("relfair_table1", {"task": task, "method": method}, metric,
                                  values, tolerance=_tolerance(metric, ref),
                                  note=f"see {DEV}#{CAUSE_NOTES[method]} and "
                                       f"{DEVIATION_NOTE}"))
    return out


def _reading_of(records: list[RunRecord]) -> str:
    """The local-work reading the records were run under (`repro figures` renders the
    primary's)."""
    works = {r.config.get("local_work", "steps") for r in records
             if r.ok and r.config.get("method") != "SAFL"}
    return "/".join(sorted(works)) or "?"


def table1_render(records: list[RunRecord], out: Path, scale: str) -> list[Path]:
    groups = _by(records, "task", "method")
    table = Table(f"relfair.table1: Table 1 of paper 002 (scale={scale}, reading "
                  f"{_reading_of(records)})",
                  ["task", "method", *METRICS, "seeds"],
                  caption="Client validation metrics of the last iterate; mean ± sample std "
                          "over seeds. R_AB = top-20%/bottom-20% mean client loss; Gini of "
                          "client losses (standard form, spec §5).")
    printed = paper_values("relfair_table1")
    for task in TASKS:
        for m in METHODS:
            recs = groups.get((task, m), [])  # none: "not run (paper)"
            table.add(task, m, *(printed.measured([r.metrics[k] for r in recs], k,
                                                  3 if k == "R_AB" else 4, task=task, method=m)
                                 for k in METRICS), len(recs))
    paths = write_table(table, out, "relfair_table1")
    fig, ax = figure()
    n_seeds = 0
    for i, m in enumerate(METHODS):
        recs = groups.get(("MNIST", m), [])
        if recs and "val_acc" in recs[0].curves:
            runs = np.array([r.curves["val_acc"] for r in recs])
            every = recs[0].config["eval_every"]
            plot_mean_band(ax, every * np.arange(1, runs.shape[1] + 1), runs, color=f"C{i}",
                           label=m)
            n_seeds = max(n_seeds, len(recs))
    ax.set_xlabel("round")
    ax.set_ylabel("mean client validation accuracy")
    ax.set_title(f"MNIST learning curves ({scale}): mean over {n_seeds} seed"
                 + ("s, band ±1 std" if n_seeds > 1 else ""))
    ax.legend(fontsize=7)
    return paths + save_figure(fig, out, "relfair_table1_curves")


def _mean_metric(records, task, method, metric) -> float | None:
    recs = _by(records, "task", "method").get((task, method), [])
    return float(np.mean([r.metrics[metric] for r in recs])) if recs else None


def _paired(records, metric: str, better: str, worse: str) -> list[float]:
    """Per seed, ``worse``'s metric minus ``better``'s (MNIST): positive when ``better`` is
    lower, as the claim says."""
    g = _by(records, "task", "method", "seed")
    seeds = sorted({k[2] for k in g})
    return [g[("MNIST", worse, sd)][0].metrics[metric] - g[("MNIST", better, sd)][0].metrics[metric]
            for sd in seeds if ("MNIST", worse, sd) in g and ("MNIST", better, sd) in g]


def _lowest(metric: str):
    """Scaff-PD-IA lowest: an ordering claim against the runner-up (the other method of lowest
    mean), judged on the paired differences over seeds (:func:`ordering_verdict`)."""
    def check(records: list[RunRecord]) -> tuple[bool | None, str]:
        vals = {m: _mean_metric(records, "MNIST", m, metric) for m in METHODS}
        vals = {m: v for m, v in vals.items() if v is not None}
        if "Scaff-PD-IA" not in vals:
            return False, "no MNIST Scaff-PD-IA record"
        text = ", ".join(f"{m} {v:.4g}" for m, v in vals.items())
        others = {m: v for m, v in vals.items() if m != "Scaff-PD-IA"}
        if not others:
            return False, f"MNIST {metric}: {text}; no other method recorded"
        runner = min(others, key=others.get)
        verdict, why = ordering_verdict(_paired(records, metric, "Scaff-PD-IA", runner),
                                        f"margin to {runner}")
        return verdict, f"MNIST {metric}: {text}; {why}"
    return check


def _seed_std(records, task, method, metric) -> float:
    recs = _by(records, "task", "method").get((task, method), [])
    vals = [r.metrics[metric] for r in recs]
    return float(np.std(vals, ddof=1)) if len(vals) > 1 else float("nan")


def _fairest_at_comparable_accuracy(records: list[RunRecord]) -> tuple[bool, str]:
    """The paper's headline (§7): lowest R_AB and lowest Gini, with acc_all within 0.03 of
    the best method's (spec §6 tolerance)."""
    parts = [_lowest("R_AB")(records), _lowest("gini")(records), _comparable_accuracy(records)]
    names = ("lowest R_AB", "lowest Gini", "comparable acc_all")
    return _all_of([p[0] for p in parts]), "; ".join(
        f"{n}: {_word(p[0])} ({p[1]})" for n, p in zip(names, parts, strict=True))


def _all_of(verdicts) -> bool | None:
    """A conjunction of verdicts: False if any fails, else None if any is inconclusive."""
    verdicts = list(verdicts)
    if any(v is False for v in verdicts):
        return False
    return None if any(v is None for v in verdicts) else True


def _word(v: bool | None) -> str:
    return "inconclusive" if v is None else "yes" if v else "NO"


def _comparable_accuracy(records: list[RunRecord]) -> tuple[bool, str]:
    vals = {m: _mean_metric(records, "MNIST", m, "acc_all") for m in METHODS}
    vals = {m: v for m, v in vals.items() if v is not None}
    if "Scaff-PD-IA" not in vals:
        return False, "no MNIST Scaff-PD-IA record"
    gap = max(vals.values()) - vals["Scaff-PD-IA"]
    return gap <= 0.03, (f"MNIST acc_all: IA {vals['Scaff-PD-IA']:.4f}, best "
                         f"{max(vals, key=vals.get)} {max(vals.values()):.4f} (gap {gap:.4f})")


def _ia_beats_pd(records: list[RunRecord]) -> tuple[bool | None, str]:
    out, verdicts = [], []
    for metric in ("R_AB", "gini"):
        a = _mean_metric(records, "MNIST", "Scaff-PD-IA", metric)
        b = _mean_metric(records, "MNIST", "Scaff-PD", metric)
        if a is None or b is None:
            return False, "missing records"
        diffs = _paired(records, metric, "Scaff-PD-IA", "Scaff-PD")
        verdict, why = ordering_verdict(diffs, "PD - IA")
        verdicts.append(verdict)
        wins = sum(d > 0 for d in diffs)
        out.append(f"{metric} IA {a:.4g} vs PD {b:.4g} (IA lower in {wins}/{len(diffs)} "
                   f"seeds; {why})")
    return _all_of(verdicts), "; ".join(out)


TABLE1 = register(Experiment(
    name="relfair.table1",
    title="Table 1: six FL methods on MNIST/CIFAR-10, accuracy and relative fairness",
    paper=PAPER, cells=table1_cells, run_cell=training_cell, render=table1_render,
    scales=("smoke", "paper"),
    cost={"smoke": "40 s (CIFAR-10 cells not_run; all readings)",
          "paper": "MNIST, 3 seeds: `steps` 35 min (measured on 2 loaded cores); `epochs` "
                   "~85 CPU min more (one cell measured: 707 s wall, 2 loaded cores)"},
    data=MNIST_DATA, reported=("relfair_table1",), reproduce=table1_reproduce,
    readings=READINGS,
    claims=(
        Claim("Scaff-PD-IA has the lowest R_AB on MNIST", "§7, Table 1", _lowest("R_AB"),
              deviation=CLAIMS_NOTE),
        Claim("Scaff-PD-IA has the lowest Gini on MNIST", "§7, Table 1", _lowest("gini"),
              deviation=CLAIMS_NOTE),
        Claim("Scaff-PD-IA's average accuracy is comparable (within 0.03 of the best)",
              "§7, Table 1", _comparable_accuracy, deviation=CLAIMS_NOTE),
        Claim("phi = 0.2 lowers R_AB and Gini relative to Scaff-PD (phi = 0)", "§7, Table 1",
              _ia_beats_pd, deviation=CLAIMS_NOTE),
        Claim("Scaff-PD-IA has the lowest R_AB and Gini at comparable average accuracy "
              "(issue #5)", "§7, Table 1", _fairest_at_comparable_accuracy,
              deviation=CLAIMS_NOTE),
    ),
))


# =========================================================================== server-step ablation

ABLATION_METHODS = ("Scaffold", "Scaff-PD", "Scaff-PD-IA")
ABLATION_TAUS = (0.025, 0.1)


def ablation_cells(scale: str) -> list[dict]:
    """Not a paper item: tests the explanation of the Scaffold-type deviation (A4) by rerunning
    the three methods with tau = 0.1 (beta = tau/(eta J) = 2) next to the printed 0.025; MNIST,
    seed 0. tau = 0.025 cells equal Table 1's runs (same shared randomness)."""
    base = [c for c in table1_cells(scale) if c["task"] == "MNIST" and c["seed"] == 0
            and c["method"] in ABLATION_METHODS]
    return [{**c, "tau": tau} for c in base for tau in ABLATION_TAUS]


def ablation_render(records: list[RunRecord], out: Path, scale: str) -> list[Path]:
    table = Table(f"relfair.ablation_server_step: global step tau of Alg. 1 line 15 "
                  f"(MNIST, seed 0, scale={scale})", ["method", "tau", *METRICS],
                  caption="Not in the paper: tau = 0.025 is App. J.2's value; tau = 0.1 tests "
                          "whether under-training explains the deviation (docs/deviations.md).")
    for (m, tau), recs in sorted(_by(records, "method", "tau").items()):
        table.add(m, tau, *(f"{recs[0].metrics[k]:.4f}" for k in METRICS))
    return write_table(table, out, "relfair_ablation_server_step")


register(Experiment(
    name="relfair.ablation_server_step",
    title="Ablation (not in the paper): server step tau of the Scaffold-type methods",
    paper=PAPER, cells=ablation_cells, run_cell=training_cell, render=ablation_render,
    scales=("smoke", "paper"), cost={"smoke": "15 s", "paper": "15 min"}, data=MNIST_DATA,
))


# =========================================================================== Figure 4

def fig4_cells(scale: str) -> list[dict]:
    return [c for c in table1_cells(scale) if c["task"] == "MNIST" and c["seed"] == 0]


def transformed_lorenz(losses) -> tuple[np.ndarray, np.ndarray]:
    """Fig. 4's curve l'(x) = l(x) - x/2 through (k/n, L_k - k/(2n)) (spec §5)."""
    x, L = lorenz_curve(losses)
    return x, L - x / 2


def fig4_render(records: list[RunRecord], out: Path, scale: str) -> list[Path]:
    groups = _by(records, "method")
    fig, ax = figure()
    for i, m in enumerate(METHODS):
        if (m,) in groups:
            x, y = transformed_lorenz(groups[(m,)][0].curves["client_val_loss"])
            ax.plot(x, y, color=f"C{i}", label=f"{m} (Gini {groups[(m,)][0].metrics['gini']:.3f})")
    ax.plot([0, 1], [0, 0.5], color="gray", ls=":", label="equality")
    ax.set_xlabel("cumulative share of clients")
    ax.set_ylabel(r"transformed Lorenz curve $l(x) - x/2$")
    ax.set_title(f"Fig. 4: MNIST client losses ({scale}, seed 0)")
    ax.legend(fontsize=7)
    return save_figure(fig, out, "relfair_fig4")


def _fig4_lorenz_claim(records: list[RunRecord]) -> tuple[bool, str]:
    groups = _by(records, "method")
    if ("Scaff-PD-IA",) not in groups or ("Scaffold",) not in groups:
        return False, "missing records"
    curves = {m: transformed_lorenz(groups[(m,)][0].curves["client_val_loss"])
              for m in ("Scaff-PD-IA", "Scaffold")}

    def at(m, x0):
        x, y = curves[m]
        return float(np.interp(x0, x, y))

    ia02, sc02 = at("Scaff-PD-IA", 0.2), at("Scaffold", 0.2)
    ia09, sc09 = at("Scaff-PD-IA", 0.9), at("Scaffold", 0.9)
    # both halves of §7's sentence: Scaffold's curve above IA's near x = 1, far below near 0
    near0, near1 = ia02 > sc02, sc09 > ia09
    return near0 and near1, (f"near x = 0, l'(0.2): IA {ia02:.4f} vs Scaffold {sc02:.4f} "
                             f"(Scaffold below: {'yes' if near0 else 'NO'}); near x = 1, "
                             f"l'(0.9): IA {ia09:.4f} vs Scaffold {sc09:.4f} (Scaffold above: "
                             f"{'yes' if near1 else 'NO'}); one seed (Fig. 4 is seed 0)")


register(Experiment(
    name="relfair.fig4",
    title="Fig. 4: transformed Lorenz curves of MNIST client losses, six methods",
    paper=PAPER, cells=fig4_cells, run_cell=training_cell, render=fig4_render,
    scales=("smoke", "paper"), cost={"smoke": "20 s", "paper": "7 min"}, data=MNIST_DATA,
    readings=READINGS,
    claims=(Claim("Scaffold's curve lies far below Scaff-PD-IA's near x = 0 and above it near "
                  "x = 1 (both halves of §7's sentence)", "§7, Fig. 4", _fig4_lorenz_claim,
                  deviation=CLAIMS_NOTE),
            Claim("Scaff-PD-IA has the smallest Gini (least area above its curve)", "§7, Fig. 4",
                  _lowest("gini"), deviation=CLAIMS_NOTE)),
))


# =========================================================================== Figure 1

FIG1_REFERENCE = {"minmax": ((0.0, 0.0), 7.081139), "spread": ((0.0, -0.25), 7.104862)}


def fig1_cells(scale: str) -> list[dict]:
    return [{"grid_step": 1e-2 if scale == "smoke" else 1e-3}]


def fig1_cell(config: dict, ctx: RunContext) -> CellResult:
    from repro.relfair.geometry import fig1_centers

    res = fig1_centers(config["grid_step"])
    metrics, curves = {}, {}
    for kind, r in res.items():
        metrics[f"{kind}_center_x"], metrics[f"{kind}_center_y"] = map(float, r["center"])
        metrics[f"{kind}_value"] = r["value"]
        metrics[f"{kind}_sum"] = r["sum"]
        curves[f"{kind}_distances"] = r["distances"].tolist()
    return CellResult(metrics=metrics, curves=curves)


def fig1_render(records: list[RunRecord], out: Path, scale: str) -> list[Path]:
    from repro.relfair.geometry import FIG1_POINTS

    rec = records[0]
    m = rec.metrics
    fig, axes = figure(1, 3, figsize=(12, 3.6))
    ax = axes[0]
    ax.scatter(FIG1_POINTS[:, 0], FIG1_POINTS[:, 1], color="gray", label="points D")
    ax.scatter([m["minmax_center_x"]], [m["minmax_center_y"]], marker="s", color="hotpink",
               label="min-max center")
    ax.scatter([m["spread_center_x"]], [m["spread_center_y"]], marker="s", color="tab:blue",
               label="relative-fair center")
    ax.set_aspect("equal")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_title("points and centers")
    ax.legend(fontsize=7)
    for ax, kind, color in ((axes[1], "minmax", "hotpink"), (axes[2], "spread", "tab:blue")):
        d = rec.curves[f"{kind}_distances"]
        ax.bar(np.arange(1, 9), d, color=color)
        ax.set_xlabel("point")
        ax.set_ylabel("distance to center")
        ax.set_title(f"{kind}: sum {m[f'{kind}_sum']:.4f}")
    return save_figure(fig, out, "relfair_fig1")


def _fig1_claim(records: list[RunRecord]) -> tuple[bool, str]:
    m = records[0].metrics
    ok, parts = True, []
    for kind, ((cx, cy), total) in FIG1_REFERENCE.items():
        dc = max(abs(m[f"{kind}_center_x"] - cx), abs(m[f"{kind}_center_y"] - cy))
        ds = abs(m[f"{kind}_sum"] - total)
        ok &= dc <= 1e-6 and ds <= 1e-4
        parts.append(f"{kind}: center err {dc:.1e}, sum {m[f'{kind}_sum']:.6f} (ref {total})")
    return ok, "; ".join(parts)


register(Experiment(
    name="relfair.fig1", title="Fig. 1: min-max vs relative-fair center of eight points",
    paper=PAPER, cells=fig1_cells, run_cell=fig1_cell, render=fig1_render,
    cost={"smoke": "1 s", "paper": "10 s"},
    claims=(Claim("centers (0,0) and (0,-1/4); distance sums 7.081 and 7.105 (to 1e-4)",
                  "App. A, Fig. 1", _fig1_claim),),
))


# =========================================================================== Figure 2

def fig2_cell(config: dict, ctx: RunContext) -> CellResult:
    from repro.relfair.ambiguity import RelativeAmbiguitySet

    metrics = {}
    for phi in config["phis"]:
        amb = RelativeAmbiguitySet(3, 0.5, 0.5, phi)
        metrics[f"w_max_phi{phi}"], metrics[f"w_min_phi{phi}"] = amb.w[0], amb.w[-1]
    return CellResult(metrics=metrics)


def fig2_render(records: list[RunRecord], out: Path, scale: str) -> list[Path]:
    from repro.relfair.geometry import hexagon_vertices, simplex_plane_coords

    fig, ax = figure(figsize=(4.5, 4.5))
    tri = simplex_plane_coords(np.eye(3))
    ax.fill(tri[:, 0], tri[:, 1], color="0.92", label="simplex")
    for phi, color, ls in zip(records[0].config["phis"], ("hotpink", "orange", "green"),
                              ("-", "--", "--"), strict=True):
        xy = simplex_plane_coords(hexagon_vertices(phi))
        xy = np.vstack([xy, xy[:1]])
        ax.plot(xy[:, 0], xy[:, 1], color=color, ls=ls, label=rf"$\phi = {phi}$")
    ax.set_aspect("equal")
    ax.set_xlabel(r"coordinate 1 in the plane $\lambda_1 + \lambda_2 + \lambda_3 = 1$")
    ax.set_ylabel("coordinate 2")
    ax.set_title(r"Fig. 2: $\Lambda_\phi(\Delta_{0.5}^2, \Delta_{0.5}^2)$")
    ax.legend(fontsize=7)
    return save_figure(fig, out, "relfair_fig2")


def _fig2_nested(records: list[RunRecord]) -> tuple[bool, str]:
    from repro.relfair.ambiguity import RelativeAmbiguitySet

    phis = records[0].config["phis"]
    ok = True
    for a, b in zip(phis, phis[1:], strict=False):
        small = RelativeAmbiguitySet(3, 0.5, 0.5, a)
        big = RelativeAmbiguitySet(3, 0.5, 0.5, b)
        ok &= all(big.contains(v) for v in hexagon_vertices_of(small))
    return ok, f"vertices of Lambda_phi lie in Lambda_phi' for consecutive phi in {phis}"


def hexagon_vertices_of(amb) -> np.ndarray:
    from repro.relfair.geometry import hexagon_vertices

    return hexagon_vertices(amb.phi, amb.n, amb.alpha)


register(Experiment(
    name="relfair.fig2", title="Fig. 2: the integrated ambiguity sets for n = 3 (hexagons)",
    paper=PAPER, cells=lambda scale: [{"phis": [0.0, 0.2, 0.5]}], run_cell=fig2_cell,
    render=fig2_render, cost={"smoke": "1 s", "paper": "1 s"},
    claims=(Claim("Lambda_phi grows with phi (nested hexagons)", "§3.2, Fig. 2, §6",
                  _fig2_nested),),
))


# =========================================================================== Figure 3

# spec §4.3 [verified]: phi -> (theta, R) of the grid solution.
FIG3_REFERENCE = {
    0.0: ((-34.90, 0.724, 0.339), 4.278400), 0.01: ((-34.82, 0.598, 0.351), 2.884110),
    0.02: ((-34.85, 0.234, 0.387), 1.013252), 0.03: ((-34.85, 0.234, 0.387), 1.013252),
    0.04: ((-34.85, 0.234, 0.387), 1.013252), 0.05: ((-34.70, 0.226, 0.387), 1.001831)}


# spec §4.3: continuous box-constrained optimum (multi-start SLSQP)
FIG3_CONTINUOUS = {0.0: 4.4586, 0.01: 2.5988, 0.02: 1.0, 0.03: 1.0, 0.04: 1.0, 0.05: 1.0}


def fig3_cells(scale: str) -> list[dict]:
    steps = (0.1, 0.01) if scale == "smoke" else (0.01, 0.001)
    return [{"theta1_step": steps[0], "theta23_step": steps[1],
             "slsqp_starts": 3 if scale == "smoke" else 40}]


def fig3_cell(config: dict, ctx: RunContext) -> CellResult:
    from repro.relfair.penguins import PHIS, continuous_optimum, grid_search, penguin_clients

    clients = penguin_clients()
    res = grid_search(clients, PHIS, config["theta1_step"], config["theta23_step"])
    cont = continuous_optimum(clients, PHIS, config["slsqp_starts"], ctx.rng("starts"))
    metrics = {f"R_continuous_phi{phi}": r["R"] for phi, r in cont.items()}
    for phi, r in res.items():
        metrics[f"R_phi{phi}"] = r["R"]
        for j in range(3):
            metrics[f"theta{j + 1}_phi{phi}"] = float(r["theta"][j])
            metrics[f"f{j + 1}_phi{phi}"] = float(r["losses"][j])
    return CellResult(metrics=metrics)


def fig3_render(records: list[RunRecord], out: Path, scale: str) -> list[Path]:
    from repro.relfair.penguins import PHIS

    m = records[0].metrics
    fig, ax = figure()
    ax.plot(PHIS, [m[f"R_phi{p}"] for p in PHIS], marker="o", label="grid solution")
    ax.plot(PHIS, [FIG3_REFERENCE[p][1] for p in PHIS], ls=":", color="gray",
            label="spec §4.3 reference (grid)")
    ax.plot(PHIS, [m[f"R_continuous_phi{p}"] for p in PHIS], marker="s", ls="--",
            label="continuous optimum (SLSQP)")
    ax.set_xlabel(r"$\phi$")
    ax.set_ylabel(r"$R(\theta^*_\phi) = \max_j f_j / \min_j f_j$")
    ax.set_title(f"Fig. 3: Penguins ({scale} grid)")
    ax.legend()
    table = Table(f"relfair.fig3: Penguins grid solutions ({scale})",
                  ["phi", "theta1", "theta2", "theta3", "f1", "f2", "f3", "R"])
    for p in PHIS:
        table.add(p, *(f"{m[f'theta{j}_phi{p}']:.3f}" for j in (1, 2, 3)),
                  *(f"{m[f'f{j}_phi{p}']:.4f}" for j in (1, 2, 3)), f"{m[f'R_phi{p}']:.6f}")
    return write_table(table, out, "relfair_fig3") + save_figure(fig, out, "relfair_fig3")


def _fig3_monotone(records: list[RunRecord]) -> tuple[bool, str]:
    from repro.relfair.penguins import PHIS

    R = [records[0].metrics[f"R_phi{p}"] for p in PHIS]
    ok = all(b <= a + 1e-12 for a, b in zip(R, R[1:], strict=False))
    return ok, "R: " + ", ".join(f"{r:.6f}" for r in R)


def _fig3_reference(records: list[RunRecord]) -> tuple[bool, str]:
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


register(Experiment(
    name="relfair.fig3", title="Fig. 3: Penguins, R(theta*_phi) decreasing in phi (grid search)",
    paper=PAPER, cells=fig3_cells, run_cell=fig3_cell, render=fig3_render,
    cost={"smoke": "1 s", "paper": "5 min"}, data=(("penguins", "penguins.csv"),),
    claims=(Claim("R(theta*_phi) is non-increasing in phi (Thm. 1)", "§4.3, Fig. 3",
                  _fig3_monotone),
            Claim("grid and continuous solutions equal spec §4.3's verified values (R to 1e-4)",
                  "spec relfair §4.3", _fig3_reference)),
))
