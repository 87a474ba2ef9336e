"""Fair VFL: asynchronous gradient coordinate-descent ascent, and FedBCD (lam = 0).

Papers: [C] Alg. 1-2 (000), [J] Alg. 1-3 (001); docs/decisions.md#fairvfl-one-run. One round
``t -> t + 1`` (Gauss-Seidel order of [C](9)-(10) / [J](10)-(11), docs/decisions.md#fairvfl-order):

1. the server broadcasts ``(z^(t), lam^(t))`` to active parties and ``nu^(t) = w(lam^(t)) o(z^(t))``
   ([J](12)) to passive parties;
2. every active party takes ``Q_k^(t)`` local steps on its stale read ([C](11) / [J](14));
   every passive party takes one step ([J] Alg. 3);
3. every party uploads ``u_k^(t+1)``; the server sets ``z^(t+1) = sum_k u_k^(t+1)``. An active
   party uploads after each of its local steps ([C] Alg. 1 line 7, [J] Alg. 2 line 8), so a
   round carries ``sum_k Q_k^(t)`` uploads; the server uses each party's last one;
4. the server's dual step ``lam^(t+1) = [lam^(t) + beta grad_lam f~_t(theta^(t+1), lam^(t))]_+``.

``Q_k^(t) = Q`` in mode ``exact`` ([C] Fig. 2) or ``~ Uniform{1..Q}`` in mode ``random``
(drawn in the order (t, k) from ``numpy.random.default_rng(rng)``,
docs/decisions.md#fairvfl-special-cases). FedBCD ([C] ref [7], docs/decisions.md#fairvfl-fedbcd,
:mod:`repro.fairvfl.fedbcd`) is the same routine with ``fair=False``: lam stays 0, so ``w = 1/n``
exactly.

The class follows :mod:`repro.core.algorithm`: ``FairVFL(problem, config, *, init, rng,
backend)``, ``step() -> VFLRoundMessages``, ``run(rounds, stop=, callback=)``.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from repro.core.algorithm import RoundMessages, run_rounds
from repro.core.validation import check_choice, check_finite, check_range, check_rows
from repro.fairvfl.messages import ActiveBroadcast, PassiveBroadcast
from repro.fairvfl.models import LinearBlock
from repro.fairvfl.parties import ActiveParty, PassiveParty, Server
from repro.fairvfl.problem import VFLProblem, lagrangian

PAPER_ETA = 100.0  # eta_t of [C] §V-A and [J] §5.1 (the linear model's step, 1/eta = 0.01)
BACKENDS = ("vectorized", "loop")


@dataclass(frozen=True)
class FairVFLConfig:
    """Hyperparameters (docs/decisions.md#fairvfl-hyperparameters): ``eta`` = inverse primal step,
    ``beta`` = dual step (docs/decisions.md#fairvfl-beta-step), ``c`` = dual regularization ``c_t``
    (constant in the experiments), ``mu`` = ridge weight (``None`` -> 2/n, [J] §5.1), ``roles``:
    ``"conf"`` (all active) or ``"journal"`` (party 0 active, the rest passive), ``fair=False``:
    FedBCD (lam stays 0).

    ``eta=None`` (the default) means the papers' ``eta_t = 100`` ([C] §V-A, [J] §5.1) when
    every party is a :class:`~repro.fairvfl.models.LinearBlock`; with any other block
    (``MLPBlock``) :class:`FairVFL` raises ``ValueError`` and asks for an explicit ``eta``:
    [J] §5.1 prints ``eta_t = 100`` for both models, but at that step our MLP stays at the
    majority rate (docs/decisions.md#fairvfl-mlp,
    ``docs/deviations.md#fairvfl-mlp-architecture-and-step``);
    the experiments use ``eta = 2`` for the MLP. Neither step is chosen silently.

    ``eta_schedule`` / ``c_schedule``: the round-dependent ``eta_t`` and ``c_t`` of Theorem 2
    ([C](12), [J](13); the theory checks, ``theory/fairvfl/rate.py``), each a function of the
    round ``t`` being taken (1, 2, ...); ``None`` keeps the constants ``eta`` and ``c``. A
    schedule replaces its constant, so ``eta`` and ``eta_schedule`` are not given together.
    """

    eps: float = 0.01
    eta: float | None = None
    beta: float = 0.1
    c: float = 1e-3
    Q: int = 1
    mode: str = "exact"
    roles: str = "conf"
    fair: bool = True
    mu: float | None = None
    eta_schedule: Callable[[int], float] | None = None
    c_schedule: Callable[[int], float] | None = None

    def __post_init__(self) -> None:
        check_range("eps", self.eps, low=0)
        if self.eta is not None:
            check_range("eta", self.eta, low=0, low_open=True)
        check_range("beta", self.beta, low=0, low_open=True)
        check_range("c", self.c, low=0)
        check_range("Q", self.Q, low=1)
        if not isinstance(self.Q, int):
            raise ValueError(f"Q must be an integer >= 1, got {self.Q!r}")
        check_choice("mode", self.mode, ("exact", "random"))
        check_choice("roles", self.roles, ("conf", "journal"))
        if self.mu is not None:
            check_range("mu", self.mu, low=0)
        for name in ("eta_schedule", "c_schedule"):
            value = getattr(self, name)
            if value is not None and not callable(value):
                raise ValueError(f"{name} must be a function of the round t (or None), got "
                                 f"{value!r}")
        if self.eta is not None and self.eta_schedule is not None:
            raise ValueError("eta and eta_schedule are both given: the schedule replaces the "
                             "constant eta; give one of them")


@dataclass
class RoundState:
    """Everything observable after round ``t`` (the parties keep their own ``theta_k``)."""

    t: int = 0
    lam: np.ndarray = field(default_factory=lambda: np.zeros(2))
    lam_prev: np.ndarray = field(default_factory=lambda: np.zeros(2))
    loss: float = np.nan  # L(theta^(t)) with the regularizer, objective (1)
    d: float = np.nan  # D(theta^(t)) on the training split
    kappa: int = 0  # sum_k Q_k^(t-1) of the last round
    increments_sq: float = 0.0  # sum_tau ||theta^(t-1,tau+1) - theta^(t-1,tau)||^2


@dataclass(frozen=True)
class VFLRoundMessages(RoundMessages):
    """What crossed the wire in round ``round`` (returned by ``step``): ``downlink``, one
    broadcast per party in party order (an :class:`ActiveBroadcast` to an active party, a
    :class:`PassiveBroadcast` to a passive one); ``uplink``, the ``Q_k^(t)`` uploads of every
    active party (1 of every passive party), in party order.
    """

    @property
    def to_active(self) -> tuple[ActiveBroadcast, ...]:
        """The broadcasts to the active parties, in party order."""
        return tuple(m for m in self.downlink if isinstance(m, ActiveBroadcast))

    @property
    def to_passive(self) -> tuple[PassiveBroadcast, ...]:
        """The broadcasts to the passive parties ([J] only), in party order."""
        return tuple(m for m in self.downlink if isinstance(m, PassiveBroadcast))


def init_generator(seed: int, party: int):
    """The ``torch.Generator`` of party ``party``'s initial model in a run seeded ``seed``:
    seeded with ``SeedSequence([seed, party])``, so it depends on the run and the party only
    (FedBCD and every FairVFL(eps) of a run start from the same network, claims J1b/J1d,
    docs/decisions.md#fairvfl-figures).
    """
    import torch

    return torch.Generator().manual_seed(
        int(np.random.SeedSequence([int(seed), int(party)]).generate_state(1)[0]))


class FairVFL:
    """Server + parties + round loop, as :mod:`repro.core.algorithm` specifies.

    Parameters
    ----------
    problem : :class:`~repro.fairvfl.problem.VFLProblem`: the party blocks, ``y``, ``s`` and
        their fairness groups (0/1 labels raise: they are a different objective).
    config : :class:`FairVFLConfig` (with an ``MLPBlock``, ``eta`` must be given).
    init : the parties' starting parameters, one per block in the block's own type (a numpy
        vector for ``LinearBlock``, a flat torch vector for ``MLPBlock``); ``None`` is
        ``block.init(generator)`` (zeros for the LM, [C] §V-A).
    rng : the run's seed, an integer >= 0 (``None``: 0). Party ``k``'s init generator is
        :func:`init_generator` ``(rng, k)`` (blocks with ``random_init = False``, as
        ``LinearBlock``, draw nothing); mode ``random`` draws ``Q_k^(t)`` from
        ``numpy.random.default_rng(rng)``.
    backend : ``"vectorized"`` (default) or ``"loop"``: the parties' gradients by
        ``block.vjp`` or by the per-sample ``block.vjp_loop``, the equality oracle.

    Inputs and outputs are numpy (float64): ``thetas()``, ``test_scores``, ``state``; torch
    stays inside ``MLPBlock``. Bad inputs raise ``ValueError`` naming the argument.
    """

    def __init__(self, problem: VFLProblem, config: FairVFLConfig, *, init=None,
                 rng: int | None = None, backend: str = "vectorized") -> None:
        if not isinstance(problem, VFLProblem):
            raise ValueError(f"problem must be a VFLProblem(blocks, y, s), got "
                             f"{type(problem).__name__}")
        if not isinstance(config, FairVFLConfig):
            raise ValueError(f"config must be a FairVFLConfig, got {type(config).__name__}")
        check_choice("backend", backend, BACKENDS)
        seed = 0 if rng is None else rng
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
            raise ValueError(f"rng must be the run's seed, an integer >= 0 (or None: 0), got "
                             f"{rng!r}")
        self.config = config
        self.problem = problem
        self.backend = backend
        groups = problem.groups
        self.n = groups.n
        blocks = list(problem.blocks)
        self.eta = _primal_eta(config, blocks)
        if init is not None:
            init = list(init)
            if len(init) != len(blocks):
                raise ValueError(f"init must hold one starting point per block ({len(blocks)}),"
                                 f" got {len(init)}")
        self.mu = 2.0 / self.n if config.mu is None else config.mu
        self.rng = np.random.default_rng(int(seed))  # Q_k^(t) of mode ``random``
        self.server = Server(groups, config.eps, config.beta, config.fair)
        self.parties: list[ActiveParty | PassiveParty] = []
        for k, block in enumerate(blocks):
            if backend == "loop" and not hasattr(block, "vjp_loop"):
                raise ValueError(f"backend 'loop' needs blocks[{k}].vjp_loop "
                                 f"({type(block).__name__} has none); use 'vectorized'")
            if init is not None:
                theta0 = _starting_point(k, block, init[k])
            else:
                gen = init_generator(seed, k) if getattr(block, "random_init", True) else None
                theta0 = block.init(gen)
            if config.roles == "conf" or k == 0:
                party = ActiveParty(k, block, theta0, self.mu, groups, loop=backend == "loop")
            else:
                party = PassiveParty(k, block, theta0, self.mu, loop=backend == "loop")
            self.parties.append(party)
            check_rows(f"blocks[{k}]", len(party.u), self.n, "y",
                       "every party's block must hold the same samples, in the order of y")
        self.server.receive([p.upload() for p in self.parties])  # initial upload
        self.state = RoundState(loss=self.objective(), d=groups.deo_signed(self.server.z))

    # ---------------------------------------------------------------- observation (not sent)
    def objective(self) -> float:
        """``L(theta) = mean_i l(z_i, y_i) + (mu/2) sum_k ||theta_k||^2``, [C](1) = [J](1)."""
        reg = sum(p.block.sq_norm(p.theta) for p in self.parties)
        return self.server.groups.mean_loss(self.server.z) + 0.5 * self.mu * reg

    def lagrangian(self, lam=None) -> float:
        lam = self.server.lam if lam is None else lam
        return lagrangian(self.objective(), self.state.d, lam, self.config.eps)

    def thetas(self) -> list[np.ndarray]:
        return [p.block.to_numpy(p.theta) for p in self.parties]

    def test_scores(self, X_test_blocks) -> np.ndarray:
        """Scores ``z = sum_k g_k(theta_k; X_test^k)`` of new rows (one matrix per party, in
        the parties' order, with the columns each party was trained on).
        """
        X_test_blocks = list(X_test_blocks)
        if len(X_test_blocks) != len(self.parties):
            raise ValueError(f"X_test_blocks must hold one matrix per party "
                             f"({len(self.parties)}), got {len(X_test_blocks)}")
        for k, (p, X) in enumerate(zip(self.parties, X_test_blocks, strict=True)):
            shape = np.shape(X)
            if len(shape) != 2:
                raise ValueError(f"X_test_blocks[{k}] must be two-dimensional, got shape "
                                 f"{shape}")
            check_rows(f"X_test_blocks[{k}]", shape[0], np.shape(X_test_blocks[0])[0],
                       "X_test_blocks[0]")
            cols = getattr(p.block, "X", None)
            if cols is not None and shape[1] != cols.shape[1]:
                raise ValueError(f"X_test_blocks[{k}] has {shape[1]} columns, party {k} has "
                                 f"{cols.shape[1]}")
        return sum(p.test_contribution(X) for p, X in zip(self.parties, X_test_blocks,
                                                          strict=True))

    # ---------------------------------------------------------------- one round
    def local_steps(self) -> list[int]:
        """``Q_k^(t)`` for every party (passive parties: 1),
        docs/decisions.md#fairvfl-special-cases.
        """
        out = []
        for p in self.parties:
            if isinstance(p, PassiveParty):
                out.append(1)
            elif self.config.mode == "exact":
                out.append(self.config.Q)
            else:
                out.append(int(self.rng.integers(1, self.config.Q + 1)))
        return out

    def step(self) -> VFLRoundMessages:
        """One communication round ``t -> t + 1`` (steps 1-4 of the module docstring), with
        ``eta_t`` and ``c_t`` from the config (constants, or its schedules at round ``t + 1``).
        """
        t = self.state.t + 1
        cfg = self.config
        step = 1.0 / (self.eta if cfg.eta_schedule is None else cfg.eta_schedule(t))
        c_t = cfg.c if cfg.c_schedule is None else cfg.c_schedule(t)
        q = self.local_steps()
        downlink, uploads = [], []
        # One broadcast per role per round: every party of a role gets the same payload.
        active_msg = self.server.broadcast_active()
        passive_msg = (self.server.broadcast_passive()
                       if any(isinstance(p, PassiveParty) for p in self.parties) else None)
        for p, q_k in zip(self.parties, q, strict=True):
            if isinstance(p, ActiveParty):
                downlink.append(active_msg)
                uploads.extend(p.local_update(active_msg, q_k, step))
            else:
                downlink.append(passive_msg)
                uploads.append(p.local_update(passive_msg, step))
        self.server.receive(uploads)
        lam_prev = self.server.lam.copy()
        d = self.server.dual_step(c_t)
        self.state = RoundState(
            t=t, lam=self.server.lam.copy(), lam_prev=lam_prev, loss=self.objective(), d=d,
            kappa=int(sum(q)), increments_sq=float(sum(p.last_increments_sq
                                                       for p in self.parties)))
        check_finite(t, loss=self.state.loss, D=d, lam=self.state.lam)
        return VFLRoundMessages(t, tuple(downlink), tuple(uploads))

    def run(self, rounds: int | None = None, *, stop=None, callback=None) -> RoundState:
        """``rounds`` rounds, or until ``stop(state)`` holds (:func:`repro.core.algorithm.
        run_rounds`; Fair VFL has no stopping rule of its own); ``callback(round, state,
        messages)`` after each round (logging).
        """
        return run_rounds(self, rounds, stop=stop, callback=callback)


def _starting_point(k: int, block, theta):
    """``init[k]`` for ``blocks[k]``: a ``LinearBlock``'s as a float64 copy of its length."""
    if isinstance(block, LinearBlock):
        theta = np.array(theta, dtype=np.float64)
        if theta.shape != (block.dim,):
            raise ValueError(f"init[{k}] must be a vector of party {k}'s {block.dim} columns, "
                             f"got shape {theta.shape}")
    return theta


def _primal_eta(config: FairVFLConfig, blocks: list) -> float | None:
    """``config.eta``, or the papers' 100 when every block is linear; see FairVFLConfig.
    ``None`` when ``config.eta_schedule`` gives ``eta_t``.
    """
    if config.eta is not None:
        return float(config.eta)
    if config.eta_schedule is not None:
        return None
    other = [k for k, b in enumerate(blocks) if not isinstance(b, LinearBlock)]
    if not other:
        return PAPER_ETA
    name = type(blocks[other[0]]).__name__
    raise ValueError(
        f"eta must be given for blocks[{other[0]}] ({name}): [J] §5.1's eta_t = 100 is the "
        f"linear model's step and leaves an MLPBlock at the majority rate "
        f"(docs/decisions.md#fairvfl-mlp, "
        f"docs/deviations.md#fairvfl-mlp-architecture-and-step); the experiments use "
        f"FairVFLConfig(eta=2.0)")
