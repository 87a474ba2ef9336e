"""Paper 004, FedMM: saddle-point optimization for federated adversarial domain adaptation.

``algorithms`` (FedMM, FedAvgGDA, FedProxGDA, FedSGDA), ``models`` and ``adaptation`` (networks
and DANN/CDAN/MDD losses), ``mnistm``/``clients``/``problem`` (data, allocation, player
gradients), ``training`` (presets, round loop, checkpoints), ``office``/``mobilenetv2``
(Office-31 path), ``experiments`` (Figs. 2, 4, 5 and Tables 1-2), ``bench``.

Public names (imported on first use, see :mod:`repro.core.exports`)::

    from repro.fedmm import FedMM, FedAvgGDA, FedProxGDA, FedSGDA, Block, LocalGDA

A user's own saddle problem is a :class:`PlayerGradient`: an object with ``n_clients``,
``batched(theta, t, m)`` (all clients' player gradients ``[grad_omega f_i; -grad_psi f_i]``,
shape (N, D)) and ``client(i, theta_i, t, m)`` (one client). Example: ``docs/usage.md``.
"""

from repro.core.exports import lazy_exports

_EXPORTS = {
    # Algorithm 3 and the baselines (Algorithm 2, FedSGDA), their hyperparameters and state
    "FedMM": "algorithms", "FedMMConfig": "algorithms",
    "FedAvgGDA": "algorithms", "FedProxGDA": "algorithms", "FedSGDA": "algorithms",
    "BaselineConfig": "algorithms", "Block": "algorithms", "LocalGDA": "algorithms",
    "FedState": "algorithms", "build": "algorithms", "ALGORITHMS": "algorithms",
    # the interface a user implements
    "PlayerGradient": "algorithms",
    # the messages of the protocol
    "Broadcast": "algorithms", "Upload": "algorithms", "RoundMessages": "algorithms",
    # the paper's domain-adaptation problem (MNIST -> MNIST-M, Office-31 heads)
    "DAProblem": "problem", "MnistNet": "models", "OfficeHeads": "models",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
