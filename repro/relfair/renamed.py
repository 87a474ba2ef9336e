"""One name for the local step size in every relfair config: ``eta``, the paper's symbol.

Algorithm 1 of paper 002 writes the clients' local step size as eta, and App. J.2 gives the
baselines' local step size in the same role, so every config calls it ``eta``
(:class:`~repro.relfair.scaff_pd_ia.ScaffPDIAConfig`, ``FedAvgConfig``, ``SAFLConfig``,
``DRFAConfig``). The baselines' earlier keyword ``lr`` still works, with a
``DeprecationWarning``: ``FedAvgConfig(lr=0.1)`` is ``FedAvgConfig(eta=0.1)``, and
``config.lr`` reads ``config.eta``; no value changes.
"""

from __future__ import annotations

import warnings

__all__ = ["LR_ALIAS", "take_lr"]


def _warn(cls: type, how: str) -> None:
    warnings.warn(f"{cls.__name__}: {how} is deprecated; the local step size is eta (the "
                  "paper's symbol, as in ScaffPDIAConfig)", DeprecationWarning, stacklevel=4)


def take_lr(config, lr: float | None) -> None:
    """``config.eta = lr`` where the old keyword ``lr`` was given (warned), else nothing."""
    if lr is not None:
        _warn(type(config), "the keyword lr=")
        object.__setattr__(config, "eta", lr)


def _read_lr(config) -> float:
    _warn(type(config), "the attribute .lr")
    return config.eta


LR_ALIAS = property(_read_lr, doc="The old name of ``eta`` (deprecated).")
