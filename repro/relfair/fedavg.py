"""FedAvg, the baseline of paper 002 (docs/decisions.md#relfair-fedavg): J local SGD steps, uniform
average.
"""

from __future__ import annotations

from dataclasses import InitVar, dataclass, replace

from repro.core.algorithm import RoundMessages
from repro.core.validation import check_range
from repro.relfair.federated import FederatedMethod, LocalWork, scheduled_reads
from repro.relfair.messages import ModelBroadcast, ModelReport
from repro.relfair.renamed import LR_ALIAS, take_lr

__all__ = ["FedAvg", "FedAvgConfig"]


@dataclass(frozen=True)
class FedAvgConfig(LocalWork):
    """FedAvg: local step size eta 0.1, uniform weights; the local work (J, epochs or steps)
    of :class:`LocalWork`. ``lr`` is the old name of ``eta`` (:mod:`repro.relfair.renamed`).
    """

    eta: float = 0.1
    lr: InitVar[float | None] = None  # the old name of eta (deprecated)

    def __post_init__(self, lr: float | None = None) -> None:
        take_lr(self, lr)
        super().__post_init__()
        check_range("eta", self.eta, low=0, low_open=True)


FedAvgConfig.lr = LR_ALIAS  # the old name of eta, read with a DeprecationWarning


class FedAvg(FederatedMethod):
    """Server -> clients: theta^r; client i: ``u_i`` = J local SGD steps from theta^r, reported;
    server: ``theta^{r+1} = (1/n) sum_i u_i``.
    """

    config_type = FedAvgConfig

    def step(self) -> RoundMessages:
        c, st, eng = self.config, self.state, self.engine
        S, per_client = c.plan(self.problem)
        down = ModelBroadcast(st.theta)
        draws = self._draws(S, scheduled_reads(per_client, S))
        u, _ = eng.local_sgd(down.theta, c.eta, draws, range(S), client_steps=per_client)
        up = ModelReport(u)
        new_theta = tuple(p.mean(dim=0) for p in up.models)
        self.state = replace(st, round=st.round + 1, theta=new_theta)
        return RoundMessages(st.round, downlink=(down,), uplink=(up,))
