"""One experiment cell: train FedBCD or Fair VFL on one split and evaluate
(docs/decisions.md#fairvfl-data, docs/decisions.md#fairvfl-hyperparameters).

A cell config (JSON) holds ``dataset, version ("conf" | "journal"), model ("LM" | "MLP"),
method ("FedBCD" | "FairVFL"), eps, Q, T, eta, seed`` (the run index of
docs/decisions.md#fairvfl-data's split), ``smoke`` (ADULT subsample of
docs/decisions.md#fairvfl-cost; ``subsample``: the same, in records of the former ``reduced`` scale
of [C] Fig. 2), ``log_every``, for the MLP ``widths`` and, in a reading's cells, ``ridge`` (the
ridge weight as a multiple of the default mu = 2/n) and ``solve = "optimum"`` (FedBCD started at its
LM objective's minimizer and run ``T`` rounds from there: the limit of long runs).

A FedBCD cell also evaluates the post-processing baselines on its scores
(docs/decisions.md#fairvfl-pooling), see ``post_processing_metrics``. Every record carries DFP/DFN
under all five readings of ``metric_readings.METRIC_READINGS`` (a metric reading needs no rerun).

The method modules the cells run (``_cells.TABLE_METHODS``) are imported by name, so that they
and their algorithm files (``fair_vfl.py``, ``fedbcd.py``) are in the cells' static import
closure, i.e. their code identity (``repro.engine.run.code_identity``): ``repro.fairvfl.methods``
finds its modules dynamically, which the closure does not follow.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse

from repro.engine.experiment import CellResult, RunContext
from repro.fairvfl.ceo import ceo_expected, ceo_postprocess
from repro.fairvfl.data import make_split
from repro.fairvfl.eo import eo_expected, eo_postprocess
from repro.fairvfl.eo_public import eo_public_expected
from repro.fairvfl.evaluate import (
    metrics_from_decisions,
    metrics_from_predictor,
    metrics_from_scores,
    post_processed_losses,
)
from repro.fairvfl.methods import build, fair_vfl, fedbcd  # noqa: F401
from repro.fairvfl.models import LinearBlock, MLPBlock
from repro.fairvfl.optimum import lm_optimum
from repro.fairvfl.problem import VFLProblem
from repro.fairvfl.roc_eo import roc_eo_expected

BETA, C_CONST = 0.1, 1e-3  # docs/decisions.md#fairvfl-hyperparameters: dual step and constant c_t
# (cell fields ``beta`` and ``c`` where a sweep sets them; absent, these: no existing cell changed)


def _maybe_sparse(X: np.ndarray):
    """CSR for mostly one-hot blocks (density <= 0.3): ~1.5x faster rounds on ADULT
    (docs/decisions.md#fairvfl-cost).
    """
    return scipy.sparse.csr_matrix(X) if np.count_nonzero(X) <= 0.3 * X.size else X


def _optimum_init(config: dict, sp, problem) -> dict:
    """``{"init": theta*}`` for a cell of an ``optimum`` reading (FedBCD on the LM started at
    its objective's minimizer, :mod:`repro.fairvfl.optimum`), else ``{}``.
    """
    if config.get("solve") != "optimum":
        return {}
    if config["model"] != "LM" or config["method"] != "FedBCD":
        raise ValueError("the optimum readings solve FedBCD's LM objective only, got "
                         f"{config['method']} {config['model']}")
    mu = 2.0 * float(config.get("ridge", 1.0)) / len(sp.y_train)
    return {"init": lm_optimum(problem.blocks, sp.y_train, mu)}


def cell_algorithm(config: dict):
    """The split and the algorithm (``methods.build(config["method"], ...)``) of a cell.

    ``rng`` is the run index ``seed`` (not the cell): an MLP party's initial network depends
    on the run and the party only (``fair_vfl.init_generator``), so FedBCD and every
    FairVFL(eps) of a run start from the same network (needed for claims J1b/J1d,
    docs/decisions.md#fairvfl-figures).
    """
    sp = make_split(config["dataset"], config["seed"], version=config["version"],
                    smoke=config.get("smoke", False) or config.get("subsample", False))
    if config["model"] == "LM":
        blocks = [LinearBlock(_maybe_sparse(sp.X_train[:, b])) for b in sp.blocks]
    else:
        widths = tuple(config.get("widths", (32, 32)))
        dtype = config.get("dtype", "float32")
        blocks = [MLPBlock(sp.X_train[:, b], widths, dtype) for b in sp.blocks]
    problem = VFLProblem(blocks, sp.y_train, sp.s_train)
    # ``ridge``: a reading's multiple of the ridge weight mu = 2/n (the package's default)
    ridge = {"mu": 2.0 * float(config["ridge"]) / len(sp.y_train)} if "ridge" in config else {}
    alg = build(config["method"], problem, rng=int(config["seed"]), **ridge,
                **_optimum_init(config, sp, problem),
                eps=float(config.get("eps") or 0.0), eta=float(config["eta"]),
                beta=float(config.get("beta", BETA)), c=float(config.get("c", C_CONST)),
                Q=int(config.get("Q", 1)), mode="exact",
                roles="conf" if config["version"] == "conf" else "journal")
    return sp, alg


def run_cell(config: dict, ctx: RunContext) -> CellResult:
    sp, alg = cell_algorithm(config)
    every = int(config.get("log_every", 1))

    def log(state):
        if state.t % every == 0 or state.t == config["T"]:
            ctx.log_round(state.t, t=state.t, loss=state.loss, D=state.d,
                          lam1=state.lam[0], lam2=state.lam[1])

    log(alg.state)
    alg.run(int(config["T"]), callback=lambda _round, state, _messages: log(state))
    X_test = [sp.X_test[:, b] for b in sp.blocks]
    z_test = alg.test_scores(X_test)
    metrics = dict(metrics_from_scores(sp.y_test, sp.s_test, z_test))
    # lam1, lam2: the multipliers the last primal step used (lam^(T-1)); the server's dual
    # step after it computes lam^(T), which no primal step uses
    metrics.update(train_loss=alg.state.loss, train_D=alg.state.d,
                   lam1=float(alg.state.lam_prev[0]), lam2=float(alg.state.lam_prev[1]))
    if config["method"] == "FedBCD":
        metrics.update(post_processing_metrics(alg.server.z, sp, z_test, int(config["seed"])))
    return CellResult(metrics={k: float(v) for k, v in metrics.items()})


def post_processing_metrics(z_train, sp, z_test, seed: int) -> dict[str, float]:
    """EO/CEO on FedBCD's pooled scores (docs/decisions.md#fairvfl-pooling), as exact
    expectations of the randomized predictors, each prefixed: ``eo_`` (equalized odds,
    primary), ``eo_opp_`` (equal opportunity, docs/decisions.md#fairvfl-eo-reading), ``eo_roc_``
    (equalized odds on the continuous score, Hardt et al. §4.2), ``eo_pub_`` (the public
    equalized-odds code's LP, :mod:`repro.fairvfl.eo_public`),
    ``ceo_`` ('fnr', primary), ``ceo_w_`` ('weighted'); ``eo_draw_``/``ceo_draw_``: the
    single draw with ``seed + 10_000`` that earlier records reported.
    """
    out = {}
    train = (z_train, sp.y_train, sp.s_train, z_test, sp.s_test)
    for prefix, fn, kw in (("eo", eo_expected, {"constraint": "odds"}),
                           ("eo_opp", eo_expected, {"constraint": "opportunity"}),
                           ("eo_roc", roc_eo_expected, {}),
                           ("eo_pub", eo_public_expected, {}),
                           ("ceo", ceo_expected, {"cost": "fnr"}),
                           ("ceo_w", ceo_expected, {"cost": "weighted"})):
        e = fn(*train, **kw)
        m = metrics_from_predictor(sp.y_test, sp.s_test, e.q, e.losses, e.score)
        out.update({f"{prefix}_{k}": v for k, v in m.items()})
    for prefix, fn in (("eo_draw", eo_postprocess), ("ceo_draw", ceo_postprocess)):
        yhat, p_tilde = fn(*train, seed)
        m = metrics_from_decisions(sp.y_test, sp.s_test, yhat, post_processed_losses(p_tilde),
                                   p_tilde)
        out.update({f"{prefix}_{k}": v for k, v in m.items()})
    return out
