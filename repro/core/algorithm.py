"""The one protocol every paper's algorithm follows.

An algorithm is built, stepped and run the same way in all four papers::

    alg = Alg(problem, config, *, init=None, rng=None, backend=...)
    messages = alg.step()                        # one communication round
    state = alg.run(rounds, callback=log)        # or run(stop=...), or run() to its own rule

- ``problem``: what the clients hold (their data, losses, constraints) — the paper's problem
  object (constrfl ``Problem``, relfair ``ClientEngine``, fairvfl ``VFLProblem``, fedmm's
  minimax oracle);
- ``config``: a frozen dataclass ``<Alg>Config``, validated once when it is made (bad values
  raise ``ValueError`` naming the field); the paper's inputs, nothing else;
- keyword-only, each with a default: ``init`` (the starting point; ``None`` is the paper's),
  ``rng`` (where the algorithm samples: a ``torch.Generator`` or ``numpy.random.Generator``;
  accepted and unused by a deterministic one) and ``backend`` (how the clients' work is computed;
  every backend gives the same numbers, the loop one is the equality oracle);
- ``step() -> RoundMessages``: one round as the paper writes it; the typed messages returned
  are what the server and the clients exchanged in it (every paper: the channel, not a log);
- ``run(rounds=None, *, stop=None, callback=None)``: ``rounds`` rounds, or until ``stop(state)``
  holds, or (both ``None``) until the algorithm's own stopping rule (an algorithm without one
  raises); ``callback(round, state, messages)`` after every round; returns the final state.

The protocol is structural: an algorithm conforms by having these members, it never inherits
from :class:`Algorithm`. :func:`run_rounds` is the generic driver (the ``run`` of every
algorithm without a stopping rule of its own); ``tests/core/test_algorithm_protocol.py``
drives every registered method (:mod:`repro.core.methods`) through it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

__all__ = ["Algorithm", "Callback", "RoundMessages", "Stop", "run_rounds"]

ConfigT = TypeVar("ConfigT", covariant=True)
StateT = TypeVar("StateT")


@dataclasses.dataclass(frozen=True)
class RoundMessages:
    """What crossed the wire in round ``round`` (1-based): ``downlink``, the server's messages to
    the clients (one broadcast, or one per client), and ``uplink``, the clients' messages to the
    server, in client order. The payloads are each paper's typed messages
    (``repro.<paper>.messages``); a paper may subclass this to name its parts.
    """

    round: int
    downlink: tuple = ()
    uplink: tuple = ()

    def __post_init__(self) -> None:
        if not isinstance(self.round, int) or self.round < 0:
            raise ValueError(f"RoundMessages.round must be an int >= 0, got {self.round!r}")
        object.__setattr__(self, "downlink", tuple(self.downlink))
        object.__setattr__(self, "uplink", tuple(self.uplink))


Callback = Callable[[int, Any, RoundMessages], None]
"""``callback(round, state, messages)``, called by ``run`` after every round."""

Stop = Callable[[Any], bool]
"""``stop(state) -> bool``: ``run`` ends after the first round where it holds."""


@runtime_checkable
class Algorithm(Protocol, Generic[ConfigT, StateT]):
    """A federated algorithm: ``config``, ``state``, ``step()`` and ``run(...)`` as in the module
    docstring. ``isinstance(alg, Algorithm)`` checks that the members are present; the signatures
    are checked by ``tests/core/test_algorithm_protocol.py``.
    """

    @property
    def config(self) -> ConfigT:
        """The hyperparameters (a frozen ``<Alg>Config``), fixed for the run."""
        ...

    @property
    def state(self) -> StateT:
        """Everything carried from one round to the next (iterates, duals, counters)."""
        ...

    def step(self) -> RoundMessages:
        """One communication round; the messages exchanged in it."""
        ...

    def run(self, rounds: int | None = None, *, stop: Stop | None = None,
            callback: Callback | None = None) -> StateT:
        """Rounds until ``rounds``, ``stop(state)`` or the algorithm's own rule; the state."""
        ...


def run_rounds(algorithm: Any, rounds: int | None = None, *, stop: Stop | None = None,
               callback: Callback | None = None) -> Any:
    """The generic driver: ``algorithm.step()`` until ``rounds`` rounds were taken or
    ``stop(algorithm.state)`` holds (whichever comes first), ``callback(round, state, messages)``
    after each; returns the final state. With neither ``rounds`` nor ``stop`` it raises: an
    algorithm with a stopping rule of its own implements ``run()`` itself.
    """
    if rounds is None and stop is None:
        raise ValueError(f"{type(algorithm).__name__}.run needs rounds= or stop= (it has no "
                         "stopping rule of its own)")
    if rounds is not None and (not isinstance(rounds, int) or rounds < 0):
        raise ValueError(f"rounds must be an int >= 0, got {rounds!r}")
    taken = 0
    while rounds is None or taken < rounds:
        messages = algorithm.step()
        taken += 1
        if callback is not None:
            callback(taken, algorithm.state, messages)
        if stop is not None and stop(algorithm.state):
            break
    return algorithm.state
