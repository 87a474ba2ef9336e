"""The package code paths the experiments run, and which theory check must drive each.

An experiment's cell selects a code path of its algorithm by its config: relfair's local work
(``epochs``, ``steps``), fedmm's local-step backend (``loop``, ``vectorized``, ``graphed``),
fairvfl's roles, model and local steps, constrfl's reference flags and subproblem solver, and
the dtype of each. A theory check of a statement about an algorithm must drive that algorithm on
every such path a registered experiment plans at ``paper``, ``reduced`` or ``extended`` scale
under any of its readings: a bug on a path no check drives changes no margin.

:func:`experiment_paths` lists them as ``{family: {key}}`` (family = the algorithm a statement
is about, key = ``"/"``-joined path components). A check records the keys it drove
(:meth:`theory.evidence.Evidence.path`); ``tests/theory/test_theory_paths.py`` holds the two
against each other through :data:`CLAIMS`.
"""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["CLAIMS", "NOT_CLAIMING", "PLANNED_SCALES", "UNCLAIMED", "constrfl_key",
           "experiment_paths",
           "fairvfl_keys", "fedmm_key", "relfair_key", "unchecked"]

# fedmm's ``extended`` scale is the GPU protocol; its ``graphed`` backend runs eagerly on a CPU
# (bitwise the ``vectorized`` arithmetic), so the checks drive it there.
PLANNED_SCALES = ("paper", "reduced", "extended")

# Which checks claim statements about which algorithm family: each must drive every path of its
# families that an experiment plans.
CLAIMS: dict[str, tuple[str, ...]] = {
    "relfair.theorem3_convergence": ("relfair:Scaff-PD-IA", "relfair:Scaff-PD",
                                     "relfair:Scaffold"),
    "fedmm.theorem1_remark_fixed_point": ("fedmm:FedMM",),
    "fedmm.sec4_eta3": ("fedmm:FedMM",),
    "fedmm.theorem1_toy_dann": ("fedmm:FedMM", "fedmm:FedAvgGDA"),
    "fedmm.sec3_1_drift_bias": ("fedmm:FedMM", "fedmm:FedAvgGDA", "fedmm:FedSGDA",
                                "fedmm:FedProxGDA"),
    "fairvfl.lemma1_primal_progress": ("fairvfl:FairVFL",),
    "fairvfl.theorem2_rate_gap_bounds": ("fairvfl:FairVFL",),
    "constrfl.theorem31_output": ("constrfl:Algorithm 1",),
    "constrfl.lemma31_bounded_iterates": ("constrfl:Algorithm 1",),
    "constrfl.theorem32_outer_complexity": ("constrfl:Algorithm 1",),
}

# The other checks: why each does not claim a statement about an algorithm on the experiments'
# paths (it drives none, or only the piece its statement is about). A new check is classified
# here or in CLAIMS (tests/theory/test_theory_paths.py).
_PROBLEM = "a property of the problem or of a package function; drives no algorithm"
_EXACT = ("its statement assumes exact local solves (written in theory/): no local-GDA "
          "backend runs")
_ADMM = "Algorithm 2 on one subproblem of the paper's algorithm (paper flags, Newton)"
_PEP = ("the exact worst case over the statement's function class (PEP) beside the package's "
        "algorithm on one theory instance; the experiments' paths run in the check that claims "
        "the same statement")
