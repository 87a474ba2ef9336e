"""The cells of relfair's Figs. 1-3 (geometry of the centers, the ambiguity sets, Penguins).

Apart from the figures' experiment modules so that a cell's code identity (its static import
closure, :mod:`repro.engine.run.code_identity`) holds the computation and not the renderers.
"""

from __future__ import annotations

from repro.engine.experiment import CellResult, RunContext

__all__ = ["fig1_cell", "fig1_cells", "fig2_cell", "fig3_cell", "fig3_cells"]


def fig1_cells(scale: str) -> list[dict]:
    """One cell: the grid step of the search before Nelder-Mead."""
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


def fig2_cell(config: dict, ctx: RunContext) -> CellResult:
    """The largest and smallest entry of the generating vector w for each phi."""
    from repro.relfair.problem import RelativeAmbiguitySet

    metrics = {}
    for phi in config["phis"]:
        amb = RelativeAmbiguitySet(3, 0.5, 0.5, phi)
        metrics[f"w_max_phi{phi}"], metrics[f"w_min_phi{phi}"] = amb.w[0], amb.w[-1]
    return CellResult(metrics=metrics)


def fig3_cells(scale: str) -> list[dict]:
    """One cell: the grid steps of theta_1 and theta_2, theta_3, and the SLSQP starts."""
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
