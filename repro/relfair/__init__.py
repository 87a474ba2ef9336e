"""Paper 002: Federated Learning with Relative Fairness (Scaff-PD-IA and five baselines).

Modules: ``ambiguity`` (Lambda_phi = P(w) and the dual step), ``models`` (the stacked MLP),
``problem`` (clients' data; minibatch and dropout draws), ``data`` (MNIST / CIFAR-10 clients),
``engine`` (the client-update engine: loop oracle and vectorized path), ``messages`` (what
crosses the wire), ``algorithms`` (the six methods), ``training`` (one Table 1 run),
``penguins`` and ``geometry`` (Figures 3, 1 and 2), ``experiments`` (registration), ``bench``.
Spec: ``shared/specs/relfair.md``.

Public names (imported on first use, see :mod:`repro.core.exports`)::

    from repro.relfair import ScaffPDIA, FedAvg, Scaffold, SAFL, DRFA, ScaffPD

``StochasticAFL`` is :class:`SAFL`. ``Scaffold`` and ``ScaffPD`` are :class:`ScaffPDIA` with
the singleton ``{1/n}`` and with ``Delta_alpha`` (``phi = 0``) as ambiguity set (App. J.2);
they build the paper's configuration through :func:`make_algorithm`. A user's own data enter
through :func:`split_clients` (arrays and a partition) and :class:`ClientEngine`. Example:
``docs/usage.md``.
"""

from repro.core.exports import lazy_exports

_EXPORTS = {
    # the six methods and their hyperparameters
    "ScaffPDIA": "algorithms", "ScaffPDIAHyper": "algorithms",
    "FedAvg": "algorithms", "FedAvgHyper": "algorithms",
    "SAFL": "algorithms", "StochasticAFL": "algorithms:SAFL", "SAFLHyper": "algorithms",
    "DRFA": "algorithms", "DRFAHyper": "algorithms",
    "TrainSetup": "algorithms", "FLState": "algorithms",
    "make_algorithm": "algorithms", "METHODS": "algorithms",
    # the ambiguity set Lambda_phi and the dual step
    "RelativeAmbiguitySet": "ambiguity", "dual_step": "ambiguity",
    # a user's own clients: data, engine, model
    "ClientData": "problem", "split_clients": "problem", "ClientEngine": "engine",
    "init_params": "models", "forward": "models",
}
__all__ = sorted([*_EXPORTS, "ScaffPD", "Scaffold"])
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


def Scaffold(engine, theta0, generator, **options):
    """Scaffold: :class:`ScaffPDIA` with Lambda = {1/n} (alpha = 1, phi = 0; App. J.2).

    ``options`` are those of :func:`make_algorithm` (``local_steps``, ``setup``, ``tau``).
    """
    from repro.relfair.algorithms import make_algorithm

    return make_algorithm("Scaffold", engine, theta0, generator, **options)


def ScaffPD(engine, theta0, generator, **options):
    """Scaff-PD (Yu et al. 2023): :class:`ScaffPDIA` with Lambda = Delta_alpha (phi = 0).

    ``options`` are those of :func:`make_algorithm` (``alpha``, ``local_steps``, ``setup``,
    ``tau``).
    """
    from repro.relfair.algorithms import make_algorithm

    return make_algorithm("Scaff-PD", engine, theta0, generator, **options)
