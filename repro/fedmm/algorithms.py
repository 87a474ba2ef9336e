"""FedMM (Algorithm 3) and the federated GDA baselines of paper 004, on flat parameter tensors.

All algorithms act on one flat vector ``theta = [omega; psi]`` per party and on a *player
gradient* ``G_i(theta)``: the gradient of the minimising player's loss on the omega
coordinates and of the maximising player's loss on the psi coordinates, i.e.
``G_i = [grad_omega f_i ; -grad_psi f_i]`` (spec §1.4, block-wise form). Descending ``G`` is
gradient descent in omega and ascent in psi, so eqs. (11)-(16) become, per coordinate block b
with step ``eta_b``, penalty ``mu_b``, gradient multiplier ``s_b`` and dual ``d_b``
(``d = lambda`` on omega, ``d = beta`` on psi)::

    theta <- theta - eta_b [ s_b G_i(theta) + mu_b (theta - theta0^t) + d_i^t ]     (11)/(12)
    d_i^{t+1} = d_i^t + mu_b (theta_i^{t+1} - theta0^t)                              (13)/(14)
    theta_i^{t+} = theta_i^{t+1} + (eta3^t / mu_b) d_i^{t+1}                          (15)
    theta0^{t+1} = (1/N) sum_i theta_i^{t+}                                           (16)

On psi, ``-[ -grad f + mu2 (psi - psi0) + beta ]`` is exactly the bracket of (12), and the dual
update is (14); the paper's "dual descent/ascent" labels are swapped (spec §1.4) but the
formulas are these. Alg. 3 line 19 prints ``psi_i^{t+1}`` for the server's psi average; (16)
(with ``psi_i^{t+}``) is used, as in the authors' code.

Baselines (Algorithm 2 and Peng et al.'s FedSGDA, spec §2): FedAvgGDA is the same local GDA with
no prox and no duals, followed by plain averaging; FedProxGDA adds ``mu (theta - theta0^t)``;
FedSGDA is FedAvgGDA with one local step.

Clients are vectorized: the local solver updates an ``(N, D)`` tensor at once; the
``loop`` backend calls the per-client oracle one client at a time (the equality oracle of the
tests and the baseline of ``bench.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Protocol

import numpy as np
import torch

from repro.core.validation import check_choice, check_range

Tensor = torch.Tensor
BACKENDS = ("vectorized", "loop")


@dataclass(frozen=True)
class Block:
    """One coordinate block of ``theta`` with its own step, penalty and gradient multiplier.

    ``eta`` is eta1 (omega blocks) or eta2 (psi blocks); ``mu`` is mu1 or mu2; ``scale`` is the
    authors' code's per-block gradient multiplier s_b (1 in the paper form, spec §5).
    """

    name: str
    size: int
    eta: float
    mu: float = 1.0
    scale: float = 1.0

    def __post_init__(self) -> None:
        check_range(f"{self.name}.size", self.size, low=1)
        check_range(f"{self.name}.eta", self.eta, low=0, low_open=True)
        check_range(f"{self.name}.mu", self.mu, low=0)
        check_range(f"{self.name}.scale", self.scale, low=0, low_open=True)


def block_vectors(blocks: Sequence[Block], dtype=torch.float32,
                  device: torch.device | str = "cpu") -> tuple[Tensor, Tensor, Tensor]:
    """Per-coordinate ``(eta, mu, scale)`` vectors of length ``sum(b.size)``."""

    def vec(attr: str) -> Tensor:
        return torch.cat([torch.full((b.size,), float(getattr(b, attr)), dtype=dtype,
                                     device=device) for b in blocks])

    return vec("eta"), vec("mu"), vec("scale")


class PlayerGradient(Protocol):
    """Stochastic player gradients of the clients' local objectives f_i.

    ``batched(theta, t, m)`` takes ``(N, D)`` client parameters and returns ``(N, D)``
    gradients for local step ``m`` of round ``t`` (each client drawing its own next minibatch);
    ``client(i, theta_i, t, m)`` is the same for one client and must give the same numbers.
    """

    n_clients: int

    def batched(self, theta: Tensor, t: int, m: int) -> Tensor: ...

    def client(self, i: int, theta_i: Tensor, t: int, m: int) -> Tensor: ...


@dataclass(frozen=True)
class Broadcast:
    """Server -> every client at the start of round t: the global parameters (omega0, psi0)."""

    round: int
    theta0: Tensor


@dataclass(frozen=True)
class Upload:
    """Client i -> server: theta_i^{t+} of (15) (FedMM) or theta_i^{t+1} (baselines).

    Nothing else crosses the wire; in particular the duals lambda_i, beta_i stay on the client.
    """

    client: int
    theta: Tensor


@dataclass(frozen=True)
class RoundMessages:
    broadcast: Broadcast
    uploads: tuple[Upload, ...]


def message_fields(msg: object) -> tuple[str, ...]:
    return tuple(f.name for f in fields(msg))


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


@dataclass(frozen=True)
class LocalGDA:
    """The M-step simultaneous local GDA of (11)-(12) (FedMM), Alg. 2 lines 9-12 (baselines).

    ``prox`` adds ``mu (theta - theta0)``; ``duals`` (N, D) adds ``d_i``; both ``None`` gives
    FedAvgGDA's plain local GDA. One minibatch per step, shared by the omega and psi updates.
    """

    oracle: PlayerGradient
    local_steps: int
    backend: str = "vectorized"

    def __post_init__(self) -> None:
        check_range("local_steps", self.local_steps, low=1)
        check_choice("backend", self.backend, BACKENDS)

    def __call__(self, theta0: Tensor, t: int, eta: Tensor, scale: Tensor,
                 mu: Tensor | None, duals: Tensor | None) -> Tensor:
        n = self.oracle.n_clients
        if self.backend == "loop":
            return torch.stack([self._one(i, theta0, t, eta, scale, mu,
                                          None if duals is None else duals[i])
                                for i in range(n)])
        theta = theta0.expand(n, -1).clone()
        for m in range(self.local_steps):
            direction = scale * self.oracle.batched(theta, t, m)
            if mu is not None:
                direction = direction + mu * (theta - theta0)
            if duals is not None:
                direction = direction + duals
            theta = theta - eta * direction
        return theta

    def _one(self, i, theta0, t, eta, scale, mu, dual):
        theta = theta0.clone()
        for m in range(self.local_steps):
            direction = scale * self.oracle.client(i, theta, t, m)
            if mu is not None:
                direction = direction + mu * (theta - theta0)
            if dual is not None:
                direction = direction + dual
            theta = theta - eta * direction
        return theta


LocalSolver = Callable[[Tensor, int, Tensor, Tensor, Tensor | None, Tensor | None], Tensor]


@dataclass(frozen=True)
class FedMMConfig:
    """FedMM hyperparameters: the blocks (eta_b, mu_b, s_b) and the eta3 base of (15).

    ``eta3`` is the per-round base c with eta_3^t = c**t (t = 0, 1, ...; spec §10.13); the
    paper uses 1/1.0005 (DANN), 1/1.0002 (CDAN), 1/1.0001 (MDD). ``eta3_constant`` uses c in
    every round instead (the theory checks' "constant eta3", spec §9.2 T1/T3).
    """

    blocks: tuple[Block, ...]
    eta3: float = 1.0
    eta3_constant: bool = False

    def __post_init__(self) -> None:
        check_range("eta3", self.eta3, low=0, high=1, low_open=True)
        if not self.blocks:
            raise ValueError("blocks must be non-empty, got ()")
        for b in self.blocks:
            check_range(f"{b.name}.mu (FedMM divides by it in (15))", b.mu, low=0,
                        low_open=True)


@dataclass(frozen=True)
class BaselineConfig:
    """FedAvgGDA / FedProxGDA / FedSGDA hyperparameters: the blocks and ``prox`` on/off.

    With ``prox`` each block's ``mu`` is the FedProx coefficient of Alg. 2 line 6.
    """

    blocks: tuple[Block, ...]
    prox: bool = False

    def __post_init__(self) -> None:
        if not self.blocks:
            raise ValueError("blocks must be non-empty, got ()")


def as_parameter_vector(theta0) -> Tensor:
    """``theta0`` as a torch tensor: a torch tensor is used as is; a numpy array (or a list) of
    real numbers becomes a CPU tensor of the same precision (float32 stays float32, everything
    else float64). The algorithms' state (:class:`FedState`) and the vectors handed to the
    player-gradient oracle are torch tensors of that dtype; ``state.theta0.numpy()`` gives the
    result back as numpy."""
    if isinstance(theta0, Tensor):
        return theta0
    arr = np.asarray(theta0)
    if arr.dtype.kind not in "fiu":
        raise ValueError(f"theta0 must be a real vector (numpy array or torch tensor), got "
                         f"dtype {arr.dtype}")
    return torch.from_numpy(np.array(arr, dtype=np.float32 if arr.dtype == np.float32
                                     else np.float64))


class _Federated:
    """Shared round loop: broadcast, local solve, upload, equal-weight average."""

    def __init__(self, blocks: Sequence[Block], theta0: Tensor | np.ndarray, n_clients: int,
                 local_solver: LocalSolver) -> None:
        theta0 = as_parameter_vector(theta0)
        eta, mu, scale = block_vectors(blocks, theta0.dtype, theta0.device)
        if theta0.ndim != 1 or theta0.numel() != eta.numel():
            raise ValueError(f"theta0 must be a vector of length {eta.numel()} (sum of block "
                             f"sizes), got shape {tuple(theta0.shape)}")
        check_range("n_clients", n_clients, low=1)
        self.eta, self.mu, self.scale = eta, mu, scale
        self.n_clients = n_clients
        self.local_solver = local_solver
        self.state = FedState(0, theta0.clone(), theta0.expand(n_clients, -1).clone(), None)

    @staticmethod
    def aggregate(uploads: Sequence[Upload]) -> Tensor:
        """(16) / Alg. 2 line 16: the unweighted mean of the uploaded vectors."""
        return torch.stack([u.theta for u in uploads]).mean(dim=0)

    def run(self, rounds: int, callback: Callable[[int, RoundMessages], None] | None = None):
        for _ in range(rounds):
            msgs = self.step()
            if callback is not None:
                callback(self.state.round, msgs)
        return self.state


class FedMM(_Federated):
    """Algorithm 3 (eqs. (11)-(16)): local GDA on the augmented Lagrangians (6), dual steps
    (13)-(14) kept on the clients, the eta3-weighted upload (15) and the average (16).

    Duals start at zero (paper, "Hyper-parameters"). ``local_solver`` is a :class:`LocalGDA`
    or, for the theory checks, an exact solver of the local saddle problem. ``theta0`` may be
    a torch tensor or a numpy array (:func:`as_parameter_vector`); the state, and what
    :meth:`run` returns, hold torch tensors (``state.theta0.numpy()`` for numpy).
    """

    def __init__(self, config: FedMMConfig, theta0: Tensor, n_clients: int,
                 local_solver: LocalSolver) -> None:
        super().__init__(config.blocks, theta0, n_clients, local_solver)
        self.config = config
        self.state.duals = torch.zeros_like(self.state.local)

    def step(self) -> RoundMessages:
        s = self.state
        t = s.round
        down = Broadcast(t, s.theta0.clone())
        local = self.local_solver(down.theta0, t, self.eta, self.scale, self.mu, s.duals)
        duals = s.duals + self.mu * (local - down.theta0)                    # (13), (14)
        c = self.config.eta3 if self.config.eta3_constant else self.config.eta3 ** t
        shifted = local + (c / self.mu) * duals                              # (15)
        uploads = tuple(Upload(i, shifted[i]) for i in range(self.n_clients))
        self.state = FedState(t + 1, self.aggregate(uploads), local, duals)  # (16)
        return RoundMessages(down, uploads)


class FedAvgGDA(_Federated):
    """Algorithm 2 with L_i = f_i (or, with ``prox``, FedProxGDA's L_i of line 6)."""

    def __init__(self, config: BaselineConfig, theta0: Tensor, n_clients: int,
                 local_solver: LocalSolver) -> None:
        super().__init__(config.blocks, theta0, n_clients, local_solver)
        self.config = config

    def step(self) -> RoundMessages:
        s = self.state
        down = Broadcast(s.round, s.theta0.clone())
        mu = self.mu if self.config.prox else None
        local = self.local_solver(down.theta0, s.round, self.eta, self.scale, mu, None)
        uploads = tuple(Upload(i, local[i]) for i in range(self.n_clients))
        self.state = FedState(s.round + 1, self.aggregate(uploads), local, None)
        return RoundMessages(down, uploads)


def FedProxGDA(config: BaselineConfig, theta0: Tensor, n_clients: int,
               local_solver: LocalSolver) -> FedAvgGDA:
    """Algorithm 2, line 6: FedAvgGDA on f_i + (mu/2)||omega - omega0||^2 - (mu/2)||psi - psi0||^2.
    """
    if not config.prox:
        config = BaselineConfig(config.blocks, prox=True)
    return FedAvgGDA(config, theta0, n_clients, local_solver)


def FedSGDA(config: BaselineConfig, theta0: Tensor, n_clients: int,
            oracle: PlayerGradient, backend: str = "vectorized") -> FedAvgGDA:
    """Peng et al.'s FedSGDA (Algorithm 1, body lost in the text; spec §2): one stochastic
    gradient per client at the global point, averaged by the server. Identical to FedAvgGDA with
    M = 1 and no prox."""
    return FedAvgGDA(BaselineConfig(config.blocks, prox=False), theta0, n_clients,
                     LocalGDA(oracle, 1, backend))


ALGORITHMS = ("FedMM", "FedAvgGDA", "FedProxGDA", "FedSGDA")


def build(name: str, blocks: Sequence[Block], theta0: Tensor, oracle: PlayerGradient, *,
          local_steps: int, eta3: float = 1.0, backend: str = "vectorized") -> _Federated:
    """One of :data:`ALGORITHMS` with a :class:`LocalGDA` on ``oracle``."""
    check_choice("algorithm", name, ALGORITHMS)
    blocks = tuple(blocks)
    n = oracle.n_clients
    if name == "FedMM":
        return FedMM(FedMMConfig(blocks, eta3), theta0, n, LocalGDA(oracle, local_steps, backend))
    if name == "FedSGDA":
        return FedSGDA(BaselineConfig(blocks), theta0, n, oracle, backend)
    return FedAvgGDA(BaselineConfig(blocks, prox=name == "FedProxGDA"), theta0, n,
                     LocalGDA(oracle, local_steps, backend))
