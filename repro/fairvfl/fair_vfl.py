"""Fair VFL: asynchronous gradient coordinate-descent ascent, and FedBCD (lam = 0).

Papers: [C] Alg. 1-2 (000), [J] Alg. 1-3 (001); specs/fairvfl.md §2.2-2.5. One round
``t -> t + 1`` (Gauss-Seidel order of [C](9)-(10) / [J](10)-(11), §11 A20):

1. the server broadcasts ``(z^(t), lam^(t))`` to active parties and ``nu^(t) = w(lam^(t)) o(z^(t))``
   ([J](12)) to passive parties;
2. every active party takes ``Q_k^(t)`` local steps on its stale read ([C](11) / [J](14));
   every passive party takes one step ([J] Alg. 3);
3. every party uploads ``u_k^(t+1)``; the server sets ``z^(t+1) = sum_k u_k^(t+1)``. An active
   party uploads after each of its local steps ([C] Alg. 1 line 7, [J] Alg. 2 line 8), so a
   round carries ``sum_k Q_k^(t)`` uploads; the server uses each party's last one;
4. the server's dual step ``lam^(t+1) = [lam^(t) + beta grad_lam f~_t(theta^(t+1), lam^(t))]_+``.

``Q_k^(t) = Q`` in mode ``exact`` ([C] Fig. 2) or ``~ Uniform{1..Q}`` in mode ``random``
(drawn in the order (t, k) from the generator handed in, §2.4). FedBCD ([C] ref [7], §4.1) is
the same routine with ``fair=False``: lam stays 0, so ``w = 1/n`` exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from repro.core.algorithm import run_rounds
from repro.core.validation import check_choice, check_finite, check_range, check_rows
from repro.fairvfl.messages import ActiveBroadcast, PassiveBroadcast, Upload
from repro.fairvfl.models import LinearBlock
from repro.fairvfl.parties import ActiveParty, PassiveParty, Server
from repro.fairvfl.problem import FairnessGroups, lagrangian

PAPER_ETA = 100.0  # eta_t of [C] §V-A and [J] §5.1 (the linear model's step, 1/eta = 0.01)


@dataclass(frozen=True)
class FairVFLParams:
    """Hyperparameters (§7): ``eta`` = inverse primal step, ``beta`` = dual step (§11 A19),
    ``c`` = dual regularization ``c_t`` (constant in the experiments), ``mu`` = ridge weight
    (``None`` -> 2/n, [J] §5.1), ``roles``: ``"conf"`` (all active) or ``"journal"``
    (party 0 active, the rest passive).

    ``eta=None`` (the default) means the papers' ``eta_t = 100`` ([C] §V-A, [J] §5.1) when
    every party is a :class:`~repro.fairvfl.models.LinearBlock`; with any other block
    (``MLPBlock``) :class:`FairVFL` raises ``ValueError`` and asks for an explicit ``eta``:
    [J] §5.1 prints ``eta_t = 100`` for both models, but at that step our MLP stays at the
    majority rate (specs/fairvfl.md §3.2,
    ``docs/deviations.md#fairvfl-mlp-architecture-and-step-a15``);
    the experiments use ``eta = 2`` for the MLP. Neither step is chosen silently.
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
class RoundMessages:
    """What crossed the wire in one round (returned by ``step``): one broadcast per party and
    ``Q_k^(t)`` uploads of every active party (1 of every passive party), in party order.
    """

    to_active: tuple[ActiveBroadcast, ...]
    to_passive: tuple[PassiveBroadcast, ...]
    uploads: tuple[Upload, ...]


class FairVFL:
    """Server + parties + round loop.

    Parameters
    ----------
    blocks : per-party model blocks (``LinearBlock``/``MLPBlock``) bound to ``X^k`` (train),
        every one over the same rows in the same order.
    y, s : training labels in {-1, +1} (0/1 labels raise: they are a different objective)
        and groups (True = a), numpy arrays with one entry per row; given to the server and
        the active parties only.
    params : :class:`FairVFLParams` (with an ``MLPBlock``, ``eta`` must be given).
    init_generators : per-party ``torch.Generator`` for the MLP init (ignored by the LM).
    rng : ``numpy.random.Generator`` for mode ``random``.
    groups : the :class:`~repro.fairvfl.problem.FairnessGroups` built from ``(y, s)``;
        ``None`` (every experiment) means Definition 1, ``FairnessGroups.from_labels(y, s)``.
        Given only by diagnostics that run a rejected reading of Definition 1 (a subclass
        with other ``N^s``, ``repro.fairvfl.diagnostics``); its labels must equal ``y``.

    Inputs and outputs are numpy (float64): ``thetas()``, ``test_scores``, ``state``; torch
    stays inside ``MLPBlock``. Bad inputs raise ``ValueError`` naming the argument.
    """

    @property
    def config(self) -> FairVFLParams:
        """The hyperparameters under the one name every paper's algorithm uses
        (:class:`repro.core.algorithm.Algorithm`); ``params`` is the same object.
        """
        return self.params

    def __init__(self, blocks, y, s, params: FairVFLParams, *, init_generators=None,
                 rng: np.random.Generator | None = None,
                 groups: FairnessGroups | None = None) -> None:
        self.params = params
        if groups is None:
            groups = FairnessGroups.from_labels(y, s)
        elif not (isinstance(groups, FairnessGroups)
                  and np.array_equal(groups.y, np.asarray(y, dtype=np.float64))):
            raise ValueError("groups must be a FairnessGroups built from these labels y")
        self.n = groups.n
        blocks = list(blocks)
        if not blocks:
            raise ValueError("blocks must hold at least one party's model block")
        self.eta = _primal_eta(params, blocks)
        if init_generators is not None and len(init_generators) != len(blocks):
            raise ValueError(f"init_generators must hold one generator per block "
                             f"({len(blocks)}), got {len(init_generators)}")
        self.mu = 2.0 / self.n if params.mu is None else params.mu
        if params.mode == "random" and rng is None:
            raise ValueError("mode 'random' needs rng (a numpy Generator)")
        self.rng = rng
        self.server = Server(groups, params.eps, params.beta, params.fair)
        self.parties: list[ActiveParty | PassiveParty] = []
        for k, block in enumerate(blocks):
            gen = None if init_generators is None else init_generators[k]
            theta0 = block.init(gen)
            if params.roles == "conf" or k == 0:
                self.parties.append(ActiveParty(k, block, theta0, self.mu, groups))
            else:
                self.parties.append(PassiveParty(k, block, theta0, self.mu))
            check_rows(f"blocks[{k}]", len(self.parties[-1].u), self.n, "y",
                       "every party's block must hold the same samples, in the order of y")
        self.server.receive([p.upload() for p in self.parties])  # initial upload (§2.2)
        self.state = RoundState(loss=self.objective(), d=groups.deo_signed(self.server.z))

    # ---------------------------------------------------------------- observation (not sent)
    def objective(self) -> float:
        """``L(theta) = mean_i l(z_i, y_i) + (mu/2) sum_k ||theta_k||^2``, [C](1) = [J](1)."""
        reg = sum(p.block.sq_norm(p.theta) for p in self.parties)
        return self.server.groups.mean_loss(self.server.z) + 0.5 * self.mu * reg

    def lagrangian(self, lam=None) -> float:
        lam = self.server.lam if lam is None else lam
        return lagrangian(self.objective(), self.state.d, lam, self.params.eps)

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
        """``Q_k^(t)`` for every party (passive parties: 1), §2.4."""
        out = []
        for p in self.parties:
            if isinstance(p, PassiveParty):
                out.append(1)
            elif self.params.mode == "exact":
                out.append(self.params.Q)
            else:
                out.append(int(self.rng.integers(1, self.params.Q + 1)))
        return out

    def step(self, *, eta_t: float | None = None, c_t: float | None = None) -> RoundMessages:
        """One communication round; ``eta_t``/``c_t`` override the constants (theory runs)."""
        step = 1.0 / (self.eta if eta_t is None else eta_t)
        c_t = self.params.c if c_t is None else c_t
        q = self.local_steps()
        to_active, to_passive, uploads = [], [], []
        # One broadcast per role per round: every party of a role gets the same payload.
        active_msg = self.server.broadcast_active()
        passive_msg = (self.server.broadcast_passive()
                       if any(isinstance(p, PassiveParty) for p in self.parties) else None)
        for p, q_k in zip(self.parties, q, strict=True):
            if isinstance(p, ActiveParty):
                to_active.append(active_msg)
                uploads.extend(p.local_update(active_msg, q_k, step))
            else:
                to_passive.append(passive_msg)
                uploads.append(p.local_update(passive_msg, step))
        self.server.receive(uploads)
        lam_prev = self.server.lam.copy()
        d = self.server.dual_step(c_t)
        t = self.state.t + 1
        self.state = RoundState(
            t=t, lam=self.server.lam.copy(), lam_prev=lam_prev, loss=self.objective(), d=d,
            kappa=int(sum(q)), increments_sq=float(sum(p.last_increments_sq
                                                       for p in self.parties)))
        check_finite(t, loss=self.state.loss, D=d, lam=self.state.lam)
        return RoundMessages(tuple(to_active), tuple(to_passive), tuple(uploads))

    def run(self, rounds: int, callback=None) -> RoundState:
        """``rounds`` calls of ``step``; ``callback(state)`` after each (logging)."""
        return run_rounds(self, rounds, callback)


def _primal_eta(params: FairVFLParams, blocks: list) -> float:
    """``params.eta``, or the papers' 100 when every block is linear; see FairVFLParams."""
    if params.eta is not None:
        return float(params.eta)
    other = [k for k, b in enumerate(blocks) if not isinstance(b, LinearBlock)]
    if not other:
        return PAPER_ETA
    name = type(blocks[other[0]]).__name__
    raise ValueError(
        f"eta must be given for blocks[{other[0]}] ({name}): [J] §5.1's eta_t = 100 is the "
        f"linear model's step and leaves an MLPBlock at the majority rate (specs/fairvfl.md §3.2, "
        f"docs/deviations.md#fairvfl-mlp-architecture-and-step-a15); the experiments use "
        f"FairVFLParams(eta=2.0)")
