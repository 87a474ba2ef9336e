"""Short public import paths that cost nothing until used (PEP 562 module ``__getattr__``).

A paper package lists its public names once, each pointing at the submodule that defines it
(``"FedProxAL": "proxal"``) or, for an alias, at another name there
(``"ProxAL": "proxal:FedProxAL"``)::

    _EXPORTS = {"FedProxAL": "proxal", "ProxAL": "proxal:FedProxAL"}
    __all__ = sorted(_EXPORTS)
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

``from repro.constrfl import ProxAL`` then imports ``repro.constrfl.proxal`` on first use
only, so ``import repro.constrfl.problem`` (what the experiments and theory checks do) does
not pull in every algorithm, and no submodule can end up in an import cycle through the
package root. Unknown names raise ``AttributeError``, which keeps
``from repro.fairvfl import claims`` (a submodule) working.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: dict[str, str]
                 ) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` resolving ``exports`` on first access."""
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> object:
        target = exports.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attr = target.partition(":")
        value = getattr(importlib.import_module(f"{package}.{module}"), attr or name)
        namespace[name] = value  # cache: later look-ups are plain attribute reads
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
