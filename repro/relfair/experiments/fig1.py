"""``relfair.fig1``: Fig. 1 of paper 002 (App. A), the min-max and the relative-fair center of
eight points (:func:`repro.relfair.geometry.fig1_centers`; verified numbers in
docs/decisions.md#relfair-figures).
"""

from __future__ import annotations

from repro.engine.experiment import Claim, Experiment
from repro.engine.registry import register
from repro.relfair.experiments import claims
from repro.relfair.experiments._cells import PAPER
from repro.relfair.experiments._figcells import fig1_cell, fig1_cells
from repro.relfair.experiments.render import fig1_render

__all__ = ["fig1_cell", "fig1_cells"]


register(Experiment(
    name="relfair.fig1", title="Fig. 1: min-max vs relative-fair center of eight points",
    paper=PAPER, cells=fig1_cells, run_cell=fig1_cell, render=fig1_render,
    cost={"smoke": "1 s", "paper": "10 s"},
    claims=(Claim("centers (0,0) and (0,-1/4); distance sums 7.081 and 7.105 (to 1e-4)",
                  "App. A, Fig. 1", claims.fig1_centers_match),),
))
