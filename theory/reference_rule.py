"""What a theory check may take from the package, and the test of it over the imports and
attribute accesses of every check module.

A check holds the package against a reference. The reference side (the right-hand side of an
inequality, the value an identity must equal, the instance a statement is tested on, a
contraction factor that excuses a run, the schedule a theorem assumes) is computed in
``theory/`` from the paper's formulas and from the check's own record of the iterates it
observed. A bug in a package function used on the reference side would be consistent with
itself and pass; so a check may take from ``repro/``:

* the algorithm classes and configs it drives (and their components it hands them: merit
  objects, local solvers, engines),
* problem and instance builders (the problem's definition: its data, losses, gradients,
  constraints),
* data,

and never, on its reference side, the package's ground-truth, merit (``ell_k``), metric,
optimality or analysis functions, nor any state the algorithm computed (previous losses,
summed increments, local step counts, multiplier norms of the ambiguity set, ...). The
algorithm's iterates are observed, not trusted: what it did in a round is held against the round
written in ``theory/`` (the hypotheses of the statement, measured).

Where the statement is ABOUT a package function (a projection, a metric, the skewness of the
ambiguity set, the smoothness constants of the package's diagnostics), that function is the
measured side: the module names it in ``UNDER_TEST = {name: why}`` and its reference is written
in ``theory/``. :func:`violations` enforces the rule on a module's source: imports from the
modules in :data:`FORBIDDEN_MODULES`, the names in :data:`FORBIDDEN_NAMES`, accesses of the
attributes in :data:`FORBIDDEN_ATTRIBUTES`, and imports from any ``repro`` module not classified
in :data:`ALLOWED_MODULES` (a new module must be classified here first), unless the name is in
``UNDER_TEST``. ``tests/theory/test_reference_rule.py`` runs it over every check module.
The harness modules (registry, result, evidence, paths) are not checks and are not held to it.
"""

from __future__ import annotations

import ast
from pathlib import Path

__all__ = ["ALLOWED_MODULES", "FORBIDDEN_ATTRIBUTES", "FORBIDDEN_MODULES", "FORBIDDEN_NAMES",
           "violations"]

# algorithms and configs a check drives, problem and instance builders, data
ALLOWED_MODULES = frozenset({
    "repro.core.projections",          # the projections the algorithms' steps use
    "repro.core.validation",           # input checks of the checks' own helpers
    "repro.relfair.client_batch", "repro.relfair.clients", "repro.relfair.federated",
    "repro.relfair.instances", "repro.relfair.problem", "repro.relfair.scaff_pd_ia",
    "repro.fedmm.blocks", "repro.fedmm.fedmm", "repro.fedmm.instances", "repro.fedmm.methods",
    "repro.fairvfl.data", "repro.fairvfl.fair_vfl", "repro.fairvfl.instances",
    "repro.fairvfl.models", "repro.fairvfl.problem",
    "repro.constrfl.admm", "repro.constrfl.blocks", "repro.constrfl.config",
    "repro.constrfl.instances",
    "repro.constrfl.merit", "repro.constrfl.methods", "repro.constrfl.problem",
    "repro.constrfl.proxal", "repro.constrfl.start",
})
# ground truth, metrics, optimality, analysis and the package's own solvers of subproblems
FORBIDDEN_MODULES = frozenset({
    "repro.core.metrics", "repro.core.inequality", "repro.core.groundtruth",
    "repro.relfair.metrics",
    "repro.relfair.geometry", "repro.fairvfl.analysis", "repro.fairvfl.evaluate",
    "repro.fairvfl.diagnostics", "repro.constrfl.groundtruth", "repro.constrfl.optimality",
    "repro.constrfl.subsolvers", "repro.constrfl.cproxal",
})
# names of allowed modules that are ground truth, not builders
FORBIDDEN_NAMES = frozenset({
    "repro.relfair.instances.exact_saddle", "repro.relfair.instances.cvxpy_dual_step",
    "repro.relfair.problem.dual_step",
})
# state an algorithm computed, and the package's reference quantities reached as attributes
FORBIDDEN_ATTRIBUTES = frozenset({
    "prev_losses", "l1_norm", "skewness", "support", "contains", "is_singleton",
    "saddle", "psi_star", "grad_phi", "dpsi_star", "L12", "merits",
    "increments_sq", "last_increments_sq", "last_steps", "kappa", "lam_prev",
    "deo_signed", "masked_message", "mean_loss", "loss_derivative", "weights", "objective",
    "lagrangian", "last_residual", "admm_certificates", "dual_changes",
})


def _module_of(node: ast.ImportFrom, here: str) -> str:
    if node.level:
        base = here.split(".")[:-node.level]
        return ".".join(base + ([node.module] if node.module else []))
    return node.module or ""


def _under_test(tree: ast.Module) -> dict:
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == "UNDER_TEST"):
            return ast.literal_eval(node.value)
    return {}


def _import_violations(node, module: str, exempt) -> list[str]:
    out = []
    names = [f"{module}.{a.name}" for a in node.names] if isinstance(node, ast.ImportFrom) \
        else [a.name for a in node.names]
    for full in names:
        if not full.startswith("repro"):
            continue
        owner = full if full in FORBIDDEN_MODULES | ALLOWED_MODULES else full.rsplit(".", 1)[0]
        if full in exempt or owner in exempt:
            continue
        if full in FORBIDDEN_NAMES:
            out.append(f"line {node.lineno}: {full} is a ground-truth function of the package")
        elif owner in FORBIDDEN_MODULES or full in FORBIDDEN_MODULES:
            out.append(f"line {node.lineno}: imports {full} (a reference module of the package)")
        elif owner not in ALLOWED_MODULES and full not in ALLOWED_MODULES:
            out.append(f"line {node.lineno}: imports {full}, a repro module the rule does not "
                       "classify (theory/reference_rule.py ALLOWED_MODULES)")
    return out


def violations(source: str, module: str = "theory.check") -> list[str]:
    """The rule's violations in one check module's source (empty: compliant)."""
    tree = ast.parse(source)
    under = _under_test(tree)
    out = [f"UNDER_TEST[{k!r}] gives no reason" for k, v in under.items() if not str(v).strip()]
    exempt = set(under)
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            mod = _module_of(node, module)
            out += _import_violations(node, mod, exempt)
            used |= {f"{mod}.{a.name}" for a in node.names} | {mod}
        elif isinstance(node, ast.Import):
            out += _import_violations(node, "", exempt)
            used |= {a.name for a in node.names}
        elif isinstance(node, ast.Attribute):
            used.add(node.attr)
            if node.attr in FORBIDDEN_ATTRIBUTES and node.attr not in exempt:
                out.append(f"line {node.lineno}: reads .{node.attr} (state or a reference "
                           "quantity of the package)")
    stale = [k for k in under if k not in used and not any(u.startswith(k) for u in used)]
    out += [f"UNDER_TEST names {k!r}, which the module does not use" for k in stale]
    return out


def check_modules(root: Path) -> dict[str, list[str]]:
    """``{module: violations}`` over every check module under ``root`` (the theory package)."""
    harness = {"__init__", "__main__", "registry", "result", "evidence", "paths",
               "reference_rule"}
    out = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("")
        name = ".".join(rel.parts)
        if len(rel.parts) == 2 and rel.parts[1] in harness:
            continue
        found = violations(path.read_text(), name)
        if found:
            out[name] = found
    return out