NOT_CLAIMING = {
    **{f"projections.{k}": _PROBLEM for k in ("orthant", "box", "ball", "simplex",
                                              "capped_simplex")},
    **{f"relfair.{k}": _PROBLEM for k in ("algorithm1_dual_step_projection",
                                          "theorem4_generalization_terms",
                                          "proposition9_majorization_bounds",
                                          "theorem1_2_monotonicity", "equation13_phi_selection",
                                          "proposition5_skewness")},
    **{f"fedmm.{k}": _EXACT for k in ("lemma1_gradient_bound", "lemma3_descent", "lemmas5_8",
                                      "propositions1_4", "theorem1_inexact")},
    "fedmm.theorem1_tolerance_gda": "local GDA stopped at a tolerance, written in theory/ (no "
                                    "package backend runs)",
    "fedmm.appendix_a8_mu_range": "arithmetic of App. A.8 on the instances' data",
    "fairvfl.lemma2_dual_progress": "the server's dual step (one code path); its moving-theta "
                                    "runs use [C] roles and dense blocks",
    "fairvfl.lemma3_lyapunov": "the server's dual step with theta frozen (one code path)",
    "fairvfl.assumption2_constants": "constants of the linear model's data",
    "fairvfl.theorem2_fixed_point_kkt": "the exact fixed point of the linear model under [C] "
                                        "roles (its ground truth); the other paths are driven by "
                                        "the Lemma 1 and Theorem 2 checks",
    "fairvfl.theorem1_rotation_invariance": "a security statement on [C] and [J] roles (dense "
                                            "blocks); no convergence claim",
    "fairvfl.theorem1_masked_weights_tuple": "an identity of the [J](12) weights",
    "fairvfl.theorem1_label_leak": "a security limitation on [J] roles (COMPAS, dense)",
    "constrfl.lemma42_admm_bounds": _ADMM,
    "constrfl.theorem41_42_admm_linear_rate": _ADMM,
    "constrfl.theorem32_inner_total": "Algorithm 2's rounds inside the paper's Algorithm 1 "
                                      "(paper flags, Newton)",
    "constrfl.lemma_a1_a2_iterates": "the resolvent identity of the paper's algorithm (the "
                                     "reference departures change the resolvent)",
    "constrfl.mistyped_statements": "statements about the schedule and norms",
    "constrfl.lemma41_local_lipschitz": _PROBLEM,
    **{name: _PEP for name in ("constrfl.pep_lemma_b3_factor", "constrfl.pep_lemma42_radius",
                               "constrfl.pep_counts_74_48_83_84", "constrfl.pep_lemma_a2_firm",
                               "constrfl.pep_lemma_a3_ppa", "fairvfl.pep_lemma1_block_descent")},
    "constrfl.lemma_a2_resolvent_firm_nonexpansive": _PROBLEM,
}

# Families the experiments run that no statement of the papers' theory is about (why, each).
UNCLAIMED = {
    "relfair:FedAvg": "a baseline of paper 002; its theory (Thm 3) is about Scaff-PD-IA",
    "relfair:DRFA": "a baseline of paper 002; its theory (Thm 3) is about Scaff-PD-IA",
    "relfair:SAFL": "a baseline of paper 002; its theory (Thm 3) is about Scaff-PD-IA",
    "fairvfl:FedBCD": "the papers' baseline (Fair VFL with fair=False); their lemmas and "
                      "theorems are stated for Fair VFL",
    "constrfl:cProx-AL": "the baseline of paper 003 (Algorithm 3); its theorems are about "
                         "Algorithms 1 and 2",
}

SCAFFOLD_FAMILY = {"Scaff-PD-IA", "Scaff-PD", "Scaffold"}


def relfair_key(config: dict) -> str:
    """``vectorized/<local_work>/float32``: the training cells run the vectorized engine in
    float32 (``run_training``); a cell without ``local_work`` is the ``steps`` reading.
    """
    return f"vectorized/{config.get('local_work', 'steps')}/float32"


def fedmm_key(config: dict) -> str:
    """``<backend>/float32``: the MNIST and Office cells run ``DAProblem`` in float32; a cell
    without ``backend`` runs ``RunSpec``'s default, ``vectorized``.
    """
    return f"{config.get('backend', 'vectorized')}/float32"


def fairvfl_keys(config: dict) -> list[str]:
    """``<roles>/<block>/<Q>``: roles ``conf`` (every party active) or ``journal`` (passive
    parties); block ``LM-dense`` and ``LM-csr`` for a linear cell (the cells keep a party's
    columns sparse where they are mostly one-hot, so both kernels run) or ``MLP-<dtype>``;
    ``Q=1`` or ``Q>1`` (the stale read of other blocks only happens from the second local step).
    """
    roles = "conf" if config["version"] == "conf" else "journal"
    q = "Q>1" if int(config.get("Q", 1)) > 1 else "Q=1"
    if config["model"] == "LM":
        blocks = ["LM-dense", "LM-csr"]
    else:
        blocks = [f"MLP-{config.get('dtype', 'float32')}"]
    return [f"{roles}/{b}/{q}" for b in blocks]


