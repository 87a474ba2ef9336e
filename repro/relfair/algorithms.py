"""Scaff-PD-IA (paper 002 Alg. 1 + Alg. 2) and the baselines FedAvg, Scaffold, SAFL, DRFA,
Scaff-PD (spec relfair §2-3). Every method is one class: hyperparameters in a frozen dataclass
validated on construction, all mutable state in one :class:`FLState`, ``step()`` = one
communication round returning the messages exchanged (``repro.relfair.messages``).

All clients participate in every round (A11); Theta = R^d (Proj_Theta is the identity);
lambda^0 = 1/n; the last iterate is evaluated (A16). Randomness: each round draws its
minibatches and dropout masks (``draw_round``) and DRFA's snapshot index from the run's
``torch.Generator``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from repro.core.validation import check_choice, check_range
from repro.relfair.ambiguity import RelativeAmbiguitySet, dual_step
from repro.relfair.engine import ClientEngine
from repro.relfair.messages import (
    ControlBroadcast,
    DeltaReport,
    GradientLossReport,
    LossControlReport,
    LossReport,
    ModelBroadcast,
    ModelReport,
)
from repro.relfair.models import Params, as_params, weighted_sum
from repro.relfair.problem import draw_round

__all__ = [
    "DRFA",
    "METHODS",
    "SAFL",
    "DRFAHyper",
    "FLState",
    "FedAvg",
    "FedAvgHyper",
    "SAFLHyper",
    "ScaffPDIA",
    "ScaffPDIAHyper",
    "TrainSetup",
    "make_algorithm",
]


@dataclass(frozen=True)
class TrainSetup:
    """Shared by all methods: minibatch size B (A2), hidden width and dropout (A3)."""

    batch: int = 32
    hidden: int = 50
    dropout: float = 0.5

    def __post_init__(self) -> None:
        check_range("batch", self.batch, low=1)
        check_range("hidden", self.hidden, low=1)
        check_range("dropout", self.dropout, low=0, high=1, high_open=True)


@dataclass
class FLState:
    """Everything that changes across rounds: r, theta^r, lambda^r, L^{r-1}; SAFL's average."""

    round: int
    theta: Params
    lam: np.ndarray
    prev_losses: np.ndarray | None = None
    theta_avg: Params | None = None


def _lam_tensor(lam: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.asarray(lam, dtype=np.float64)).to(torch.float32)


LOCAL_WORK = ("steps", "epochs")


