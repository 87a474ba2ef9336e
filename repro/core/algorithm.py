"""What the papers' algorithms share: one :class:`typing.Protocol`.

Each paper's main algorithm is a class holding its hyperparameters (a frozen *Config*) and
everything it carries from one communication round to the next (a *State*), with

- ``step()``: one round of the protocol as the paper writes it (the messages it exchanged
  are returned, for counting and for loop oracles);
- ``run(...)``: rounds until a count is reached, or until the algorithm's own stopping rule
  holds, returning the final State.

The protocol is structural: an algorithm conforms by having these members, it never inherits
from :class:`Algorithm`. ``isinstance(alg, Algorithm)`` checks that they are present (not their
signatures); ``tests/core/test_algorithm_protocol.py`` checks each paper's main algorithm.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar, runtime_checkable

__all__ = ["Algorithm", "run_rounds"]

ConfigT = TypeVar("ConfigT", covariant=True)
StateT = TypeVar("StateT", covariant=True)


@runtime_checkable
class Algorithm(Protocol[ConfigT, StateT]):
    """A federated algorithm: ``config`` (its hyperparameters), ``state`` (what it carries
    between rounds), ``step()`` (one round) and ``run(...)`` (rounds, returning the state).
    """

    @property
    def config(self) -> ConfigT:
        """The hyperparameters, fixed for the run."""
        ...

    @property
    def state(self) -> StateT:
        """Everything carried from one round to the next (iterates, duals, counters)."""
        ...

    def step(self) -> Any:
        """One communication round; returns the messages exchanged in it."""
        ...

    def run(self, *args: Any, **kwargs: Any) -> StateT:
        """Rounds until a given count or the algorithm's stopping rule; the final state."""
        ...


def run_rounds(algorithm: Any, rounds: int, callback: Callable[[Any], None] | None = None):
    """``rounds`` calls of ``algorithm.step()``, ``callback(algorithm.state)`` after each (for
    logging); returns the final state. The ``run`` of an algorithm whose rounds need no stopping
    rule of their own (Fair VFL, the relfair methods).
    """
    for _ in range(rounds):
        algorithm.step()
        if callback is not None:
            callback(algorithm.state)
    return algorithm.state
