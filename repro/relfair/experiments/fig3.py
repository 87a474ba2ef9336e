"""``relfair.fig3``: Fig. 3 of paper 002 (§4.3), Penguins: R(theta*_phi) over phi by exhaustive
grid search, and the continuous box-constrained optimum by multi-start SLSQP
(docs/decisions.md#relfair-penguins-values).
"""

from __future__ import annotations

from repro.engine.experiment import Claim, Experiment
from repro.engine.registry import register
from repro.relfair.experiments import claims
from repro.relfair.experiments._cells import PAPER
from repro.relfair.experiments._figcells import fig3_cell, fig3_cells
from repro.relfair.experiments.render import fig3_render

__all__ = ["fig3_cell", "fig3_cells"]


register(Experiment(
    name="relfair.fig3", title="Fig. 3: Penguins, R(theta*_phi) decreasing in phi (grid search)",
    paper=PAPER, cells=fig3_cells, run_cell=fig3_cell, render=fig3_render,
    cost={"smoke": "1 s", "paper": "5 min"}, data=(("penguins", "penguins.csv"),),
    claims=(Claim("R(theta*_phi) is non-increasing in phi (Thm. 1)", "§4.3, Fig. 3",
                  claims.fig3_monotone),
            Claim("grid and continuous solutions equal the verified reference values "
                  "(docs/decisions.md#relfair-penguins-values; R to 1e-4)",
                  "docs/decisions.md#relfair-penguins-values", claims.fig3_reference)),
))