def constrfl_key(cfg, quadratic: bool) -> str:
    """``<flags>/<solver>``: the reference-flag preset (``paper``, ``np``, ``fairness``,
    ``lcqp``) and the subproblem solver Algorithm 1's ADMM uses (``auto`` resolved: ``exact`` for
    quadratic merits, else ``newton``; ``newton_clip+reuse`` with Hessian reuse).
    """
    from repro.constrfl.config import ReferenceFlags, reference_flags

    changed = {k: v for k, v in cfg.reference.changed().items()
               if not k.startswith("cprox_")}        # cProx-AL's flags: not Algorithm 1's
    flags = "paper"
    for name in ("np", "fairness", "lcqp"):
        preset = {k: v for k, v in reference_flags(name).changed().items()
                  if not k.startswith("cprox_")}
        if changed == preset:
            flags = name
    if flags == "paper" and changed != ReferenceFlags().changed():
        flags = "custom:" + ",".join(f"{k}={v}" for k, v in sorted(changed.items()))
    solver = cfg.solver
    if solver == "auto":
        solver = "exact" if quadratic else "newton"
    if cfg.hessian_reuse and solver.startswith("newton"):
        solver += "+reuse"
    return f"{flags}/{solver}"


def _constrfl(name: str, config: dict) -> Iterator[tuple[str, str]]:
    if "hyper" in config:  # Table 2 / Fig. 2: the fairness sets
        from repro.constrfl.experiments._fair import config_for

        flags = config.get("ref_flags", "none")
        cfg = config_for(config["hyper"], 10, 10, flags=flags)
        keys = [constrfl_key(cfg, quadratic=False)]
    elif "dataset" in config and "mode" in config:  # Table 1 / Fig. 1: Neyman-Pearson
        from repro.constrfl.experiments._np import config_for

        keys = [constrfl_key(config_for(config["mode"], 10, 10), quadratic=False)]
    elif "m" in config and "mode" in config:  # Table 4: LCQP
        from repro.constrfl.experiments._lcqp import config_for

        keys = [constrfl_key(config_for(config["mode"]), quadratic=True)]
    else:  # Table 3: data sizes, no algorithm
        return
    for key in keys:
        yield "constrfl:Algorithm 1", key


def _families(paper: str, name: str, config: dict) -> Iterator[tuple[str, str]]:
    if paper == "relfair" and "method" in config:
        yield f"relfair:{config['method']}", relfair_key(config)
    elif paper == "fedmm" and "algorithm" in config:
        yield f"fedmm:{config['algorithm']}", fedmm_key(config)
    elif paper == "fairvfl" and "method" in config:
        for key in fairvfl_keys(config):
            yield f"fairvfl:{config['method']}", key
    elif paper == "constrfl":
        yield from _constrfl(name, config)


def experiment_paths() -> dict[str, set[str]]:
    """``{family: {path key}}`` over every registered experiment's cells at the planned scales,
    under every reading it declares (a reading's overrides can change the path, e.g. relfair's
    ``epochs``).
    """
    from repro.engine.registry import load_all

    out: dict[str, set[str]] = {}
    for name, exp in load_all().items():
        paper = name.split(".")[0]
        for scale in PLANNED_SCALES:
            if scale not in exp.scales:
                continue
            for reading in exp.select_readings("all"):
                for _base, config in exp.reading_configs(scale, reading):
                    for family, key in _families(paper, name, config):
                        out.setdefault(family, set()).add(key)
    return out


def unchecked(planned: dict[str, set[str]], driven: dict[str, list[str]]) -> list[str]:
    """The experiment paths no claiming check drove: ``planned`` is :func:`experiment_paths`,
    ``driven`` maps a check name to the ``paths`` of its result (``"<family>/<key>"``). A
    family no check claims and :data:`UNCLAIMED` does not excuse is reported whole.
    """
    out = []
    claimed: dict[str, list[str]] = {}
    for check, families in CLAIMS.items():
        for fam in families:
            claimed.setdefault(fam, []).append(check)
    for fam, keys in sorted(planned.items()):
        if fam in UNCLAIMED:
            continue
        if fam not in claimed:
            out.append(f"{fam}: no check claims a statement about it")
            continue
        for check in claimed[fam]:
            done = set(driven.get(check, ()))
            out += [f"{fam}/{key}: not driven by {check}" for key in sorted(keys)
                    if f"{fam}/{key}" not in done]
    return out
