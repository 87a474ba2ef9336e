"""The round every algorithm of paper 004 shares: broadcast theta0^t, local solve, upload,
equal-weight average ((16) / Algorithm 2 line 16), and the state carried between rounds.

All algorithms act on one flat vector ``theta = [omega; psi]`` per party
(:mod:`repro.fedmm.blocks`) and on the clients' player gradients ``G_i``
(:class:`repro.fedmm.problem.PlayerGradient`). Each follows :mod:`repro.core.algorithm`::

    alg = FedMM(problem, FedMMConfig(blocks, local_steps=20), init=theta0, backend="loop")
    messages = alg.step()          # RoundMessages: the broadcast and the N uploads
    state = alg.run(rounds, callback=lambda r, state, messages: ...)

The algorithms: :mod:`repro.fedmm.fedmm` (Algorithm 3), :mod:`repro.fedmm.fedavg_gda` and
:mod:`repro.fedmm.fedprox_gda` (Algorithm 2), :mod:`repro.fedmm.fedsgda`; by name:
:mod:`repro.fedmm.methods`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from repro.core.algorithm import Callback, Stop, run_rounds
from repro.core.validation import check_range
from repro.fedmm.blocks import as_parameter_vector, block_vectors
from repro.fedmm.local_gda import LocalGDA, LocalSolver
from repro.fedmm.messages import Upload
from repro.fedmm.problem import PlayerGradient

Tensor = torch.Tensor


@dataclass
class FedState:
    """Everything an algorithm carries between rounds.

    ``theta0``: global (omega0, psi0), shape (D,); ``local``: the clients' last local iterates
    theta_i^{t} (N, D); ``duals``: (lambda_i, beta_i) stacked as (N, D), ``None`` for the
    baselines; ``round``: number of completed rounds t.
    """

    round: int
    theta0: Tensor
    local: Tensor
    duals: Tensor | None


def initial_theta(problem: Any, dim: int, init: Any) -> Tensor:
    """theta0^0: ``init`` (a torch tensor, or a numpy array / list, :func:`as_parameter_vector`)
    or, for ``None``, zeros of length ``dim`` in the problem's dtype and device (``dtype`` /
    ``device`` attributes where it has them, else float64 on the CPU): Algorithm 3 line 1 leaves
    the start to the user, the theory checks start at 0.
    """
    if init is None:
        return torch.zeros(dim, dtype=getattr(problem, "dtype", torch.float64),
                           device=getattr(problem, "device", "cpu"))
    return as_parameter_vector(init)


class Federated:
    """Shared round loop of paper 004's algorithms: broadcast, local solve, upload,
    equal-weight average; the constructor of :mod:`repro.core.algorithm`.

    ``problem`` is the clients' player-gradient oracle (:class:`PlayerGradient`, with
    ``n_clients``); ``config`` the algorithm's frozen config (its ``blocks``, and its local
    steps M, :attr:`local_steps`); ``init`` theta0^0 (:func:`initial_theta`); ``rng`` is
    accepted and unused (the algorithms are deterministic; the minibatches are the problem's);
    ``backend`` the local GDA's (``vectorized``, ``loop`` or ``graphed``,
    :class:`repro.fedmm.local_gda.LocalGDA`). ``local_solver`` replaces that GDA by another
    solve of the local problems with LocalGDA's call signature (the theory checks' exact and
    inexact solvers, :mod:`repro.fedmm.instances`); ``backend`` is then unused.
    """

    def __init__(self, problem: PlayerGradient, config: Any, *, init: Any = None,
                 rng: Any = None, backend: str = "vectorized",
                 local_solver: LocalSolver | None = None) -> None:
        n_clients = getattr(problem, "n_clients", None)
        check_range("problem.n_clients", n_clients, low=1)
        dim = sum(b.size for b in config.blocks)
        theta0 = initial_theta(problem, dim, init)
        eta, mu, scale = block_vectors(config.blocks, theta0.dtype, theta0.device)
        if theta0.ndim != 1 or theta0.numel() != eta.numel():
            raise ValueError(f"theta0 (init) must be a vector of length {eta.numel()} (sum of "
                             f"block sizes), got shape {tuple(theta0.shape)}")
        self.problem, self.config = problem, config
        self.eta, self.mu, self.scale = eta, mu, scale
        self.n_clients = n_clients
        self.local_solver = (local_solver if local_solver is not None
                             else LocalGDA(problem, self.local_steps, backend))
        self.state = FedState(0, theta0.clone(), theta0.expand(n_clients, -1).clone(), None)

    @property
    def local_steps(self) -> int:
        """M, the local GDA steps of a round (the config's)."""
        return self.config.local_steps

    @staticmethod
    def aggregate(uploads: Sequence[Upload]) -> Tensor:
        """(16) / Alg. 2 line 16: the unweighted mean of the uploaded vectors."""
        return torch.stack([u.theta for u in uploads]).mean(dim=0)

    def run(self, rounds: int | None = None, *, stop: Stop | None = None,
            callback: Callback | None = None) -> FedState:
        """``rounds`` rounds or until ``stop(state)`` (:func:`repro.core.algorithm.run_rounds`;
        no stopping rule of its own); ``callback(round, state, messages)`` after each.
        """
        return run_rounds(self, rounds, stop=stop, callback=callback)
