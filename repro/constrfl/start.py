"""The starting point of Algorithms 1 and 3: ``w^0`` and the multipliers ``mu_i^0 >= 0``
(Algorithm 1's inputs; Algorithm 3's ``(w^0, mu^0)``).

``init=None`` in :class:`~repro.constrfl.proxal.FedProxAL` and
:class:`~repro.constrfl.cproxal.CentralProxAL` is :func:`paper_start`: the experiments' start of
trial 0, ``w^0`` on the unit sphere by the reference rule (docs/decisions.md#constrfl-start-point,
:func:`~repro.constrfl.problem.unit_sphere_w0`) and ``mu_i^0 = 0`` (Sec. 5.1, 5.2, App. E.2:
"mu_i^0 = (0, ..., 0)^T"). It draws no random numbers of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from repro.constrfl.problem import Problem, unit_sphere_w0
from repro.core.validation import check_shape

__all__ = ["ProxALInit", "paper_start"]


@dataclass(frozen=True, eq=False)
class ProxALInit:
    """``w`` = w^0 (shape (d,)); ``mu0`` = mu_0^0 of the server (shape (1, m_0)) and ``mus`` =
    the clients' mu_i^0, one array per client block (shape (size, m)); ``None`` is zeros.
    """

    w: np.ndarray
    mu0: np.ndarray | None = None
    mus: tuple[np.ndarray, ...] | None = None

    def resolve(self, problem: Problem) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
        """``(w^0, mu_0^0, [mu_i^0])`` as float copies checked against ``problem`` (shapes,
        no NaN, multipliers of inequality constraints >= 0), else ``ValueError`` naming the
        part.
        """
        w = problem.check_w("init.w", self.w).copy()
        if not np.all(np.isfinite(w)):
            raise ValueError("init.w must be finite")
        mu0 = (np.zeros((1, problem.server.m)) if self.mu0 is None else
               check_shape("init.mu0", np.array(self.mu0, dtype=float),
                           (1, problem.server.m), "(1, m_0), the server's constraints"))
        if self.mus is None:
            mus = [np.zeros((b.size, b.m)) for b in problem.clients]
        else:
            if len(self.mus) != len(problem.clients):
                raise ValueError(f"init.mus must hold one array per client block "
                                 f"({len(problem.clients)}), got {len(self.mus)}")
            mus = [check_shape(f"init.mus[{j}]", np.array(m, dtype=float), (b.size, b.m),
                               "(clients in the block, m), the block's constraints")
                   for j, (b, m) in enumerate(zip(problem.clients, self.mus, strict=True))]
        named = [("init.mu0", problem.server, mu0),
                 *((f"init.mus[{j}]", b, m) for j, (b, m) in enumerate(zip(
                     problem.clients, mus, strict=True)))]
        for name, block, mu in named:
            if np.any(np.isnan(mu)):
                raise ValueError(f"{name} has NaN entries")
            # mu_i^0 >= 0 for inequalities c_i(w) <= 0; free for equalities (the LCQP, E.2)
            if not block.equality and np.any(mu < 0):
                raise ValueError(f"{name} must be >= 0 (Algorithm 1's input mu_i^0 >= 0 for "
                                 "inequality constraints)")
        return w, mu0, mus


def paper_start(problem: Problem) -> ProxALInit:
    """The start of the paper's experiments, trial 0: ``unit_sphere_w0(d, 0)``, ``mu = 0``."""
    return ProxALInit(unit_sphere_w0(problem.d, 0))
