"""Scaff-PD-IA, paper 002 Alg. 1 with Alg. 2 inlined (docs/decisions.md#relfair-pseudocode,
docs/decisions.md#relfair-step-sizes); Scaff-PD and Scaffold are this algorithm with another
ambiguity set (App. J.2, ``repro.relfair.methods``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from repro.core.algorithm import RoundMessages
from repro.core.validation import check_range
from repro.relfair.federated import FederatedMethod, LocalWork, lam_tensor, scheduled_reads
from repro.relfair.messages import ControlBroadcast, DeltaReport, LossControlReport, ModelBroadcast
from repro.relfair.models import weighted_sum
from repro.relfair.problem import RelativeAmbiguitySet, dual_step

__all__ = ["ScaffPDIA", "ScaffPDIAConfig"]


@dataclass(frozen=True)
class ScaffPDIAConfig(LocalWork):
    """Alg. 1 constants (App. J.2; docs/decisions.md#relfair-step-sizes): eta local lr, tau global
    lr, sigma dual lr, varsigma extrapolation (docs/decisions.md#relfair-extrapolation:
    1 = sigma_{r-1}/sigma_r), the ambiguity set; J
    local steps or epochs (:class:`LocalWork`).
    """

    ambiguity: RelativeAmbiguitySet
    eta: float = 1e-2
    tau: float = 2.5e-2
    sigma: float = 1e-3
    varsigma: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.ambiguity, RelativeAmbiguitySet):
            raise ValueError("ambiguity must be a RelativeAmbiguitySet, got "
                             f"{type(self.ambiguity).__name__}")
        super().__post_init__()
        check_range("eta", self.eta, low=0, low_open=True)
        check_range("tau", self.tau, low=0, low_open=True)
        check_range("sigma", self.sigma, low=0, low_open=True)
        check_range("varsigma", self.varsigma, low=0)


class ScaffPDIA(FederatedMethod):
    """Scaff-PD-IA (Alg. 1 with Alg. 2 inlined, psi = 0; docs/decisions.md#relfair-pseudocode).

    Per round r (each arrow a message of the round's ``RoundMessages``)::

        server -> clients: theta^r                                          (line 4)
        clients -> server: L_i = f_i(theta^r) (whole local train split, eval mode;
        docs/decisions.md#relfair-client-loss),
                           c_i = grad f_i(theta^r; xi_i0)                   (lines 5-7)
        s = (1 + varsigma) L^r - varsigma L^{r-1}              (line 8; L^0 = F(theta^0))
        lambda^{r+1} = Proj_Lambda(lambda^r + sigma s)   (line 9;
        docs/decisions.md#relfair-dual-step) server -> clients: c = sum_i lambda_i^{r+1} c_i
        (line 10, (9)) u_{i,j} = u_{i,j-1} - eta (grad f_i(u_{i,j-1}; xi_ij) - c_i + c),  j = 1..J
        (Alg. 2) clients -> server: Delta u_i = (theta^r - u_{i,J}) / (eta J)
        theta^{r+1} = theta^r - tau sum_i lambda_i^{r+1} Delta u_i         (line 15, Theta = R^d)

    ``local_work = "epochs"`` (App. J.2's reading, the primary): one Alg. 2 step is one local
    epoch, so client i takes ``J ceil(N_i/B)`` minibatch steps and
    ``Delta u_i = (theta^r - u_i) / (eta J)`` with J the number of epochs.

    Scaff-PD is this class with ``phi = 0`` (Lambda = Delta_alpha,
    docs/decisions.md#relfair-scaff-pd-regulariser); Scaffold with the
    singleton ``{1/n}`` (``alpha = 1``, App. J.2), where the losses are not needed.
    ``config`` may be replaced between rounds by a driver that schedules the step sizes (the
    Thm 3 check, ``theory/relfair/convergence.py``); a round reads it once, at its start.
    """

    config_type = ScaffPDIAConfig

    def step(self) -> RoundMessages:
        c, st, eng = self.config, self.state, self.engine
        down = ModelBroadcast(st.theta)
        S, per_client = c.plan(self.problem)
        draws = self._draws(S + 1, scheduled_reads(per_client, S + 1, first=1))
        theta = down.theta  # the clients' copy of theta^r
        singleton = c.ambiguity.is_singleton
        losses = None if singleton else eng.evaluate(theta, "train")[0]
        _, controls = eng.gradients_at(theta, draws, 0)
        report = LossControlReport(losses, controls)
        # server: the dual step and the global control variate from the reports
        if singleton:
            lam_new = np.asarray(c.ambiguity.w, dtype=np.float64).copy()
        else:
            prev = report.losses if st.prev_losses is None else st.prev_losses
            s = (1.0 + c.varsigma) * report.losses - c.varsigma * prev
            lam_new = dual_step(st.lam, s, c.sigma, c.ambiguity)
        lam_t = lam_tensor(lam_new)
        control = ControlBroadcast(weighted_sum(lam_t, report.controls))
        # clients: Alg. 2 with the broadcast c and their own c_i
        correction = tuple(g.unsqueeze(0) - ci
                           for g, ci in zip(control.control, controls, strict=True))
        u, _ = eng.local_sgd(theta, c.eta, draws, range(1, S + 1), correction,
                             client_steps=per_client)
        # (theta^r - u_i) / (eta J): the same two roundings, the division in place (one
        # model-sized array per tensor, not two)
        scale = c.eta * c.local_steps
        deltas = DeltaReport(tuple(torch.sub(t.unsqueeze(0), ui).div_(scale)
                                   for t, ui in zip(theta, u, strict=True)))
        agg = weighted_sum(lam_t, deltas.deltas)
        new_theta = tuple(t - c.tau * a for t, a in zip(st.theta, agg, strict=True))
        self.state = replace(st, round=st.round + 1, theta=new_theta, lam=lam_new,
                             prev_losses=report.losses)
        return RoundMessages(st.round, downlink=(down, control), uplink=(report, deltas))
