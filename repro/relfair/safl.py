"""Stochastic-AFL (SAFL), the baseline of paper 002 (docs/decisions.md#relfair-safl-steps): one
minibatch gradient step per round, projected dual ascent on Delta_alpha.
"""

from __future__ import annotations

from dataclasses import InitVar, dataclass, replace

from repro.core.algorithm import RoundMessages
from repro.core.validation import check_range
from repro.relfair.federated import FederatedMethod, lam_tensor
from repro.relfair.messages import GradientLossReport, ModelBroadcast
from repro.relfair.models import weighted_sum
from repro.relfair.problem import RelativeAmbiguitySet, dual_step
from repro.relfair.renamed import LR_ALIAS, take_lr

__all__ = ["SAFL", "SAFLConfig"]


@dataclass(frozen=True)
class SAFLConfig:
    """Stochastic-AFL: step size eta 0.1, dual step size sigma 1e-3, one gradient per round
    (App. J.2 excludes SAFL from the J local epochs: no local work). ``lr`` is the old name of
    ``eta`` (:mod:`repro.relfair.renamed`).
    """

    ambiguity: RelativeAmbiguitySet
    eta: float = 0.1
    sigma: float = 1e-3
    lr: InitVar[float | None] = None  # the old name of eta (deprecated)

    def __post_init__(self, lr: float | None = None) -> None:
        take_lr(self, lr)
        if not isinstance(self.ambiguity, RelativeAmbiguitySet):
            raise ValueError("ambiguity must be a RelativeAmbiguitySet")
        check_range("eta", self.eta, low=0, low_open=True)
        check_range("sigma", self.sigma, low=0, low_open=True)


SAFLConfig.lr = LR_ALIAS  # the old name of eta, read with a DeprecationWarning


class SAFL(FederatedMethod):
    """``theta^{r+1} = theta^r - eta sum_i lambda_i^r g_i``,
    ``lambda^{r+1} = Proj_{Delta_alpha}(lambda^r + sigma l)`` with ``g_i, l_i`` the gradient and
    loss of one minibatch at theta^r, reported by client i. The averaged iterate is kept as a
    secondary output.
    """

    config_type = SAFLConfig

    def step(self) -> RoundMessages:
        c, st, eng = self.config, self.state, self.engine
        down = ModelBroadcast(st.theta)
        draws = self._draws(1)
        losses, grads = eng.gradients_at(down.theta, draws, 0)
        up = GradientLossReport(grads, losses.double().numpy())
        lam_t = lam_tensor(st.lam)
        agg = weighted_sum(lam_t, up.gradients)
        new_theta = tuple(t - c.eta * g for t, g in zip(st.theta, agg, strict=True))
        lam_new = dual_step(st.lam, up.losses, c.sigma, c.ambiguity)
        k = st.round  # rounds averaged so far, including theta^{r+1}
        avg = new_theta if st.theta_avg is None else tuple(
            a + (t - a) / (k) for a, t in zip(st.theta_avg, new_theta, strict=True))
        self.state = replace(st, round=st.round + 1, theta=new_theta, lam=lam_new,
                             theta_avg=avg)
        return RoundMessages(st.round, downlink=(down,), uplink=(up,))
