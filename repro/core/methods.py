"""A method is one file.

Each paper keeps its methods in the package ``repro.<paper>.methods``, one module per method,
each defining ``METHOD = Method(...)``::

    # repro/relfair/methods/fedavg.py
    METHOD = Method(
        name="FedAvg",                      # as the paper's tables print it
        algorithm=FedAvg,                   # a class following repro.core.algorithm
        configure=_configure,               # (problem, **options) -> FedAvgConfig
        summary="FedAvg (McMahan et al. 2017), App. J.2's configuration",
    )

and the package's ``__init__`` collects them with :func:`discover`. A new file there is a new
method: it is listed by ``repro list`` (engine/registry.py reads every paper's ``METHODS``) and
runnable through the paper's ``build``; no table runs it, because each table names the methods it
runs (its own tuple of names), so no table, claim or record changes when a method is added.

``configure(problem, **options)`` turns the paper's common options (relfair: ``alpha``, ``phi``,
``local_steps``, ...) into the method's own config; each method reads the options it uses and
keeps its own defaults for the rest (one place for each default: its config dataclass).
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["Method", "build", "discover"]


@dataclasses.dataclass(frozen=True)
class Method:
    """One method of a paper: its printed ``name``, the ``algorithm`` class, ``configure``
    (``(problem, **options) -> config``), a one-line ``summary`` (with the paper's section) and
    the ``module`` that defines it (filled in by :func:`discover`).
    """

    name: str
    algorithm: type
    configure: Callable[..., Any]
    summary: str
    module: str = ""

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise ValueError(f"Method.name must be a non-empty str, got {self.name!r}")
        if not callable(self.configure):
            raise ValueError(f"Method {self.name!r}: configure must be callable")

    def build(self, problem: Any, *, init: Any = None, rng: Any = None,
              backend: str | None = None, **options: Any) -> Any:
        """``algorithm(problem, configure(problem, **options), init=..., rng=..., backend=...)``
        (``backend=None`` keeps the algorithm's default).
        """
        config = self.configure(problem, **options)
        kwargs: dict[str, Any] = {"init": init, "rng": rng}
        if backend is not None:
            kwargs["backend"] = backend
        return self.algorithm(problem, config, **kwargs)


def discover(package: str, path: Iterable[str]) -> dict[str, Method]:
    """``{name: Method}`` from every module of ``package`` (whose ``__path__`` is ``path``) that
    defines ``METHOD``, in module-name order. Two modules with one name raise ``ValueError``
    naming both files; a module without ``METHOD`` is skipped (a helper shared by methods).
    """
    found: dict[str, Method] = {}
    for info in sorted(pkgutil.iter_modules(list(path)), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        method = getattr(module, "METHOD", None)
        if method is None:
            continue
        if not isinstance(method, Method):
            raise ValueError(f"{module.__file__}: METHOD must be a repro.core.methods.Method, got "
                             f"{type(method).__name__}")
        if method.name in found:
            first = found[method.name].module
            raise ValueError(f"method {method.name!r} is defined twice: in {first} and in "
                             f"{module.__name__} ({module.__file__}); rename one")
        found[method.name] = dataclasses.replace(method, module=module.__name__)
    return found


def build(methods: dict[str, Method], name: str, problem: Any, **kwargs: Any) -> Any:
    """``methods[name].build(problem, **kwargs)``; an unknown name raises ``ValueError`` listing
    the known ones.
    """
    if name not in methods:
        raise ValueError(f"method must be one of {sorted(methods)}, got {name!r}")
    return methods[name].build(problem, **kwargs)
