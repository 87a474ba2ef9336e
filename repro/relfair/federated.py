"""What the six federated methods of paper 002 share (docs/decisions.md#relfair-algorithm,
docs/decisions.md#relfair-setting): the problem they train on (the clients' data, the model and
its stochastic losses: docs/decisions.md#relfair-batch, docs/decisions.md#relfair-mlp), the local
work of App. J.2, the mutable state of a run and the base class.

Every method follows :mod:`repro.core.algorithm`::

    alg = FedAvg(problem, FedAvgConfig(), init=None, rng=None, backend="vectorized")
    messages = alg.step()          # one round: a RoundMessages of repro.relfair.messages
    state = alg.run(100, callback=lambda r, state, messages: ...)

``problem`` is a :class:`ClientProblem` (the clients' ``ClientData`` and the
:class:`TrainSetup` shared by every method: minibatch size, hidden width, dropout);
``config`` the method's frozen ``<Alg>Config``; ``init`` theta^0 (``None``: PyTorch's default
``nn.Linear`` init drawn from ``rng``, :func:`repro.relfair.models.init_params`); ``rng`` the
``torch.Generator`` every random draw of the run comes from (``None``: seed 0); ``backend``
the :class:`ClientEngine` backend (``"loop"``: the equality oracle).

``step()`` is one communication round; the typed messages it returns are the channel: the
clients compute from what the server broadcast, the server aggregates what the clients
reported (a message holds every client's row: row i is client i's message).

All clients participate in every round (docs/decisions.md#relfair-participation); Theta = R^d
(Proj_Theta is the identity); lambda^0 = 1/n; the last iterate is evaluated
(docs/decisions.md#relfair-evaluation-model). Randomness: each round draws its minibatches and
dropout masks (``draw_round``) and DRFA's snapshot index from ``rng``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from repro.core.algorithm import RoundMessages, run_rounds
from repro.core.validation import check_choice, check_range
from repro.relfair.client_batch import ClientEngine
from repro.relfair.clients import ClientData, draw_round
from repro.relfair.models import Params, as_params, init_params

__all__ = ["LOCAL_WORK", "ClientProblem", "FLState", "FederatedMethod", "LocalWork",
           "TrainSetup", "epoch_schedule", "lam_tensor", "scheduled_reads"]


@dataclass(frozen=True)
class TrainSetup:
    """Shared by all methods: minibatch size B (docs/decisions.md#relfair-batch), hidden width
    and dropout (docs/decisions.md#relfair-mlp).
    """

    batch: int = 32
    hidden: int = 50
    dropout: float = 0.5

    def __post_init__(self) -> None:
        check_range("batch", self.batch, low=1)
        check_range("hidden", self.hidden, low=1)
        check_range("dropout", self.dropout, low=0, high=1, high_open=True)


@dataclass(frozen=True, eq=False)
class ClientProblem:
    """The problem every method of paper 002 trains on: the clients' data (``ClientData``,
    :func:`repro.relfair.clients.split_clients`) and the model and stochastic losses
    ``f_i(theta; xi)`` of App. J.2 (:class:`TrainSetup`: the MLP's hidden width, dropout,
    minibatches of B). The ambiguity set is the method's (its config), not the problem's.
    """

    data: ClientData
    setup: TrainSetup = field(default_factory=TrainSetup)

    def __post_init__(self) -> None:
        if not isinstance(self.data, ClientData):
            raise ValueError(f"ClientProblem.data must be a ClientData (split_clients), got "
                             f"{type(self.data).__name__}")
        if not isinstance(self.setup, TrainSetup):
            raise ValueError(f"ClientProblem.setup must be a TrainSetup, got "
                             f"{type(self.setup).__name__}")

    @property
    def n(self) -> int:
        return self.data.n

    def engine(self, backend: str) -> ClientEngine:
        """The clients' computations on ``backend`` (a problem with other client losses, such
        as the theory checks' quadratics, returns its own engine here).
        """
        return ClientEngine(self.data, backend)

    def init(self, rng: torch.Generator) -> Params:
        """theta^0 as the experiments draw it: PyTorch's default ``nn.Linear`` init."""
        return init_params(self.data.d_in, self.setup.hidden, self.data.classes, rng)


@dataclass
class FLState:
    """Everything that changes across rounds: r, theta^r, lambda^r, L^{r-1}; SAFL's average."""

    round: int
    theta: Params
    lam: np.ndarray
    prev_losses: np.ndarray | None = None
    theta_avg: Params | None = None


def lam_tensor(lam: np.ndarray) -> torch.Tensor:
    """The dual weights as the float32 tensor the aggregations multiply by."""
    return torch.from_numpy(np.asarray(lam, dtype=np.float64)).to(torch.float32)


LOCAL_WORK = ("epochs", "steps")


def epoch_schedule(train_sizes, epochs: int, batch: int) -> np.ndarray:
    """Per-client minibatch steps of ``epochs`` local epochs: ``epochs * ceil(N_i / B)``
    (App. J.2, "the numbers of local epochs J of all the algorithms except for SAFL to be 5";
    the primary reading of relfair).
    """
    sizes = np.asarray(train_sizes, dtype=np.int64)
    if sizes.ndim != 1 or sizes.min(initial=1) < 1:
        raise ValueError(f"train_sizes must be positive client sizes, got {sizes!r}")
    check_range("epochs", epochs, low=1)
    check_range("batch", batch, low=1)
    return epochs * -(-sizes // int(batch))


def scheduled_reads(client_steps: np.ndarray | None, draws: int, *, first: int = 0,
                    last: int = 0) -> np.ndarray | None:
    """The minibatches a round reads (``draw_round``'s ``needed``), (draws, n) bool: the
    ``first`` leading and ``last`` trailing draws of every client (those evaluated at a
    broadcast model) and client i's local steps at draws ``first .. first + client_steps[i] -
    1``; None (all) without a per-client schedule.
    """
    if client_steps is None:
        return None
    steps = np.asarray(client_steps)
    s = np.arange(draws)[:, None]
    return (s < first) | (s >= draws - last) | (s - first < steps[None, :])


@dataclass(frozen=True, kw_only=True)
class LocalWork:
    """The local work of a round, the one place of its defaults (App. J.2): ``local_steps`` J
    = 5 and ``local_work`` = ``"epochs"`` (J local epochs: client i takes ``J ceil(N_i / B)``
    minibatch steps, :func:`epoch_schedule`; the paper's primary reading) or
    ``"steps"`` (J minibatch SGD steps, Alg. 2's ``j = 1..J`` read literally). Keyword-only;
    every config of a method with local steps extends it.
    """

    local_steps: int = 5
    local_work: str = "epochs"

    def __post_init__(self) -> None:
        check_range("local_steps", self.local_steps, low=1)
        check_choice("local_work", self.local_work, LOCAL_WORK)

    def plan(self, problem: ClientProblem) -> tuple[int, np.ndarray | None]:
        """``(S, client_steps)``: the round's number of step draws and each client's own count
        (None: all take ``S``).
        """
        if self.local_work == "steps":
            return self.local_steps, None
        per = epoch_schedule(problem.data.train_sizes, self.local_steps, problem.setup.batch)
        return int(per.max()), per


class FederatedMethod:
    """A method of paper 002 (the protocol in the module docstring): ``config_type`` names its
    config class, ``state_type`` its state (an :class:`FLState`, or a dataclass extending it
    with what the method carries across rounds, e.g. a server momentum); a subclass writes
    :meth:`step`.
    """

    config_type: type = object
    state_type: type = FLState

    def __init__(self, problem: ClientProblem, config, *, init: Params | None = None,
                 rng: torch.Generator | None = None, backend: str = "vectorized") -> None:
        if not isinstance(problem, ClientProblem):
            raise TypeError(f"{type(self).__name__} needs a ClientProblem (the clients' data "
                            f"and TrainSetup), got {type(problem).__name__}")
        if not isinstance(config, self.config_type):
            raise TypeError(f"{type(self).__name__} needs {self.config_type.__name__}, "
                            f"got {type(config).__name__}")
        n = problem.n
        ambiguity = getattr(config, "ambiguity", None)
        if ambiguity is not None and ambiguity.n != n:
            raise ValueError(f"ambiguity.n must equal the number of clients {n}, "
                             f"got {ambiguity.n}")
        self.problem, self.config = problem, config
        self.rng = torch.Generator().manual_seed(0) if rng is None else rng
        self.engine = problem.engine(backend)
        self._mask_buffer: torch.Tensor | None = None  # the rounds' dropout masks (_draws)
        data = problem.data
        theta0 = problem.init(self.rng) if init is None else init
        theta0 = as_params("init", theta0, data.d_in, data.classes, problem.setup.hidden)
        self.state = self.state_type(round=1, theta=tuple(p.clone() for p in theta0),
                                     lam=np.full(n, 1.0 / n))

    def _draws(self, steps: int, needed: np.ndarray | None = None):
        """The round's ``steps`` draws from the run's generator; only the minibatches marked
        in ``needed`` are selected (:func:`scheduled_reads`, :func:`draw_round`). The dropout
        masks are drawn into a tensor the method keeps across rounds (a round's draws are
        read within its step only).
        """
        s, data = self.problem.setup, self.problem.data
        out = None
        if s.dropout > 0:
            shape = (steps, data.n, s.batch, s.hidden)
            out = self._mask_buffer
            if out is None or tuple(out.shape) != shape:
                out = self._mask_buffer = torch.empty(shape, dtype=torch.float32)
        return draw_round(data, steps, s.batch, s.hidden, s.dropout, self.rng, needed, out)

    def step(self) -> RoundMessages:
        raise NotImplementedError

    def run(self, rounds: int | None = None, *, stop=None, callback=None) -> FLState:
        """``rounds`` rounds or until ``stop(state)``; ``callback(round, state, messages)``
        after each (:func:`repro.core.algorithm.run_rounds`).
        """
        return run_rounds(self, rounds, stop=stop, callback=callback)
