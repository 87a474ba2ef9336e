"""Paper 003 (He, Peng, Sun, TMLR 2024): federated learning with convex global and local
constraints. Algorithm 1 (proximal augmented Lagrangian, `proxal`), Algorithm 2 (inexact ADMM,
`admm`), Algorithm 3 (centralised cProx-AL, `cproxal`), the methods, one module each
(`methods/`), their start (`start`), the problem (5) and those of Sections 5 and E.2
(`problem`, its parties' functions in `blocks`),
small instances for checks and tests (`instances`, their cvxpy optimum in `groundtruth`), the
rebuilt data sets (`data`) and the experiments of Tables 1-4 and Figures 1-2 (`experiments/`,
one module per item).

Public names (imported on first use, see :mod:`repro.core.exports`)::

    from repro.constrfl import ProxAL, ProxALConfig, ProxALInit, Problem, QuadraticBlock

``ProxAL`` is :class:`~repro.constrfl.proxal.FedProxAL` (Algorithm 1), ``CProxAL`` is
:class:`~repro.constrfl.cproxal.CentralProxAL` (Algorithm 3). A user's own problem is a
:class:`Problem` of a server block and client blocks: :class:`QuadraticBlock`,
:class:`LogisticBlock`, or an object of your own with their methods (values, gradients and
Hessians of f_i and c_i over a batch of parties). Example: ``docs/usage.md``.
"""

from repro.core.exports import lazy_exports

_EXPORTS = {
    # Algorithm 1 and its state
    "FedProxAL": "proxal", "ProxAL": "proxal:FedProxAL", "ProxALState": "proxal",
    # Algorithm 2 (one subproblem (12)) and its parties
    "InexactADMM": "admm", "ADMMResult": "admm", "ClientSide": "admm", "ServerSide": "admm",
    # Algorithm 3
    "CentralProxAL": "cproxal", "CProxAL": "cproxal:CentralProxAL", "CentralState": "cproxal",
    # hyperparameters, the reference code's departures and the start (w^0, mu^0)
    "ProxALConfig": "config", "ReferenceFlags": "config", "reference_flags": "config",
    "ProxALInit": "start", "paper_start": "start",
    # the problem interface and the paper's problems
    "Problem": "problem", "QuadraticBlock": "blocks", "LogisticBlock": "blocks",
    "Merit": "merit", "neyman_pearson": "problem", "fairness": "problem",
    "lcqp_paper": "problem", "lcqp_reference": "problem", "unit_sphere_w0": "problem",
    # small instances (docs/decisions.md#constrfl-theory-instances)
    "qp_ball": "instances", "np_small": "instances",
    # the methods, one module each (repro/constrfl/methods/)
    "METHODS": "methods", "build": "methods",
    # Definition 1
    "kkt_residuals": "optimality",
    # the messages of the protocol
    "Broadcast": "messages", "InitialUpload": "messages", "ClientUpload": "messages",
    "DualChange": "messages", "OuterRoundMessages": "messages",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
