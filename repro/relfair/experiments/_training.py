"""One Table 1 run: a task, a method and a seed (docs/decisions.md#relfair-setting,
docs/decisions.md#relfair-metrics).

Randomness shared by the six methods of one seed -- the subset, the client partition, the
train/validation split and theta^0 -- comes from a context whose identity omits the method
(docs/decisions.md#relfair-setting: "same partition per seed across methods";
docs/decisions.md#relfair-init); the training
stream (minibatches, dropout masks, DRFA's snapshot index) is a named stream of the same context
keyed by method. So ``relfair.table1`` and ``relfair.fig4`` give bitwise-equal runs for equal
configs.

This context is the engine's ``RunContext`` under the fixed experiment name
``"relfair.clients"`` and the identity (task, seed, n_clients, subset), shared by
``relfair.table1``, ``relfair.fig4`` and ``relfair.ablation_server_step``; it is not
``ctx.rng(..., shared_over=("method",))``, whose seed depends on the experiment's name and on
every other config field (rounds, local_work, tau, ...), so that mechanism would change the
streams, hence the numbers.
"""

from __future__ import annotations

import numpy as np

from repro.core.metrics import gini, relative_fairness_ratio
from repro.engine.experiment import RunContext, cell_seed
from repro.relfair.data import load_federated
from repro.relfair.federated import ClientProblem, TrainSetup
from repro.relfair.methods import drfa, fedavg, safl, scaff_pd, scaff_pd_ia, scaffold
from repro.relfair.methods._options import ALPHA, PHI
from repro.relfair.metrics import client_metrics

__all__ = ["CELL_OPTIONS", "SCALES", "TRAINED", "run_training", "shared_context",
           "training_problem"]

# The library methods a training cell runs, by name, in Table 1's order (App. J.2): the tables
# name their methods themselves (``_cells.TABLE1_METHODS``), so a method file added to
# repro/relfair/methods/ is in no table, claim or record until it is imported here and named
# there. These static imports also put exactly these methods' files in the records' code
# identity (repro.engine.run.code_identity), and the package's discovery (its __init__) not.
TRAINED = {m.METHOD.name: m.METHOD for m in (fedavg, scaffold, safl, drfa, scaff_pd,
                                              scaff_pd_ia)}

# docs/decisions.md#relfair-setting (paper) and §10 (smoke)
SCALES = {
    "smoke": {"n_clients": 20, "subset": 4000, "rounds": 10, "local_steps": 2, "batch": 16,
              "eval_every": 5},
    "paper": {"n_clients": 100, "subset": None, "rounds": 100, "local_steps": 5, "batch": 32,
              "eval_every": 10},
}


def shared_context(config: dict) -> RunContext:
    ident = {k: config[k] for k in ("task", "seed", "n_clients", "subset")}
    return RunContext("relfair.clients", ident, cell_seed("relfair.clients", ident))


def training_problem(config: dict):
    """``(problem, theta0, rng)`` of a training cell: the clients of (task, seed, n_clients,
    subset) with App. J.2's setup (B from the config, 50 hidden units, dropout 0.5), theta^0
    from the shared ``init`` stream and the method's training stream.
    """
    shared = shared_context(config)
    # the partition settings of the FedAvg search (fedavg_search.py); absent in the tables
    how = {k: config[k] for k in ("partition", "alpha", "balance") if k in config}
    data = load_federated(config["task"], config["n_clients"], shared.rng("partition"),
                          subset=config["subset"], **how)
    problem = ClientProblem(data, TrainSetup(batch=config["batch"], hidden=50, dropout=0.5))
    theta0 = problem.init(shared.torch_generator("init"))
    rng = shared.torch_generator("train", config["method"], config["rounds"],
                                 config["local_steps"], config["batch"])
    return problem, theta0, rng


# Hyperparameters a cell may set, by cell field -> method option; a cell without one runs the
# paper's value (App. J.2; the method's config default, or ALPHA and PHI), so adding these
# fields changed no existing cell. ``dro_alpha`` is the alpha of the ambiguity set: a cell's
# ``alpha`` already names the Dirichlet concentration of the FedAvg search's partitions.
CELL_OPTIONS = {"eta": "eta", "dro_alpha": "alpha", "phi": "phi", "sigma": "sigma",
                "tau": "tau"}


def _options(config: dict) -> dict:
    """The method options of a cell: App. J.2's alpha and phi, its J, ``local_work`` and the
    hyperparameters of :data:`CELL_OPTIONS` the cell names. A cell without ``local_work`` is
    the ``steps`` reading (the library's default is ``epochs``, the primary): passed
    explicitly, so those records keep their numbers.
    """
    options = {"alpha": ALPHA, "phi": PHI, "local_steps": config["local_steps"],
               "local_work": config.get("local_work", "steps")}
    options.update({option: config[field] for field, option in CELL_OPTIONS.items()
                    if field in config})
    return options


def run_training(config: dict, ctx: RunContext | None = None, backend: str = "vectorized"
                 ) -> tuple[dict, dict]:
    """Train ``config["method"]`` and evaluate theta^{R+1} on every client's validation split.

    Returns ``(metrics, curves)``; curves hold the per-client final validation losses and
    accuracies (for Fig. 4) besides what was logged through ``ctx``.
    """
    if config["method"] not in TRAINED:
        raise ValueError(f"a training cell runs one of {tuple(TRAINED)}, got "
                         f"{config['method']!r} (repro/relfair/experiments/_training.py "
                         "imports the methods a table may run)")
    problem, theta0, rng = training_problem(config)
    data = problem.data
    alg = TRAINED[config["method"]].build(problem, init=theta0, rng=rng, backend=backend,
                                          **_options(config))
    engine = alg.engine
    final = None  # the validation evaluation of theta^{R+1}, made once (logged and returned)
    for r in range(1, config["rounds"] + 1):
        alg.step()
        st = alg.state
        values = {"lam_min": float(st.lam.min()), "lam_max": float(st.lam.max())}
        if r % config["eval_every"] == 0 or r == config["rounds"]:
            vl, va = engine.evaluate(st.theta, "val")
            m = client_metrics(vl, va)
            values.update(val_loss=m["loss_all"], val_acc=m["acc_all"], val_R_AB=m["R_AB"])
            final = (vl, va) if r == config["rounds"] else None
        if ctx is not None:
            ctx.log_round(r, **values)
    vl, va = engine.evaluate(alg.state.theta, "val") if final is None else final
    metrics = client_metrics(vl, va)
    counts = data.val_sizes
    metrics["acc_pooled"] = float(np.sum(va * counts) / counts.sum())
    # the `summed-loss` reading: per-client validation losses summed over samples
    # (the paper never says mean; its Penguins losses are sums), and, as a diagnostic, the
    # same indices of the client sizes alone
    summed = vl * counts
    metrics["R_AB_summed"] = float(relative_fairness_ratio(summed, ALPHA))
    metrics["gini_summed"] = float(gini(summed))
    metrics["R_AB_size"] = float(relative_fairness_ratio(counts.astype(float), ALPHA))
    metrics["gini_size"] = float(gini(counts.astype(float)))
    if alg.state.theta_avg is not None:  # SAFL's averaged iterate, secondary
        al, aa = engine.evaluate(alg.state.theta_avg, "val")
        avg = client_metrics(al, aa)
        metrics.update({f"avg_iterate_{k}": v for k, v in avg.items()})
    curves = {"client_val_loss": vl.tolist(), "client_val_acc": va.tolist()}
    return metrics, curves
