"""Paper 002's methods, one module per method (:mod:`repro.core.methods`).

Each module of this package defines ``METHOD = Method(name, algorithm, configure, summary)``:
its name as Table 1 prints it, the algorithm class (``repro.relfair.fedavg``, ``safl``,
``drfa``, ``scaff_pd_ia``; Scaffold and Scaff-PD are :class:`ScaffPDIA` with the singleton
``{1/n}`` and with ``Delta_alpha``, App. J.2) and ``configure(problem, **options)``, the paper's
configuration (App. J.2; docs/decisions.md#relfair-setting table). Each declares
the options it reads (``Method.options``: its config's fields, and ``alpha``, ``phi`` of
Lambda_phi(Delta_alpha, Delta_alpha) where it builds that set; 0.2 and 0.2, App. J.2); the
common ones are ``local_steps`` J, ``local_work`` (``"epochs"``: J local epochs, App. J.2's
primary reading, the default; ``"steps"``: J SGD steps), ``eta``, and ``tau``, the server step of
the Scaffold-type methods. SAFL takes one minibatch step per round under either reading (App.
J.2 excludes it from J). A call may pass any option some method here declares; each method
receives its own (:mod:`repro.core.methods`).

``METHODS`` is every method found here (:func:`repro.core.methods.discover`), in module-name
order: the library, listed by ``repro list``. No table reads it: each experiment names the
methods it runs (``repro.relfair.experiments._cells.TABLE1_METHODS``), so a new file here is a new
library method in no table (docs/adding-a-paper.md, "Add a method").
``build(name, problem, **kwargs)`` builds one (``init``, ``rng``, ``backend`` and the options);
``tiny_problem(seed)`` is a problem small enough for the generic protocol test.
"""

from __future__ import annotations

from typing import Any

from repro.core.methods import Method, discover
from repro.core.methods import build as _build

__all__ = ["METHODS", "build", "tiny_problem"]

METHODS: dict[str, Method] = discover(__name__, __path__)


def build(name: str, problem: Any, **kwargs: Any) -> Any:
    """``METHODS[name].build(problem, **kwargs)``: ``init``, ``rng``, ``backend`` and the
    options the methods declare; an unknown name raises ``ValueError`` listing the known.
    """
    return _build(METHODS, name, problem, **kwargs)


def tiny_problem(seed: int = 0):
    """Four clients of Gaussian clusters (10 classes) in 10 dimensions, an MLP of 8 hidden
    units, B = 8 with dropout: a round of any method takes milliseconds (deterministic in
    ``seed``).
    """
    from repro.relfair.federated import ClientProblem, TrainSetup
    from repro.relfair.instances import gaussian_clients

    return ClientProblem(gaussian_clients(seed, 80, 10, 4),
                         TrainSetup(batch=8, hidden=8, dropout=0.5))
