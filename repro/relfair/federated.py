"""What the six federated methods of paper 002 share (specs/relfair.md §2-3): the training
setup (A2, A3), the mutable state of a run, the local-work plan of App. J.2 and the base class.

Every method is one class (one module each: ``scaff_pd_ia``, ``fedavg``, ``safl``, ``drfa``):
hyperparameters in a frozen dataclass validated on construction, all mutable state in one
:class:`FLState`, ``step()`` = one communication round returning the messages exchanged
(``repro.relfair.messages``).

All clients participate in every round (A11); Theta = R^d (Proj_Theta is the identity);
lambda^0 = 1/n; the last iterate is evaluated (A16). Randomness: each round draws its
minibatches and dropout masks (``draw_round``) and DRFA's snapshot index from the run's
``torch.Generator``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from repro.core.algorithm import run_rounds
from repro.core.validation import check_range
from repro.relfair.client_batch import ClientEngine
from repro.relfair.clients import draw_round
from repro.relfair.models import Params, as_params

__all__ = ["DEFAULT_SETUP", "LOCAL_WORK", "FLState", "FederatedMethod", "TrainSetup",
           "epoch_schedule", "lam_tensor"]


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


DEFAULT_SETUP = TrainSetup()


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


LOCAL_WORK = ("steps", "epochs")


def epoch_schedule(train_sizes, epochs: int, batch: int) -> np.ndarray:
    """Per-client minibatch steps of ``epochs`` local epochs: ``epochs * ceil(N_i / B)``
    (App. J.2, "the numbers of local epochs J of all the algorithms except for SAFL to be 5";
    the primary reading of relfair, issue #15).
    """
    sizes = np.asarray(train_sizes, dtype=np.int64)
    if sizes.ndim != 1 or sizes.min(initial=1) < 1:
        raise ValueError(f"train_sizes must be positive client sizes, got {sizes!r}")
    check_range("epochs", epochs, low=1)
    check_range("batch", batch, low=1)
    return epochs * -(-sizes // int(batch))


class FederatedMethod:
    """A method of paper 002: ``hyper_type`` names its hyperparameter class; :meth:`step` runs
    one round, :meth:`run` several.
    """

    hyper_type: type = object

    @property
    def config(self):
        """The hyperparameters under the one name every paper's algorithm uses
        (:class:`repro.core.algorithm.Algorithm`); ``hyper`` is the same object.
        """
        return self.hyper

    def _local_plan(self, local_steps: int, local_work: str) -> tuple[int, np.ndarray | None]:
        """``(S, client_steps)``: the round's number of step draws and each client's own
        count (None: all take ``S``). ``steps``: J SGD steps; ``epochs``: J local epochs,
        client i taking ``J * ceil(N_i / B)`` steps (:func:`epoch_schedule`).
        """
        if local_work == "steps":
            return local_steps, None
        per = epoch_schedule(self.engine.data.train_sizes, local_steps, self.setup.batch)
        return int(per.max()), per

    def __init__(self, engine: ClientEngine, hyper, theta0: Params,
                 generator: torch.Generator, setup: TrainSetup = DEFAULT_SETUP) -> None:
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
        return run_rounds(self, rounds, callback)
