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

__all__ = ["CLAIMS", "PLANNED_SCALES", "UNCLAIMED", "constrfl_key", "experiment_paths",
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
