"""Paper 004, FedMM: saddle-point optimization for federated adversarial domain adaptation.

``problem`` (the saddle problem through the clients' player gradients, and its DA instance),
``blocks``/``messages``/``local_gda``/``federated`` (the parameter blocks, the protocol's
messages, the clients' local GDA, the shared round), one module per algorithm (``fedmm``:
Algorithm 3; ``fedavg_gda``, ``fedprox_gda``: Algorithm 2; ``fedsgda``), ``methods/`` (one
module per method, collected by name), ``models``/``adaptation`` (networks and DANN/CDAN/MDD
losses), ``data``/
``mobilenetv2``/``clients`` (MNIST-M and the Office-31 features, client allocation),
``training`` (presets, round loop, checkpoints), ``instances`` (small saddle problems for tests,
theory and benchmarks), ``experiments/`` (Figs. 2, 4, 5 and Tables 1-2).

Public names (imported on first use, see :mod:`repro.core.exports`)::

    from repro.fedmm import FedMM, FedAvgGDA, FedProxGDA, FedSGDA, Block, LocalGDA

A user's own saddle problem is a :class:`PlayerGradient`: an object with ``n_clients``,
``batched(theta, t, m)`` (all clients' player gradients ``[grad_omega f_i; -grad_psi f_i]``,
shape (N, D)) and ``client(i, theta_i, t, m)`` (one client). Example: ``docs/usage.md``.
"""

from repro.core.exports import lazy_exports

_EXPORTS = {
    # Algorithm 3 and the baselines (Algorithm 2, FedSGDA), their hyperparameters and state
    "FedMM": "fedmm", "FedMMConfig": "fedmm",
    "FedAvgGDA": "fedavg_gda", "FedAvgGDAConfig": "fedavg_gda",
    "FedProxGDA": "fedprox_gda", "FedProxGDAConfig": "fedprox_gda",
    "FedSGDA": "fedsgda", "FedSGDAConfig": "fedsgda",
    "Block": "blocks", "LocalGDA": "local_gda", "FedState": "federated",
    # the methods by name (one module each under repro/fedmm/methods/)
    "METHODS": "methods", "build": "methods",
    # the interface a user implements
    "PlayerGradient": "problem",
    # the messages of the protocol
    "Broadcast": "messages", "Upload": "messages", "RoundMessages": "messages",
    # the paper's domain-adaptation problem (MNIST -> MNIST-M, Office-31 heads)
    "DAProblem": "problem", "MnistNet": "models", "OfficeHeads": "models",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
