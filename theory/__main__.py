"""``python -m theory``: run the theory checks, print a table, write theory.md and theory.json.

Usage::

    python -m theory [--only PATTERN] [--size small|default] [--out figures] [--update]

``--update`` keeps the checks of an earlier ``theory.json`` (same size) that this run did not
select, so one paper's checks can be rerun without rerunning everyone's.

Exit status: 0 when every selected check passed, 1 when any failed, 2 when ``--only`` matched
no check.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from theory.registry import SIZES, run_checks
from theory.result import CheckResult, jsonable

__all__ = ["main", "package_versions", "render_markdown", "render_table"]

_VERSIONED = ("fedrepro", "numpy", "scipy", "cvxpy", "clarabel", "torch", "sympy")


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for pkg in _VERSIONED:
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = "not installed"
    return versions


def _margin(value: float) -> str:
    return f"{value:.3g}" if math.isfinite(value) else str(value)


def _rows(results: list[CheckResult]) -> list[list[str]]:
    return [[r.name, f"{r.paper} {r.equation}", str(r.instances), _margin(r.worst_margin),
             "yes" if r.passed else "NO", f"{r.seconds:.2f}"] for r in results]


_HEADER = ["check", "paper / eq.", "instances", "worst margin", "passed", "seconds"]


def render_table(results: list[CheckResult]) -> str:
    """Fixed-width text table for the terminal."""
    rows = [_HEADER, *_rows(results)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_HEADER))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def render_markdown(results: list[CheckResult], versions: dict[str, str], size: str) -> str:
    """theory.md: the summary table, then claim and ground truth of each check."""
    out = ["# Theory checks", "",
           f"Size `{size}`. worst margin = min over criteria and instances of "
           "(tolerance - error); >= 0 passes.", "",
           "| " + " | ".join(_HEADER) + " |",
           "|" + "|".join("---" for _ in _HEADER) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in _rows(results)]
    out += ["", "## Checks", ""]
    for r in results:
        gt = r.ground_truth
        ground = ", ".join(f"{k}={gt[k]}" for k in ("solver", "solver_version", "cvxpy_version",
                                                    "statuses") if k in gt)
        out += [f"### {r.name}", "", f"- claim: {r.claim}",
                f"- paper: {r.paper}, {r.equation}",
                f"- ground truth: {ground or '-'}",
                f"- result: {'passed' if r.passed else 'FAILED'}, worst margin "
                f"{_margin(r.worst_margin)} over {r.instances} instances, seed {r.seed}", ""]
        if "error" in r.details:
            out += ["```", str(r.details["error"]).rstrip(), "```", ""]
    out += ["## Versions", ""] + [f"- {k}: {v}" for k, v in versions.items()] + [""]
    return "\n".join(out)


def _from_json(value: Any) -> Any:
    if value in ("nan", "inf", "-inf"):
        return float(value)
    return value


def _merge_earlier(results: list[CheckResult], path: Path, size: str) -> list[CheckResult]:
    """This run's results plus the earlier file's results of checks not rerun, in name order.

    An earlier file of another size is ignored (its margins are not comparable)."""
    if not path.is_file():
        return results
    earlier = json.loads(path.read_text())
    if earlier.get("size") != size:
        print(f"--update: {path} has size {earlier.get('size')!r}, not {size!r}; ignored",
              file=sys.stderr)
        return results
    names = {r.name for r in results}
    kept = [CheckResult(**{k: _from_json(v) if k == "worst_margin" else v
                           for k, v in d.items()})
            for d in earlier.get("checks", []) if d["name"] not in names]
    return sorted(results + kept, key=lambda r: r.name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m theory", description=__doc__.split("\n")[0])
    parser.add_argument("--only", default=None, metavar="PATTERN",
                        help="run checks whose name contains PATTERN (fnmatch globs allowed)")
    parser.add_argument("--size", default="default", choices=SIZES)
    parser.add_argument("--out", default="figures", type=Path,
                        help="folder for theory.md and theory.json (default: figures)")
    parser.add_argument("--update", action="store_true",
                        help="keep the earlier theory.json's results (same size) of the checks "
                             "this run does not select")
    args = parser.parse_args(argv)

    results = run_checks(args.only, args.size)
    if not results:
        print(f"no theory check matches {args.only!r}", file=sys.stderr)
        return 2
    versions = package_versions()
    print(render_table(results))
    if args.update:
        results = _merge_earlier(results, args.out / "theory.json", args.size)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "theory.md").write_text(render_markdown(results, versions, args.size))
    pattern = f"{args.only} (merged into earlier results)" if args.update else args.only
    payload = {"size": args.size, "pattern": pattern, "versions": versions,
               "checks": [r.to_dict() for r in results]}
    (args.out / "theory.json").write_text(json.dumps(jsonable(payload), indent=2) + "\n")
    failed = [r.name for r in results if not r.passed]
    if failed:
        print(f"FAILED: {', '.join(failed)}", file=sys.stderr)
        return 1
    print(f"all {len(results)} checks passed; wrote {args.out / 'theory.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
