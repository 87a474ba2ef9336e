"""FedMM, Algorithm 3 of paper 004 (eqs. (11)-(16)), per coordinate block b with step
``eta_b``, penalty ``mu_b``, gradient multiplier ``s_b`` and dual ``d_b`` (``d = lambda`` on
omega, ``d = beta`` on psi)::

    theta <- theta - eta_b [ s_b G_i(theta) + mu_b (theta - theta0^t) + d_i^t ]     (11)/(12)
    d_i^{t+1} = d_i^t + mu_b (theta_i^{t+1} - theta0^t)                              (13)/(14)
    theta_i^{t+} = theta_i^{t+1} + (eta3^t / mu_b) d_i^{t+1}                          (15)
    theta0^{t+1} = (1/N) sum_i theta_i^{t+}                                           (16)

The paper's "dual descent/ascent" labels are swapped (docs/decisions.md#fedmm-algorithm) but the
formulas are these. Alg. 3 line 19 prints ``psi_i^{t+1}`` for the server's psi average; (16) (with
``psi_i^{t+}``) is used, as in the authors' code.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from repro.core.validation import check_range
from repro.fedmm.blocks import Block, check_blocks
from repro.fedmm.federated import Federated, FedState
from repro.fedmm.local_gda import check_local_steps
from repro.fedmm.messages import Broadcast, RoundMessages, Upload

Tensor = torch.Tensor


@dataclass(frozen=True)
class FedMMConfig:
    """FedMM hyperparameters: the blocks (eta_b, mu_b, s_b), the local GDA steps M of
    (11)-(12) and the eta3 base of (15).

    ``local_steps`` M: 20 in every experiment of Sec. 6 (Fig. 4 also 25). ``eta3`` is the
    per-round base c with eta_3^t = c**t (t = 0, 1, ...; docs/decisions.md#fedmm-eta3); the paper
    uses 1/1.0005 (DANN), 1/1.0002 (CDAN), 1/1.0001 (MDD). ``eta3_constant`` uses c in every round
    instead (the theory checks' "constant eta3", docs/decisions.md#fedmm-theory-checks).
    """

    blocks: tuple[Block, ...]
    local_steps: int = 20
    eta3: float = 1.0
    eta3_constant: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "blocks", check_blocks(self.blocks))
        check_local_steps(self.local_steps)
        check_range("eta3", self.eta3, low=0, high=1, low_open=True)
        for b in self.blocks:
            check_range(f"{b.name}.mu (FedMM divides by it in (15))", b.mu, low=0,
                        low_open=True)


class FedMM(Federated):
    """Algorithm 3 (eqs. (11)-(16)): local GDA on the augmented Lagrangians (6), dual steps
    (13)-(14) kept on the clients, the eta3-weighted upload (15) and the average (16).

    ``FedMM(problem, config, *, init=None, rng=None, backend="vectorized",
    local_solver=None)`` (:class:`repro.fedmm.federated.Federated`): the clients' local solve
    is ``config.local_steps`` steps of :class:`LocalGDA` on ``problem``, or, for the theory
    checks, ``local_solver`` (an exact solver of the local saddle problem). Duals start at zero
    (paper, "Hyper-parameters"). ``init`` may be a torch tensor or a numpy array
    (:func:`as_parameter_vector`); the state, and what :meth:`run` returns, hold torch tensors
    (``state.theta0.numpy()`` for numpy).
    """

    def __init__(self, problem, config: FedMMConfig, *, init=None, rng=None,
                 backend: str = "vectorized", local_solver=None) -> None:
        super().__init__(problem, config, init=init, rng=rng, backend=backend,
                         local_solver=local_solver)
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
        return RoundMessages(t + 1, (down,), uploads)
