"""Tables and figures of paper 002's items, rendered from the records (output only)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from repro.engine.records.query import by
from repro.engine.records.records import RunRecord
from repro.engine.report.plotting import (
    figure,
    plot_mean_band,
    plot_paper_points,
    save_figure,
    scale_text,
)
from repro.engine.report.report import Table, paper_values, write_table
from repro.relfair.data import TASKS
from repro.relfair.experiments._cells import METRICS, TABLE1_METHODS
from repro.relfair.experiments.claims import FIG3_REFERENCE
from repro.relfair.metrics import transformed_lorenz

__all__ = ["ablation_render", "fedavg_search_render", "fig1_render", "fig2_render",
           "fig3_render", "fig4_render", "safl_length_render", "table1_render"]


def _reading_of(records: list[RunRecord]) -> str:
    """The local-work reading the records were run under (`repro figures` renders the
    primary's).
    """
    works = {r.config.get("local_work", "steps") for r in records
             if r.ok and r.config.get("method") != "SAFL"}
    return "/".join(sorted(works)) or "?"


def table1_render(records: list[RunRecord], out: Path, scale: str) -> list[Path]:
    groups = by(records, "task", "method")
    table = Table(f"relfair.table1: Table 1 of paper 002 (scale={scale}, reading "
                  f"{_reading_of(records)})",
                  ["task", "method", *METRICS, "seeds"],
                  caption="Client validation metrics of the last iterate; mean ± sample std "
                          "over seeds. R_AB = top-20%/bottom-20% mean client loss; Gini of "
                          "client losses (standard form, docs/decisions.md#relfair-metrics).")
    printed = paper_values("relfair_table1")
    for task in TASKS:
        for m in TABLE1_METHODS:
            recs = groups.get((task, m), [])  # none: "not run (paper)"
            table.add(task, m, *(printed.measured([r.metrics[k] for r in recs], k,
                                                  3 if k == "R_AB" else 4, task=task, method=m)
                                 for k in METRICS), len(recs))
    paths = write_table(table, out, "relfair_table1")
    fig, ax = figure()
    n_seeds = 0
    for i, m in enumerate(TABLE1_METHODS):
        recs = groups.get(("MNIST", m), [])
        if recs and "val_acc" in recs[0].curves:
            runs = np.array([r.curves["val_acc"] for r in recs])
            every = recs[0].config["eval_every"]
            x = every * np.arange(1, runs.shape[1] + 1)
            plot_mean_band(ax, x, runs, color=f"C{i}", label=m)
            n_seeds = max(n_seeds, len(recs))
            hit = printed.get("acc_all", task="MNIST", method=m)
            if hit is not None:  # Table 1's value of the last iterate, at the last round
                plot_paper_points(ax, [x[-1]], [float(hit[0])], color=f"C{i}",
                                  label=f"{m}, Table 1 (paper)")
    ax.set_xlabel("round")
    ax.set_ylabel("mean client validation accuracy")
    ax.set_title(f"MNIST learning curves ({scale_text(scale)}): mean over {n_seeds} seed"
                 + ("s, band ±1 std" if n_seeds > 1 else "")
                 + "; stars: the paper's Table 1 (all clients' accuracy)", fontsize=8)
    return paths + save_figure(fig, out, "relfair_table1_curves")


def ablation_render(records: list[RunRecord], out: Path, scale: str) -> list[Path]:
    table = Table(f"relfair.ablation_server_step: global step tau of Alg. 1 line 15 "
                  f"(MNIST, seed 0, scale={scale})", ["method", "tau", *METRICS],
                  caption="Not in the paper: tau = 0.025 is App. J.2's value; tau = 0.1 tests "
                          "whether under-training explains the deviation (docs/deviations.md).")
    for (m, tau), recs in sorted(by(records, "method", "tau").items()):
        table.add(m, tau, *(f"{recs[0].metrics[k]:.4f}" for k in METRICS))
    return write_table(table, out, "relfair_ablation_server_step")


def fedavg_search_render(records: list[RunRecord], out: Path, scale: str) -> list[Path]:
    """One row per searched setting: FedAvg's metrics of its last round beside Table 1's."""
    table = Table(f"relfair.fedavg_search: FedAvg under each searched data or length setting "
                  f"(MNIST, seed 0, scale={scale})", ["setting", "rounds", *METRICS],
                  caption="Not in the paper: the settings the search declares before any run "
                          "(docs/deviations.md#relfair-fedavg-search); Table 1 prints FedAvg "
                          "on MNIST in its own row.")
    for (setting,), recs in sorted(by(records, "setting").items()):
        r = recs[0]
        table.add(setting, r.config["rounds"],
                  *((f"{r.metrics[k]:.4f}" if r.ok else "not run") for k in METRICS))
    return write_table(table, out, "relfair_fedavg_search")


def safl_length_render(records: list[RunRecord], out: Path, scale: str) -> list[Path]:
    """One row per searched run length and seed: SAFL's metrics of its last round."""
    table = Table(f"relfair.safl_length: SAFL under each searched run length (MNIST, "
                  f"scale={scale})", ["setting", "rounds", "seed", *METRICS],
                  caption="Not in the paper: the run lengths the search declares before any "
                          "run (repro/relfair/experiments/safl_length.py); Table 1 prints SAFL "
                          "on MNIST in its own row.")
    for r in sorted(records, key=lambda r: (r.config["rounds"], r.config["seed"])):
        table.add(r.config["setting"], r.config["rounds"], r.config["seed"],
                  *((f"{r.metrics[k]:.4f}" if r.ok else "not run") for k in METRICS))
    return write_table(table, out, "relfair_safl_length")


def fig4_render(records: list[RunRecord], out: Path, scale: str) -> list[Path]:
    groups = by(records, "method")
    fig, ax = figure()
    for i, m in enumerate(TABLE1_METHODS):
        if (m,) in groups:
            x, y = transformed_lorenz(groups[(m,)][0].curves["client_val_loss"])
            # the paper prints no values of the curves; its Table 1 prints their Gini
            hit = paper_values("relfair_table1").get("gini", task="MNIST", method=m)
            paper = f"; paper {hit[0]}" if hit else ""
            ours = groups[(m,)][0].metrics["gini"]
            ax.plot(x, y, color=f"C{i}", label=f"{m} (Gini {ours:.3f}{paper})")
    ax.plot([0, 1], [0, 0.5], color="gray", ls=":", label="equality")
    ax.set_xlabel("cumulative share of clients")
    ax.set_ylabel(r"transformed Lorenz curve $l(x) - x/2$")
    ax.set_title(f"Fig. 4: MNIST client losses ({scale_text(scale)}, seed 0); Gini: ours; "
                 "paper = its Table 1", fontsize=9)
    ax.legend(fontsize=7)
    return save_figure(fig, out, "relfair_fig4")


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


def fig3_render(records: list[RunRecord], out: Path, scale: str) -> list[Path]:
    from repro.relfair.penguins import PHIS

    m = records[0].metrics
    fig, ax = figure()
    ax.plot(PHIS, [m[f"R_phi{p}"] for p in PHIS], marker="o", label="grid solution")
    ax.plot(PHIS, [FIG3_REFERENCE[p][1] for p in PHIS], ls=":", color="gray",
            label="docs/decisions.md#relfair-penguins-values reference (grid)")
    ax.plot(PHIS, [m[f"R_continuous_phi{p}"] for p in PHIS], marker="s", ls="--",
            label="continuous optimum (SLSQP)")
    ax.set_xlabel(r"$\phi$")
    ax.set_ylabel(r"$R(\theta^*_\phi) = \max_j f_j / \min_j f_j$")
    ax.set_title(f"Fig. 3: Penguins ({scale_text(scale)} grid)")
    ax.legend()
    table = Table(f"relfair.fig3: Penguins grid solutions ({scale_text(scale)})",
                  ["phi", "theta1", "theta2", "theta3", "f1", "f2", "f3", "R"])
    for p in PHIS:
        table.add(p, *(f"{m[f'theta{j}_phi{p}']:.3f}" for j in (1, 2, 3)),
                  *(f"{m[f'f{j}_phi{p}']:.4f}" for j in (1, 2, 3)), f"{m[f'R_phi{p}']:.6f}")
    return write_table(table, out, "relfair_fig3") + save_figure(fig, out, "relfair_fig3")
