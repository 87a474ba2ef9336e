"""Paper 002: Federated Learning with Relative Fairness (Scaff-PD-IA and five baselines).

Modules: ``problem`` (the problem (8): Lambda_phi = P(w) and the dual step), ``clients``
(clients' data; minibatch and dropout draws), ``models`` (the stacked MLP), ``data`` (MNIST /
CIFAR-10 clients), ``client_batch`` (the client updates of all clients at once: loop oracle
and vectorized path), ``messages`` (what crosses the wire), ``federated`` (what the methods
share: ``ClientProblem``, ``TrainSetup``, the local work), one module per algorithm
(``scaff_pd_ia``, ``fedavg``, ``safl``, ``drfa``), ``methods`` (a package, one module per
method of the paper: ``METHODS``, ``build``), ``metrics`` (Table 1's and Fig. 4's
client metrics), ``penguins`` and ``geometry`` (Figures 3, 1 and 2), ``instances`` (small
instances and ground truth for tests, theory and benchmarks), ``experiments`` (one module per
paper item). Decisions: docs/decisions.md#relfair.

Public names (imported on first use, see :mod:`repro.core.exports`)::

    from repro.relfair import ScaffPDIA, FedAvg, Scaffold, SAFL, DRFA, ScaffPD

Every algorithm is ``Alg(problem, config, *, init=None, rng=None, backend="vectorized")``
(:mod:`repro.core.algorithm`, :mod:`repro.relfair.federated`). ``StochasticAFL`` is
:class:`SAFL`. ``Scaffold`` and ``ScaffPD`` are :class:`ScaffPDIA` with the singleton ``{1/n}``
and with ``Delta_alpha`` (``phi = 0``) as ambiguity set (App. J.2); they build the paper's
configuration through :func:`repro.relfair.methods.build` (also exported as
``make_algorithm``). A user's own data enter through :func:`split_clients` (arrays and a
partition) and :class:`ClientProblem`. Example: ``docs/usage.md``.
"""
from repro.core.exports import lazy_exports

_EXPORTS = {
    # the six methods and their hyperparameters
    "ScaffPDIA": "scaff_pd_ia", "ScaffPDIAConfig": "scaff_pd_ia",
    "FedAvg": "fedavg", "FedAvgConfig": "fedavg",
    "SAFL": "safl", "StochasticAFL": "safl:SAFL", "SAFLConfig": "safl",
    "DRFA": "drfa", "DRFAConfig": "drfa",
    "ClientProblem": "federated", "TrainSetup": "federated", "FLState": "federated",
    "make_algorithm": "methods:build", "METHODS": "methods",
    # the ambiguity set Lambda_phi and the dual step
    "RelativeAmbiguitySet": "problem", "dual_step": "problem",
    # a user's own clients: data, engine, model
    "ClientData": "clients", "split_clients": "clients", "ClientEngine": "client_batch",
    "init_params": "models", "forward": "models",
}
__all__ = sorted([*_EXPORTS, "ScaffPD", "Scaffold"])
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


def Scaffold(problem, **kwargs):
    """Scaffold: :class:`ScaffPDIA` with Lambda = {1/n} (alpha = 1, phi = 0; App. J.2).

    ``kwargs``: ``init``, ``rng``, ``backend`` and the options ``local_steps``, ``local_work``,
    ``tau`` (:mod:`repro.relfair.methods`).
    """
    from repro.relfair.methods import build

    return build("Scaffold", problem, **kwargs)


def ScaffPD(problem, **kwargs):
    """Scaff-PD (Yu et al. 2023): :class:`ScaffPDIA` with Lambda = Delta_alpha (phi = 0).

    ``kwargs``: ``init``, ``rng``, ``backend`` and the options ``alpha``, ``local_steps``,
    ``local_work``, ``tau`` (:mod:`repro.relfair.methods`).
    """
    from repro.relfair.methods import build

    return build("Scaff-PD", problem, **kwargs)
