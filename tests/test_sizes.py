"""Rooms a reader can take in: every file of ``repro/`` at most 400 lines, every function at
most 80 (from its first decorator to its last line, docstring included).

A function may be longer only where it is one paper's algorithm box: a ``step()`` or ``run()``
that follows a printed algorithm line by line, so that splitting it would separate lines the
paper prints together. Such functions are listed in :data:`ALGORITHM_BOXES` with the algorithm
they follow; a solver helper (a Newton solve, a projection) or plumbing is never listed. An
entry that is no longer over the limit is an error too, so the list stays exact.
"""

from __future__ import annotations

import ast
from pathlib import Path

import repro

REPRO = Path(repro.__file__).resolve().parent
MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 80

# "path/relative/to/repro.py:qualified.name" -> the printed algorithm it follows line by line
ALGORITHM_BOXES: dict[str, str] = {}


def _files() -> list[Path]:
    return sorted(p for p in REPRO.rglob("*.py") if "__pycache__" not in p.parts)


def function_lengths(source: str) -> dict[str, int]:
    """Qualified name (``Class.method``, ``outer.inner``) -> lines, decorators included."""
    out: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                    out[name] = child.end_lineno - first + 1
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return out


def test_function_lengths_are_counted_from_the_decorator_with_nesting():
    source = "@dec\ndef f():\n    def g():\n        return 1\n    return g\n\nclass C:\n" \
             "    def m(self):\n        x = 1\n        return x\n"
    assert function_lengths(source) == {"f": 5, "f.g": 2, "C.m": 3}


def test_no_file_in_repro_exceeds_400_lines():
    long = {str(p.relative_to(REPRO)): n for p in _files()
            if (n := len(p.read_text().splitlines())) > MAX_FILE_LINES}
    assert not long, f"files over {MAX_FILE_LINES} lines (split them by concern): {long}"


def test_no_function_exceeds_80_lines_unless_it_is_an_algorithm_box():
    long = {}
    for p in _files():
        rel = str(p.relative_to(REPRO))
        for name, n in function_lengths(p.read_text()).items():
            if n > MAX_FUNCTION_LINES:
                long[f"{rel}:{name}"] = n
    unlisted = {k: n for k, n in long.items() if k not in ALGORITHM_BOXES}
    assert not unlisted, f"functions over {MAX_FUNCTION_LINES} lines: {unlisted}"
    stale = sorted(set(ALGORITHM_BOXES) - set(long))
    assert not stale, f"allow-list entries no longer over the limit (remove them): {stale}"
