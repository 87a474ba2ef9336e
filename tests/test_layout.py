"""The layout rules of ``docs/design.md`` as an import-graph test over the package.

:func:`layout_violations` reads module sources with :mod:`ast` (every ``import``, lazy ones
inside functions included, except under ``if TYPE_CHECKING:``) and returns one line per
broken rule:

1. ``repro/core`` imports nothing of ``repro`` but ``repro.core`` (no engine, no paper), and
   neither ``theory`` nor ``bench``;
2. the modules of ``repro/<paper>/`` outside its ``experiments/`` import no ``repro.engine``;
3. nothing in ``repro/`` imports ``theory`` or ``bench`` (the command line ``repro.cli`` is the
   one front end allowed to hand ``repro theory`` over to ``python -m theory``);
4. ``repro/engine`` imports no paper package;
5. no paper imports another paper;
6. no modules of ``repro`` import each other in a cycle (lazy imports inside functions count:
   a cycle there is one a refactor can turn into an import-time failure);
7. no file of ``repro/`` is longer than 400 lines (one concern per file).

Each rule is shown to fire on a planted synthetic source, so a rule that can never fail is
caught too. A paper is any subpackage of ``repro`` other than ``core`` and ``engine`` (the
demo included): the test names none.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

import repro

REPRO = Path(repro.__file__).resolve().parent
INFRA = frozenset({"core", "engine"})
FRONT_ENDS = frozenset({"repro.cli", "repro.__main__"})  # may dispatch to `python -m theory`
OUTSIDE = ("theory", "bench")


def package_sources(root: Path = REPRO) -> dict[str, str]:
    """Module name -> source for every ``.py`` file under ``root`` (named ``repro.*``)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path.read_text()
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_of(module: str, source: str, is_package: bool = False) -> set[str]:
    """The absolute names ``module`` imports (``from a.b import c`` gives ``a.b`` and
    ``a.b.c``; relative imports are resolved against the module's package).
    """
    tree = ast.parse(source)
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            skip |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            found.add(stem)
            found |= {f"{stem}.{a.name}" for a in node.names if a.name != "*"}
    return found


def _paper(name: str) -> str | None:
    """The paper package of a ``repro.*`` name, None for core/engine/top-level modules."""
    parts = name.split(".")
    if len(parts) < 2 or parts[0] != "repro" or parts[1] in INFRA:
        return None
    return parts[1] if parts[1] not in ("cli", "__main__", "__init__") else None


def _area(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "repro" else None


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def layout_violations(sources: Mapping[str, str],
                      packages: Iterable[str] = ()) -> list[str]:
    """One line per broken layout rule (module docstring) over ``sources`` (module name ->
    source text); ``packages``: the names among them that are packages (``__init__``), for
    relative imports (default: any name that is a prefix of another).
    """
    names = set(sources)
    packages = set(packages) or {n for n in names if any(m.startswith(n + ".") for m in names)}
    graph = {m: imports_of(m, src, m in packages) for m, src in sources.items()}
    bad = []
    for mod, targets in sorted(graph.items()):
        area, paper = _area(mod), _paper(mod)
        for t in sorted(targets):
            tpaper = _paper(t)
            if area == "core" and _under(t, "repro") and not _under(t, "repro.core"):
                bad.append(f"rule 1: {mod} (core) imports {t}")
            if (paper and _under(t, "repro.engine")
                    and not _under(mod, f"repro.{paper}.experiments")):
                bad.append(f"rule 2: {mod} (paper code outside experiments/) imports {t}")
            if any(_under(t, o) for o in OUTSIDE) and mod not in FRONT_ENDS:
                bad.append(f"rule 3: {mod} imports {t}")
            if area == "engine" and tpaper:
                bad.append(f"rule 4: {mod} (engine) imports the paper {t}")
            if paper and tpaper and tpaper != paper:
                bad.append(f"rule 5: {mod} (paper {paper}) imports the paper {t}")
    inner = set(names)
    edges = {m: {t for t in graph[m] if t in inner and t != m} for m in inner}
    # a package importing its own submodules (re-exports) is not a cycle of modules
    edges = {m: {t for t in ts if not (m in packages and _under(t, m))} for m, ts in edges.items()}
    for comp in _cycles(edges):
        bad.append("rule 6: import cycle " + " <-> ".join(comp))
    return sorted(set(bad))


# ---------------------------------------------------------------- the rules can fail

CLEAN = {
    "repro": "",
    "repro.core": "",
    "repro.core.projections": "import numpy as np\nfrom repro.core.validation import check\n",
    "repro.core.validation": "def check(): ...\n",
    "repro.engine": "",
    "repro.engine.experiment": "from repro.core.validation import check\n",
    "repro.engine.registry": "import repro\nfrom repro.engine.experiment import Experiment\n",
    "repro.pa": "from repro.pa.algo import Algo\n",
    "repro.pa.algo": "from repro.core import projections\nfrom .messages import Msg\n",
    "repro.pa.messages": "",
    "repro.pa.experiments": "",
    "repro.pa.experiments.table1": ("from repro.engine.registry import register\n"
                                    "from ..algo import Algo\n"),
    "repro.pb": "",
    "repro.pb.algo": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                     "    from repro.engine.experiment import RunContext\n",
    "repro.cli": "def f():\n    from theory.__main__ import main\n",
}

PLANTS = {
    "rule 1": ("repro.core.validation", "def f():\n    from repro.engine import progress\n"),
    "rule 1 ": ("repro.core.projections", "from repro.pa.algo import Algo\n"),
    "rule 2": ("repro.pa.algo", "from repro.engine.experiment import RunContext\n"),
    "rule 3": ("repro.pa.messages", "import bench.harness\n"),
    "rule 3 ": ("repro.engine.experiment", "from theory.registry import register\n"),
    "rule 4": ("repro.engine.experiment", "from repro.pb import algo\n"),
    "rule 5": ("repro.pb.algo", "from repro.pa.messages import Msg\n"),
    "rule 6": ("repro.engine.experiment", "from repro.engine.registry import register\n"),
    "rule 6 ": ("repro.pa.messages", "def f():\n    from repro.pa.algo import Algo\n"),
}


def test_the_clean_synthetic_package_breaks_no_rule():
    assert layout_violations(CLEAN) == []


@pytest.mark.parametrize("rule", sorted(PLANTS))
def test_each_rule_fires_on_a_planted_violation(rule):
    module, source = PLANTS[rule]
    bad = layout_violations({**CLEAN, module: source})
    mine = [line for line in bad if line.startswith(rule.strip() + ":")]
    assert mine and all(module in line for line in mine), bad


def test_relative_imports_are_resolved():
    assert imports_of("repro.pa.experiments.table1", "from ..algo import Algo\n") >= {
        "repro.pa.algo", "repro.pa.algo.Algo"}
    assert "repro.pa.messages" in imports_of("repro.pa", "from . import messages\n",
                                             is_package=True)


# ---------------------------------------------------------------- the real package


def test_the_package_keeps_the_layout_rules():
    bad = layout_violations(package_sources())
    assert not bad, "layout rules broken (docs/design.md):\n" + "\n".join(bad)


MAX_LINES = 400


def test_no_file_of_the_package_is_longer_than_400_lines():
    long = {p.relative_to(REPRO.parent).as_posix(): n for p in sorted(REPRO.rglob("*.py"))
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"files over {MAX_LINES} lines (split them by concern): {long}"


def test_demo_and_registry_import_each_other_no_more():
    graph = {m: imports_of(m, s) for m, s in package_sources().items()}
    assert not any(_under(t, "repro.demo") for t in graph["repro.engine.registry"])
