"""DRFA with full participation, the baseline of paper 002
(docs/decisions.md#relfair-drfa-setting).
"""

from __future__ import annotations

from dataclasses import InitVar, dataclass, replace

import torch

from repro.core.algorithm import RoundMessages
from repro.core.validation import check_range
from repro.relfair.federated import FederatedMethod, LocalWork, lam_tensor, scheduled_reads
from repro.relfair.messages import LossReport, ModelBroadcast, ModelReport
from repro.relfair.models import weighted_sum
from repro.relfair.problem import RelativeAmbiguitySet, dual_step
from repro.relfair.renamed import LR_ALIAS, take_lr

__all__ = ["DRFA", "DRFAConfig"]


@dataclass(frozen=True)
class DRFAConfig(LocalWork):
    """DRFA, full participation: local step size eta 0.1, gamma 1e-3, tau = the round's J
    local steps (:class:`LocalWork`). ``lr`` is the old name of ``eta``
    (:mod:`repro.relfair.renamed`).
    """

    ambiguity: RelativeAmbiguitySet
    eta: float = 0.1
    gamma: float = 1e-3
    lr: InitVar[float | None] = None  # the old name of eta (deprecated)

    def __post_init__(self, lr: float | None = None) -> None:
        take_lr(self, lr)
        if not isinstance(self.ambiguity, RelativeAmbiguitySet):
            raise ValueError("ambiguity must be a RelativeAmbiguitySet")
        super().__post_init__()
        check_range("eta", self.eta, low=0, low_open=True)
        check_range("gamma", self.gamma, low=0, low_open=True)


DRFAConfig.lr = LR_ALIAS  # the old name of eta, read with a DeprecationWarning


class DRFA(FederatedMethod):
    """Per round: the server draws t' ~ U{0..tau-1} and broadcasts theta^r with it; client i
    takes J local SGD steps, snapshot after t' steps, and reports both models;
    ``theta^{r+1} = sum lambda_i^r u_i``, ``theta_snap = sum lambda_i^r s_i`` (broadcast);
    client i reports ``v_i = f_i(theta_snap; xi'_i)`` (fresh minibatch, eval mode);
    ``lambda^{r+1} = Proj_{Delta_alpha}(lambda^r + tau gamma v)``.

    ``local_work = "epochs"``: client i takes ``J ceil(N_i/B)`` steps; tau is then the
    round's largest count S (t' ~ U{0..S-1}; a client done before t' is snapshot at its end).
    """

    config_type = DRFAConfig

    def step(self) -> RoundMessages:
        c, st, eng = self.config, self.state, self.engine
        J, per_client = c.plan(self.problem)
        t_snap = int(torch.randint(0, J, (1,), generator=self.rng))
        down = ModelBroadcast(st.theta, snapshot_at=t_snap)
        draws = self._draws(J + 1, scheduled_reads(per_client, J + 1, last=1))
        u, snap = eng.local_sgd(down.theta, c.eta, draws, range(J), snapshot_at=down.snapshot_at,
                                client_steps=per_client)
        models = ModelReport(u, snap)
        lam_t = lam_tensor(st.lam)
        new_theta = weighted_sum(lam_t, models.models)
        snapshot = ModelBroadcast(weighted_sum(lam_t, models.snapshots))
        losses = LossReport(eng.minibatch_losses(snapshot.theta, draws.idx[J]).double().numpy())
        lam_new = dual_step(st.lam, losses.losses, J * c.gamma, c.ambiguity)
        self.state = replace(st, round=st.round + 1, theta=new_theta, lam=lam_new)
        return RoundMessages(st.round, downlink=(down, snapshot), uplink=(models, losses))
