"""Algorithm 1 as an inexact proximal point method (PPA), as performance-estimation problems.

App. A writes Algorithm 1 as the PPA ``z^{k+1} ≈ J(z^k)``, ``J = (I + beta T)^{-1}``, on the
maximally monotone KKT operator T of (33)-(34), ``z = (w, mu)``. The class of Lemmas A.2-A.3:
T maximally monotone with a zero ``z*`` (PEPit's ``MonotoneOperator``, whose interpolation
conditions are monotonicity between every pair of points). The inexactness model of Lemma
A.3, with Lemma A.1 supplying it: ``||z^{k+1} - J(z^k)|| <= e_k``, ``e_k = beta sqrt(d) tau_k``
(the subproblem's stop (10) is an infinity-norm bound ``tau_k``: ``sqrt(d) tau_k`` in the
Euclidean norm).

* :func:`firm_pep` — (42): ``||z - J z||^2 + ||J z - z*||^2`` with ``||z - z*||^2 <= 1``.
* :func:`ppa_min_step_pep` — Lemma A.3's measure ``min_{K <= k <= 2K} ||z^{k+1} - z^k||^2``
  (the PEP's objective is the minimum of those 2K+1 metrics) with ``||z^0 - z*|| <= D`` and the
  errors ``e_0, ..., e_{2K}``.
* :func:`ppa_last_step_pep` — exact PPA, ``||z^N - z^{N-1}||^2`` after N steps with
  ``||z^0 - z*|| <= 1``, whose known tight value is ``(1 - 1/N)^{N-1} / N`` (a check of the
  formulation).
"""

from __future__ import annotations

from theory.core.pep import PEPSolution, solve_pep

__all__ = ["firm_pep", "ppa_last_step_closed_form", "ppa_last_step_pep", "ppa_min_step_pep"]


def _setup(beta: float):
    from PEPit import PEP
    from PEPit.operators import MonotoneOperator

    pb = PEP()
    T = pb.declare_function(MonotoneOperator)
    zs = T.stationary_point()
    return pb, T, zs


def _resolvent(z, T, beta: float):
    from PEPit.primitive_steps import proximal_step

    return proximal_step(z, T, beta)[0]


def firm_pep(beta: float = 1.0) -> PEPSolution:
    """Worst ``||z - Jz||^2 + ||Jz - z*||^2`` over monotone T with ``||z - z*||^2 <= 1``."""
    pb, T, zs = _setup(beta)
    z = pb.set_initial_point()
    pb.set_initial_condition((z - zs) ** 2 <= 1)
    jz = _resolvent(z, T, beta)
    pb.set_performance_metric((z - jz) ** 2 + (jz - zs) ** 2)
    return solve_pep(pb)


def ppa_min_step_pep(K: int, D: float, errors, beta: float = 1.0) -> PEPSolution:
    """Worst ``min_{K <= k <= 2K} ||z^{k+1} - z^k||^2`` of the inexact PPA with
    ``||z^0 - z*|| <= D`` and ``||z^{k+1} - J(z^k)|| <= errors[k]``, k = 0..2K.
    """
    if len(errors) < 2 * K + 1:
        raise ValueError(f"need 2K+1 = {2 * K + 1} error bounds, got {len(errors)}")
    pb, T, zs = _setup(beta)
    z = pb.set_initial_point()
    pb.set_initial_condition((z - zs) ** 2 <= D ** 2)
    iterates = [z]
    for k in range(2 * K + 1):
        from PEPit import Point

        err = Point()
        pb.add_constraint(err ** 2 <= float(errors[k]) ** 2)
        iterates.append(_resolvent(iterates[-1], T, beta) + err)
    for k in range(K, 2 * K + 1):
        pb.set_performance_metric((iterates[k + 1] - iterates[k]) ** 2)
    return solve_pep(pb)


def ppa_last_step_pep(N: int, beta: float = 1.0) -> PEPSolution:
    """Worst ``||z^N - z^{N-1}||^2`` of N exact PPA steps with ``||z^0 - z*||^2 <= 1``."""
    pb, T, zs = _setup(beta)
    z = pb.set_initial_point()
    pb.set_initial_condition((z - zs) ** 2 <= 1)
    prev = z
    for _ in range(N):
        prev, z = z, _resolvent(z, T, beta)
    pb.set_performance_metric((z - prev) ** 2)
    return solve_pep(pb)


def ppa_last_step_closed_form(N: int) -> float:
    """``(1 - 1/N)^{N-1} / N``: the tight value of :func:`ppa_last_step_pep`."""
    return (1.0 - 1.0 / N) ** (N - 1) / N
