"""``relfair.fig2``: Fig. 2 of paper 002 (§3.2), the integrated ambiguity sets
Lambda_phi(Delta_0.5^2, Delta_0.5^2) for n = 3 (hexagons) and their generating vectors.
"""

from __future__ import annotations

from repro.engine.experiment import Claim, Experiment
from repro.engine.registry import register
from repro.relfair.experiments import claims
from repro.relfair.experiments._cells import PAPER
from repro.relfair.experiments._figcells import fig2_cell
from repro.relfair.experiments.render import fig2_render

__all__ = ["fig2_cell"]


register(Experiment(
    name="relfair.fig2", title="Fig. 2: the integrated ambiguity sets for n = 3 (hexagons)",
    paper=PAPER, cells=lambda scale: [{"phis": [0.0, 0.2, 0.5]}], run_cell=fig2_cell,
    render=fig2_render, cost={"smoke": "1 s", "paper": "1 s"},
    claims=(Claim("Lambda_phi grows with phi (nested hexagons)", "§3.2, Fig. 2, §6",
                  claims.fig2_nested),),
))