def epoch_schedule(train_sizes, epochs: int, batch: int) -> np.ndarray:
    """Per-client minibatch steps of ``epochs`` local epochs: ``epochs * ceil(N_i / B)``
    (App. J.2, "the numbers of local epochs J of all the algorithms except for SAFL to be 5";
    the primary reading of relfair, issue #15)."""
    sizes = np.asarray(train_sizes, dtype=np.int64)
    if sizes.ndim != 1 or sizes.min(initial=1) < 1:
        raise ValueError(f"train_sizes must be positive client sizes, got {sizes!r}")
    check_range("epochs", epochs, low=1)
    check_range("batch", batch, low=1)
    return epochs * -(-sizes // int(batch))


class _Base:
    hyper_type: type = object

    def _local_plan(self, local_steps: int, local_work: str) -> tuple[int, np.ndarray | None]:
        """``(S, client_steps)``: the round's number of step draws and each client's own
        count (None: all take ``S``). ``steps``: J SGD steps; ``epochs``: J local epochs,
        client i taking ``J * ceil(N_i / B)`` steps (:func:`epoch_schedule`)."""
        if local_work == "steps":
            return local_steps, None
        per = epoch_schedule(self.engine.data.train_sizes, local_steps, self.setup.batch)
        return int(per.max()), per

    def __init__(self, engine: ClientEngine, hyper, theta0: Params,
                 generator: torch.Generator, setup: TrainSetup = TrainSetup()) -> None:
        if not isinstance(hyper, self.hyper_type):
            raise TypeError(f"{type(self).__name__} needs {self.hyper_type.__name__}, "
                            f"got {type(hyper).__name__}")
        self.engine, self.hyper, self.setup, self.generator = engine, hyper, setup, generator
        n = engine.data.n
        theta0 = as_params("theta0", theta0, engine.data.d_in, engine.data.classes,
                           setup.hidden)
        self.state = FLState(round=1, theta=tuple(p.clone() for p in theta0),
                             lam=np.full(n, 1.0 / n))

    def _draws(self, steps: int):
        return draw_round(self.engine.data, steps, self.setup.batch, self.setup.hidden,
                          self.setup.dropout, self.generator)

    def step(self) -> list:
        raise NotImplementedError

    def run(self, rounds: int, callback=None) -> FLState:
        """``rounds`` calls of :meth:`step`; ``callback(state)`` after each."""
        for _ in range(rounds):
            self.step()
            if callback is not None:
                callback(self.state)
        return self.state


# --------------------------------------------------------------------------- Scaff-PD-IA family

@dataclass(frozen=True)
class ScaffPDIAHyper:
    """Alg. 1 constants (App. J.2; spec §2.4): eta local lr, tau global lr, sigma dual lr,
    varsigma extrapolation (A5: 1 = sigma_{r-1}/sigma_r), J local steps, the ambiguity set."""

    ambiguity: RelativeAmbiguitySet
    eta: float = 1e-2
    tau: float = 2.5e-2
    sigma: float = 1e-3
    varsigma: float = 1.0
    local_steps: int = 5
    local_work: str = "steps"

    def __post_init__(self) -> None:
        if not isinstance(self.ambiguity, RelativeAmbiguitySet):
            raise ValueError("ambiguity must be a RelativeAmbiguitySet, got "
                             f"{type(self.ambiguity).__name__}")
        check_choice("local_work", self.local_work, LOCAL_WORK)
        check_range("eta", self.eta, low=0, low_open=True)
        check_range("tau", self.tau, low=0, low_open=True)
        check_range("sigma", self.sigma, low=0, low_open=True)
        check_range("varsigma", self.varsigma, low=0)
        check_range("local_steps", self.local_steps, low=1)


class ScaffPDIA(_Base):
    """Scaff-PD-IA (Alg. 1 with Alg. 2 inlined, psi = 0; spec §2.2).

    Per round r::

        L_i = f_i(theta^r) (whole local train split, eval mode; A6); c_i = grad f_i(theta^r; xi_i0)
        s = (1 + varsigma) L^r - varsigma L^{r-1}              (line 8; L^0 = F(theta^0))
        lambda^{r+1} = Proj_Lambda(lambda^r + sigma s)                     (line 9, spec §2.3)
        c = sum_i lambda_i^{r+1} c_i                                       (line 10, (9))
        u_{i,j} = u_{i,j-1} - eta (grad f_i(u_{i,j-1}; xi_ij) - c_i + c),  j = 1..J   (Alg. 2)
        Delta u_i = (theta^r - u_{i,J}) / (eta J)
        theta^{r+1} = theta^r - tau sum_i lambda_i^{r+1} Delta u_i         (line 15, Theta = R^d)

    ``local_work = "epochs"`` (App. J.2's reading, issue #15): one Alg. 2 step is one local
    epoch, so client i takes ``J ceil(N_i/B)`` minibatch steps and
    ``Delta u_i = (theta^r - u_i) / (eta J)`` with J the number of epochs.

    Scaff-PD is this class with ``phi = 0`` (Lambda = Delta_alpha, A7); Scaffold with the
    singleton ``{1/n}`` (``alpha = 1``, App. J.2), where the losses are not needed.
    """

    hyper_type = ScaffPDIAHyper

    def __init__(self, engine, hyper, theta0, generator, setup=TrainSetup()) -> None:
        super().__init__(engine, hyper, theta0, generator, setup)
        if hyper.ambiguity.n != engine.data.n:
            raise ValueError(f"ambiguity.n must equal the number of clients {engine.data.n}, "
                             f"got {hyper.ambiguity.n}")

    def step(self) -> list:
        h, st, eng = self.hyper, self.state, self.engine
        theta = st.theta
        msgs: list = [ModelBroadcast(theta)]
        S, per_client = self._local_plan(h.local_steps, h.local_work)
        draws = self._draws(S + 1)
        singleton = h.ambiguity.is_singleton
        losses = None if singleton else eng.evaluate(theta, "train")[0]
        _, controls = eng.gradients_at(theta, draws, 0)
        msgs.append(LossControlReport(losses, controls))
        if singleton:
            lam_new = np.asarray(h.ambiguity.w, dtype=np.float64).copy()
        else:
            prev = losses if st.prev_losses is None else st.prev_losses
            s = (1.0 + h.varsigma) * losses - h.varsigma * prev
            lam_new = dual_step(st.lam, s, h.sigma, h.ambiguity)
        lam_t = _lam_tensor(lam_new)
        control = weighted_sum(lam_t, controls)
        msgs.append(ControlBroadcast(control))
        correction = tuple(c.unsqueeze(0) - ci for c, ci in zip(control, controls, strict=True))
        u, _ = eng.local_sgd(theta, h.eta, draws, range(1, S + 1), correction,
                             client_steps=per_client)
        deltas = tuple((t.unsqueeze(0) - ui) / (h.eta * h.local_steps)
                       for t, ui in zip(theta, u, strict=True))
        msgs.append(DeltaReport(deltas))
        agg = weighted_sum(lam_t, deltas)
        new_theta = tuple(t - h.tau * a for t, a in zip(theta, agg, strict=True))
        self.state = replace(st, round=st.round + 1, theta=new_theta, lam=lam_new,
                             prev_losses=losses)
        return msgs


# --------------------------------------------------------------------------- FedAvg

@dataclass(frozen=True)
class FedAvgHyper:
    """FedAvg (spec §3.1): local lr 0.1, J local SGD steps, uniform weights (A10)."""

    lr: float = 0.1
    local_steps: int = 5
    local_work: str = "steps"

    def __post_init__(self) -> None:
        check_range("lr", self.lr, low=0, low_open=True)
        check_range("local_steps", self.local_steps, low=1)
        check_choice("local_work", self.local_work, LOCAL_WORK)


class FedAvg(_Base):
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


# --------------------------------------------------------------------------- SAFL

@dataclass(frozen=True)
class SAFLHyper:
    """Stochastic-AFL (spec §3.3, A8): lr 0.1, dual lr sigma 1e-3, one gradient per round."""

    ambiguity: RelativeAmbiguitySet
    lr: float = 0.1
    sigma: float = 1e-3

    def __post_init__(self) -> None:
        if not isinstance(self.ambiguity, RelativeAmbiguitySet):
            raise ValueError("ambiguity must be a RelativeAmbiguitySet")
        check_range("lr", self.lr, low=0, low_open=True)
        check_range("sigma", self.sigma, low=0, low_open=True)


class SAFL(_Base):
    """``theta^{r+1} = theta^r - lr sum_i lambda_i^r g_i``,
    ``lambda^{r+1} = Proj_{Delta_alpha}(lambda^r + sigma l)`` with ``g_i, l_i`` the gradient and
    loss of one minibatch at theta^r. The averaged iterate is kept as a secondary output."""

    hyper_type = SAFLHyper

    def step(self) -> list:
        h, st, eng = self.hyper, self.state, self.engine
        draws = self._draws(1)
        losses, grads = eng.gradients_at(st.theta, draws, 0)
        lam_t = _lam_tensor(st.lam)
        agg = weighted_sum(lam_t, grads)
        new_theta = tuple(t - h.lr * g for t, g in zip(st.theta, agg, strict=True))
        l64 = losses.double().numpy()
        lam_new = dual_step(st.lam, l64, h.sigma, h.ambiguity)
        k = st.round  # rounds averaged so far, including theta^{r+1}
        avg = new_theta if st.theta_avg is None else tuple(
            a + (t - a) / (k) for a, t in zip(st.theta_avg, new_theta, strict=True))
        self.state = replace(st, round=st.round + 1, theta=new_theta, lam=lam_new,
                             theta_avg=avg)
        return [ModelBroadcast(st.theta), GradientLossReport(grads, l64)]


# --------------------------------------------------------------------------- DRFA

@dataclass(frozen=True)
class DRFAHyper:
    """DRFA, full participation (spec §3.4, A9): lr 0.1, tau = J = 5 local steps, gamma 1e-3."""

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


class DRFA(_Base):
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
        lam_t = _lam_tensor(st.lam)
        new_theta = weighted_sum(lam_t, u)
        theta_snap = weighted_sum(lam_t, snap)
        v = eng.minibatch_losses(theta_snap, draws.idx[J]).double().numpy()
        lam_new = dual_step(st.lam, v, J * h.gamma, h.ambiguity)
        self.state = replace(st, round=st.round + 1, theta=new_theta, lam=lam_new)
        return [ModelBroadcast(st.theta), ModelReport(u, snap), ModelBroadcast(theta_snap),
                LossReport(v)]


# --------------------------------------------------------------------------- registry of methods

METHODS = ("FedAvg", "Scaffold", "SAFL", "DRFA", "Scaff-PD", "Scaff-PD-IA")


def make_algorithm(method: str, engine: ClientEngine, theta0: Params,
                   generator: torch.Generator, *, alpha: float = 0.2, phi: float = 0.2,
                   local_steps: int = 5, setup: TrainSetup = TrainSetup(), tau: float = 2.5e-2,
                   local_work: str = "steps"):
    """The paper's configuration of ``method`` (App. J.2; spec §3.0 table).

    ``tau`` (the global step of the Scaffold-type methods) is only changed by the server-step
    ablation (``relfair.ablation_server_step``). ``local_work``: ``"steps"`` (J local SGD
    steps) or ``"epochs"`` (J local epochs, App. J.2; :func:`epoch_schedule`); SAFL takes one
    minibatch step per round under either (App. J.2 excludes it from J).
    """
    check_choice("local_work", local_work, LOCAL_WORK)
    n = engine.data.n
    dro = RelativeAmbiguitySet(n, alpha, alpha, 0.0)
    work = {"local_steps": local_steps, "local_work": local_work}
    if method == "FedAvg":
        return FedAvg(engine, FedAvgHyper(0.1, **work), theta0, generator, setup)
    if method == "Scaffold":
        hyper = ScaffPDIAHyper(RelativeAmbiguitySet(n, 1.0, 1.0, 0.0), tau=tau, **work)
        return ScaffPDIA(engine, hyper, theta0, generator, setup)
    if method == "SAFL":
        return SAFL(engine, SAFLHyper(dro, 0.1, 1e-3), theta0, generator, setup)
    if method == "DRFA":
        return DRFA(engine, DRFAHyper(dro, 0.1, gamma=1e-3, **work), theta0, generator, setup)
    if method == "Scaff-PD":
        return ScaffPDIA(engine, ScaffPDIAHyper(dro, tau=tau, **work), theta0, generator, setup)
    if method == "Scaff-PD-IA":
        hyper = ScaffPDIAHyper(RelativeAmbiguitySet(n, alpha, alpha, phi), tau=tau, **work)
        return ScaffPDIA(engine, hyper, theta0, generator, setup)
    raise ValueError(f"method must be one of {METHODS}, got {method!r}")
