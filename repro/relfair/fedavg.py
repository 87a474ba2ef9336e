"""FedAvg, the baseline of paper 002 (specs/relfair.md §3.1): J local SGD steps, uniform average."""

from __future__ import annotations

from dataclasses import dataclass, replace

from repro.core.validation import check_choice, check_range
from repro.relfair.federated import LOCAL_WORK, FederatedMethod
from repro.relfair.messages import ModelBroadcast, ModelReport

__all__ = ["FedAvg", "FedAvgHyper"]


@dataclass(frozen=True)
class FedAvgHyper:
    """FedAvg (specs/relfair.md §3.1): local lr 0.1, J local SGD steps, uniform weights (A10)."""

    lr: float = 0.1
    local_steps: int = 5
    local_work: str = "steps"

    def __post_init__(self) -> None:
        check_range("lr", self.lr, low=0, low_open=True)
        check_range("local_steps", self.local_steps, low=1)
        check_choice("local_work", self.local_work, LOCAL_WORK)


class FedAvg(FederatedMethod):
    """``u_i`` = J local SGD steps from theta^r; ``theta^{r+1} = (1/n) sum_i u_i``."""

    hyper_type = FedAvgHyper

    def step(self) -> list:
        h, st, eng = self.hyper, self.state, self.engine
        S, per_client = self._local_plan(h.local_steps, h.local_work)
        draws = self._draws(S)
        u, _ = eng.local_sgd(st.theta, h.lr, draws, range(S), client_steps=per_client)
        new_theta = tuple(p.mean(dim=0) for p in u)
        self.state = replace(st, round=st.round + 1, theta=new_theta)
        return [ModelBroadcast(st.theta), ModelReport(u)]
