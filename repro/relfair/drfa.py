"""DRFA with full participation, the baseline of paper 002 (specs/relfair.md §3.4, A9)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from repro.core.validation import check_choice, check_range
from repro.relfair.federated import LOCAL_WORK, FederatedMethod, lam_tensor
from repro.relfair.messages import LossReport, ModelBroadcast, ModelReport
from repro.relfair.models import weighted_sum
from repro.relfair.problem import RelativeAmbiguitySet, dual_step

__all__ = ["DRFA", "DRFAHyper"]


@dataclass(frozen=True)
class DRFAHyper:
    """DRFA, full participation (specs/relfair.md §3.4, A9): lr 0.1, tau = J = 5 local steps,
    gamma 1e-3.
    """

    ambiguity: RelativeAmbiguitySet
    lr: float = 0.1
    local_steps: int = 5
    gamma: float = 1e-3
    local_work: str = "steps"

    def __post_init__(self) -> None:
        if not isinstance(self.ambiguity, RelativeAmbiguitySet):
            raise ValueError("ambiguity must be a RelativeAmbiguitySet")
        check_range("lr", self.lr, low=0, low_open=True)
        check_range("local_steps", self.local_steps, low=1)
        check_range("gamma", self.gamma, low=0, low_open=True)
        check_choice("local_work", self.local_work, LOCAL_WORK)


class DRFA(FederatedMethod):
    """Per round: t' ~ U{0..tau-1}; J local SGD steps, snapshot after t' steps;
    ``theta^{r+1} = sum lambda_i^r u_i``, ``theta_snap = sum lambda_i^r s_i``;
    ``v_i = f_i(theta_snap; xi'_i)`` (fresh minibatch, eval mode);
    ``lambda^{r+1} = Proj_{Delta_alpha}(lambda^r + tau gamma v)``.

    ``local_work = "epochs"``: client i takes ``J ceil(N_i/B)`` steps; tau is then the
    round's largest count S (t' ~ U{0..S-1}; a client done before t' is snapshot at its end).
    """

    hyper_type = DRFAHyper

    def step(self) -> list:
        h, st, eng = self.hyper, self.state, self.engine
        J, per_client = self._local_plan(h.local_steps, h.local_work)
        t_snap = int(torch.randint(0, J, (1,), generator=self.generator))
        draws = self._draws(J + 1)
        u, snap = eng.local_sgd(st.theta, h.lr, draws, range(J), snapshot_at=t_snap,
                                client_steps=per_client)
        lam_t = lam_tensor(st.lam)
        new_theta = weighted_sum(lam_t, u)
        theta_snap = weighted_sum(lam_t, snap)
        v = eng.minibatch_losses(theta_snap, draws.idx[J]).double().numpy()
        lam_new = dual_step(st.lam, v, J * h.gamma, h.ambiguity)
        self.state = replace(st, round=st.round + 1, theta=new_theta, lam=lam_new)
        return [ModelBroadcast(st.theta), ModelReport(u, snap), ModelBroadcast(theta_snap),
                LossReport(v)]
