"""Byte-equality of run records across a refactor.

Subcommands, runnable against any checkout of fedrepro (before or after the move of the
engine out of ``repro.core``):

``python scripts/refactor_check.py smoke --results DIR``
    runs every registered experiment's smoke cells (every reading) into DIR: the records a
    refactor must leave equal, cell by cell.

``python scripts/refactor_check.py sample --results DIR [--timeout S]``
    runs, for every registered experiment, the first cell of its paper-scale plan (each in a
    subprocess with a time limit; a cell over the limit is listed as not sampled).

``python scripts/refactor_check.py compare A B [--only GLOB] [--roots ROOT_A ROOT_B]
[--default FIELD=JSON ...]``
    matches the records of two results folders by (experiment, config, data) and compares
    every field except ``timings``, the wall seconds some experiments keep as metrics
    (:data:`TIMING_METRICS`) and the code identity (``key``, ``code``, ``commit``: the
    key hashes the code, by design, so it changes with any moved file). A cell field that a
    refactor adds (a hyperparameter that became a cell field) is named with ``--default``
    and its default value: a config holding the field at that value matches the config
    without it. Prints one line per experiment and exits 1 on any difference or unmatched
    record.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

IGNORED = ("timings", "key", "code", "commit")
# Wall-clock seconds that constrfl's records kept among their metrics until they moved to
# ``timings`` (CellResult.timings): they differ between any two runs, so a
# comparison with records made before that ignores them.
TIMING_METRICS = ("seconds_alg1", "seconds_cprox")


def _engine():
    import repro

    engine = Path(repro.__file__).parent / "engine"
    if (engine / "run").is_dir():
        from repro.engine import registry
        from repro.engine.run import runner
    elif engine.is_dir():  # older commits: the engine's modules side by side
        from repro.engine import registry, runner
    else:  # before the engine was a package of its own
        from repro.core import registry, runner
    return registry, runner


def run_one(name: str, results: str, reading: str = "") -> None:
    registry, runner = _engine()
    exp = registry.get(name)
    scale = "paper" if "paper" in exp.scales else exp.scales[-1]
    # --reading: the first cell of another declared reading (a cheaper one, e.g. relfair's
    # `steps`, whose cells take ~2 min at paper scale against ~12 for the primary `epochs`)
    chosen = next(r for r in exp.readings if r.id == reading) if reading else None
    cell = runner.plan(exp, scale, chosen)[0]
    rec, how = runner.run_cell(exp, cell, Path(results), keep_going=True)
    print(f"{name}: {scale} cell {json.dumps(cell.config, sort_keys=True)[:100]} {how} "
          f"{rec.status}")


def sample(results: str, timeout: float, skip: list[str]) -> int:
    registry, _ = _engine()
    for name in registry.load_all():
        if any(name.startswith(s) for s in skip):
            print(f"{name}: not sampled (skipped by --skip)")
            continue
        try:
            subprocess.run([sys.executable, __file__, "one", name, results], timeout=timeout,
                           check=True)
        except subprocess.TimeoutExpired:
            print(f"{name}: not sampled: first paper cell over {timeout:.0f} s")
    return 0


def _without_defaults(config: dict, defaults: dict) -> dict:
    """``config`` less each field that holds its declared default (a field new in one side)."""
    return {k: v for k, v in config.items() if not (k in defaults and defaults[k] == v)}


def smoke(results: str) -> int:
    """Every experiment's smoke cells, every reading, into ``results``."""
    from repro.cli import main as repro_main

    return repro_main(["run", "all", "--scale", "smoke", "--reading", "all", "--results", results,
                       "--no-progress"])


def _load(folder: Path, only: str = "*", root: str = "", defaults: dict | None = None) -> dict:
    out = {}
    for path in sorted(folder.glob(f"{only}/*.json")):
        text = path.read_text()
        if root:  # a not_run reason names the checkout's data cache: compare it as <checkout>
            text = text.replace(root.rstrip("/"), "<checkout>")
        d = json.loads(text)
        config = _without_defaults(d["config"], defaults or {})
        ident = json.dumps([d["experiment"], config, d.get("data", {})], sort_keys=True)
        out[ident] = {k: v for k, v in d.items() if k not in IGNORED}
        out[ident]["config"] = config
        out[ident]["metrics"] = {k: v for k, v in d["metrics"].items()
                                 if k not in TIMING_METRICS}
    return out


def compare(a: Path, b: Path, only: str = "*", roots: tuple[str, str] = ("", ""),
            defaults: dict | None = None) -> int:
    ra, rb = _load(a, only, roots[0], defaults), _load(b, only, roots[1], defaults)
    bad = 0
    per_exp: dict[str, list[int]] = {}
    for ident in sorted(set(ra) | set(rb)):
        exp = json.loads(ident)[0]
        tally = per_exp.setdefault(exp, [0, 0, 0])  # equal, different, unmatched
        if ident not in ra or ident not in rb:
            tally[2] += 1
            bad += 1
            side = "after" if ident in ra else "before"
            print(f"  unmatched ({'missing ' + side}): {ident[:160]}")
        elif ra[ident] != rb[ident]:
            tally[1] += 1
            bad += 1
            diff = sorted(k for k in set(ra[ident]) | set(rb[ident])
                          if ra[ident].get(k) != rb[ident].get(k))
            print(f"  different fields {diff}: {ident[:160]}")
        else:
            tally[0] += 1
    for exp, (eq, diff, un) in sorted(per_exp.items()):
        print(f"{exp:<30} equal {eq:>3}  different {diff}  unmatched {un}")
    print(f"{sum(t[0] for t in per_exp.values())} records equal, {bad} not "
          f"(ignored fields: {', '.join(IGNORED)}; metrics {', '.join(TIMING_METRICS)})")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("smoke")
    m.add_argument("--results", required=True)
    s = sub.add_parser("sample")
    s.add_argument("--results", required=True)
    s.add_argument("--timeout", type=float, default=240.0)
    s.add_argument("--skip", nargs="*", default=["fedmm.fig", "test."])
    o = sub.add_parser("one")
    o.add_argument("name")
    o.add_argument("results")
    o.add_argument("--reading", default="", help="a declared reading's id (default: primary)")
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    c.add_argument("--only", default="*", help="experiment glob, e.g. 'relfair.*'")
    c.add_argument("--roots", nargs=2, default=("", ""), metavar=("ROOT_A", "ROOT_B"),
                   help="the checkouts that made A and B: their paths in text compare equal")
    c.add_argument("--default", action="append", default=[], metavar="FIELD=JSON",
                   help="a cell field one side adds, at its default (e.g. rho=1.0)")
    args = ap.parse_args()
    if args.cmd == "smoke":
        return smoke(args.results)
    if args.cmd == "sample":
        return sample(args.results, args.timeout, args.skip)
    if args.cmd == "one":
        run_one(args.name, args.results, args.reading)
        return 0
    defaults = {f: json.loads(v) for f, v in (d.split("=", 1) for d in args.default)}
    return compare(args.a, args.b, args.only, tuple(args.roots), defaults)


if __name__ == "__main__":
    sys.exit(main())
