"""A method is one file.

Each paper keeps its methods in the package ``repro.<paper>.methods``, one module per method,
each defining ``METHOD = Method(...)``::

    # repro/relfair/methods/fedavg.py
    METHOD = Method(
        name="FedAvg",                      # as the paper's tables print it
        algorithm=FedAvg,                   # a class following repro.core.algorithm
        configure=configure,                # (problem, **its options) -> FedAvgConfig
        summary="FedAvg (McMahan et al. 2017), App. J.2's configuration",
        options=fields_of(FedAvgConfig),    # the options it reads: its config's fields
    )

and the package's ``__init__`` collects them with :func:`discover`. A new file there is a new
method: it is listed by ``repro list`` (engine/registry.py reads every paper's ``METHODS``) and
runnable through the paper's ``build``; no table runs it, because each table names the methods it
runs (its own tuple of names), so no table, claim or record changes when a method is added.

Options. A method declares the options it reads (``options``, usually its config's fields,
:func:`fields_of`). An option is accepted when *some* method of the same package declares it
(the union over the package's ``METHODS``), so one set of options configures every method of a
comparison, and a new method's own hyperparameter (FedProx's ``mu``) is accepted as soon as its
file declares it, with no list edited elsewhere. ``configure`` receives only the options its
method declares; an option no method of the package declares is a ``ValueError`` naming it
(a typo is never ignored). One place for each default: the config dataclass.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["Method", "build", "discover", "fields_of"]


def fields_of(config: type, *, exclude: Iterable[str] = (), extra: Iterable[str] = ()
              ) -> tuple[str, ...]:
    """The options of a method whose config is the dataclass ``config``: its fields set at
    construction (an ``InitVar``, such as a deprecated alias, is not one), less ``exclude``
    (fields the method sets itself), then ``extra`` (options ``configure`` turns into a field,
    e.g. relfair's ``alpha`` and ``phi`` into the ambiguity set).
    """
    if not dataclasses.is_dataclass(config):
        raise ValueError(f"fields_of needs a dataclass, got {config!r}")
    names = [f.name for f in dataclasses.fields(config) if f.init]
    missing = sorted(set(exclude) - set(names))
    if missing:
        raise ValueError(f"fields_of({config.__name__}): exclude names {missing}, which are "
                         f"not its fields {names}")
    out = [n for n in names if n not in set(exclude)]
    return tuple(out + [n for n in extra if n not in out])


@dataclasses.dataclass(frozen=True)
class Method:
    """One method of a paper: its printed ``name``, the ``algorithm`` class, ``configure``
    (``(problem, **options) -> config``, given only the options of ``options``), a one-line
    ``summary`` (with the paper's section), ``options`` (the names it reads, see the module
    docstring) and the ``module`` that defines it (filled in by :func:`discover`).
    """

    name: str
    algorithm: type
    configure: Callable[..., Any]
    summary: str
    options: tuple[str, ...] = ()
    module: str = ""

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise ValueError(f"Method.name must be a non-empty str, got {self.name!r}")
        if not callable(self.configure):
            raise ValueError(f"Method {self.name!r}: configure must be callable")
        if isinstance(self.options, str) or not all(isinstance(o, str) for o in self.options):
            raise ValueError(f"Method {self.name!r}: options must be a tuple of option names, "
                             f"got {self.options!r}")
        object.__setattr__(self, "options", tuple(self.options))

    @property
    def package(self) -> str:
        """The package the method belongs to (``repro.<paper>.methods``)."""
        return (self.module or self.configure.__module__).rpartition(".")[0]

    def accepted(self) -> frozenset[str]:
        """The options a call may pass: the union of the options every method of its package
        declares (the package's ``METHODS``, read when called, so a method file added to the
        package widens it), its own included.
        """
        family = getattr(sys.modules.get(self.package), "METHODS", None)
        names = set(self.options)
        if isinstance(family, Mapping):
            for method in family.values():
                names.update(getattr(method, "options", ()))
        return frozenset(names)

    def config_for(self, problem: Any, **options: Any) -> Any:
        """``configure(problem, **the given options this method declares)``; an option that no
        method of the package declares raises ``ValueError`` naming it and the known ones.
        """
        accepted = self.accepted()
        unknown = sorted(set(options) - accepted)
        if unknown:
            raise ValueError(f"{self.name}: unknown option(s) {unknown}; the methods of "
                             f"{self.package or 'this package'} read {sorted(accepted)}")
        return self.configure(problem, **{k: v for k, v in options.items()
                                          if k in self.options})

    def build(self, problem: Any, *, init: Any = None, rng: Any = None,
              backend: str | None = None, **options: Any) -> Any:
        """``algorithm(problem, config_for(problem, **options), init=..., rng=...,
        backend=...)`` (``backend=None`` keeps the algorithm's default).
        """
        config = self.config_for(problem, **options)
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
