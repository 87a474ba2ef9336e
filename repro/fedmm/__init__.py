"""Paper 004, FedMM: saddle-point optimization for federated adversarial domain adaptation.

``algorithms`` (FedMM, FedAvgGDA, FedProxGDA, FedSGDA), ``models`` and ``adaptation`` (networks
and DANN/CDAN/MDD losses), ``mnistm``/``clients``/``problem`` (data, allocation, player
gradients), ``training`` (presets, round loop, checkpoints), ``office``/``mobilenetv2``
(Office-31 path), ``experiments`` (Figs. 2, 4, 5 and Tables 1-2), ``bench``.
"""
