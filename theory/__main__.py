"""``python -m theory``: run the theory checks, print a line per check, write theory.md/json.

Usage::

    python -m theory [--only PATTERN] [--size small|default] [--out DIR] [--all]

Output folder: ``--out``, else ``$FEDREPRO_FIGURES``, else the package's figures folder
(``repro.core.paths.figures_dir()``), whose ``smoke/`` subfolder at ``--size small`` and whose
``partial/`` subfolder with ``--only`` (the committed theory.md and theory.json are written only
by a run of every check at the default size, ``make theory``). With ``--only`` the run is merged
with the earlier ``theory.json`` (the committed one for the partial folder; the checks not
selected keep their earlier results; ``--update`` is the old name of this) and the counts
printed are those of the checks run; ``--all`` replaces the file with this run's results only
(``make theory`` uses it). An output folder that cannot be written is said in one line before
any check runs. A line per check is printed as
it finishes, with a bar over checks on stderr.

Exit status: 0 when no selected check failed (a *finding*, a check whose theorem's conditions do
not apply, does not fail the run), 1 when any failed or diverged, 2 when ``--only`` matched no
check or the output folder cannot be written.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import sys
from collections import Counter
from importlib import metadata
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from repro.engine.run.code_identity import git_commit
from theory.core.pep import pep_table_lines, pep_text_table
from theory.evidence import render_terms
from theory.registry import SIZES, run_checks, selected
from theory.result import CheckResult, jsonable

__all__ = ["main", "output_dir", "package_versions", "progress_line", "render_markdown",
           "render_table", "summary"]

_VERSIONED = ("fedrepro", "numpy", "scipy", "cvxpy", "clarabel", "torch", "sympy", "pepit")
FIGURES_ENV = "FEDREPRO_FIGURES"


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for pkg in _VERSIONED:
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = "not installed"
    return versions


def output_dir(out: Path | None, size: str = "default", only: str | None = None) -> Path:
    """``out``, else ``$FEDREPRO_FIGURES``, else ``repro.core.paths.figures_dir()``: its
    ``smoke/`` subfolder for a size other than ``default``, its ``partial/`` subfolder for an
    ``--only`` run (``repro.core.paths.outputs_place``): only a run of every check at the
    default size writes the committed theory.md and theory.json.
    """
    if out is not None:
        return Path(out)
    if os.environ.get(FIGURES_ENV):
        return Path(os.environ[FIGURES_ENV])
    try:
        from repro.core.paths import outputs_place
    except ImportError:  # the shared paths module is not there: the documented default
        return Path("figures")
    part = f"the theory checks matching {only!r}" if only else ""
    return Path(outputs_place(smoke=size != "default", part=part).path)


def merge_source(out_dir: Path) -> Path:
    """The theory.json an ``--only`` run is merged with: the output folder's own, except in
    the partial folder, whose runs are merged with the committed file beside it (the figures
    folder's), never with an earlier partial run.
    """
    if out_dir.name == "partial" and (out_dir.parent / "theory.json").is_file():
        return out_dir.parent / "theory.json"
    return out_dir / "theory.json"


def _unwritable(out_dir: Path) -> str:
    """``""`` when a file can be written in ``out_dir`` (created if needed), else the one-line
    error saying so, before any check runs.
    """
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        probe = out_dir / f".write-test-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        return (f"python -m theory: output folder {out_dir} is not writable "
                f"({type(exc).__name__}: {exc.strerror or exc}); nothing was run. Choose "
                "another with --out DIR or $FEDREPRO_FIGURES")
    return ""


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3g}" if math.isfinite(value) else str(value)


_margin = _num


def _val(value: float | None) -> str:
    """Measured / bound / exact values: 6 digits (a rate of 0.999998 is not 1)."""
    if value is None:
        return "-"
    return f"{value:.6g}" if math.isfinite(value) else str(value)


def _verdict(r: CheckResult) -> str:
    return {"pass": "pass", "fail": "FAIL", "finding": "finding",
            "diverged": "DIVERGED"}[r.verdict]


def _share(r: CheckResult) -> str:
    """The share of non-trivial instances (``-`` where the check does not report it)."""
    return "-" if r.nontrivial is None else f"{r.nontrivial:.3g}"


def _rows(results: list[CheckResult]) -> list[list[str]]:
    return [[r.name, f"{r.paper} {r.equation}", str(r.size), str(r.instances),
             _num(r.worst_margin),
             _verdict(r), _share(r), _val(r.measured), _val(r.bound), _val(r.exact),
             _num(r.looseness), f"{r.seconds:.2f}"] for r in results]


_HEADER = ["check", "paper / eq.", "size", "instances", "worst margin", "verdict",
           "non-trivial", "measured",
           "theorem's bound", "exact", "looseness", "seconds"]


def summary(results: list[CheckResult]) -> str:
    """``"40 passed, 0 failed, 2 findings"``: findings (conditions do not apply) counted apart;
    ``", 1 diverged"`` is appended when a check's runs all diverged (a failure, not counted in
    ``failed``).
    """
    counts = {v: sum(r.verdict == v for r in results)
              for v in ("pass", "fail", "finding", "diverged")}
    plural = "" if counts["finding"] == 1 else "s"
    out = (f"{counts['pass']} passed, {counts['fail']} failed, "
           f"{counts['finding']} finding{plural}")
    return out + (f", {counts['diverged']} diverged" if counts["diverged"] else "")


def progress_line(index: int, total: int, r: CheckResult) -> str:
    """The line printed as a check finishes: name, verdict, margin (and bound), seconds."""
    parts = [f"[{index}/{total}]", r.name, _verdict(r), f"margin {_num(r.worst_margin)}"]
    if r.nontrivial is not None:
        parts.append(f"non-trivial {_share(r)}")
    if r.bound is not None:
        parts.append(f"measured {_val(r.measured)} bound {_val(r.bound)}")
    if r.looseness is not None:
        parts.append(f"looseness {_num(r.looseness)}")
    parts.append(f"{r.seconds:.2f}s")
    return "  ".join(parts)


def render_table(results: list[CheckResult]) -> str:
    """Fixed-width text table for the terminal."""
    rows = [_HEADER, *_rows(results)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_HEADER))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _shown(v: Any) -> str:
    """A value of the closest instance: floats (numpy's too) to 6 significant digits, inside
    dicts and lists as well; anything else as written.
    """
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, float) or type(v).__name__ in ("float16", "float32"):  # numpy's too
        return _val(float(v))
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_shown(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_shown(x) for x in v) + "]"
    return str(v)


def _closest(closest: dict) -> str:
    return ", ".join(f"{k}={_shown(v)}" for k, v in closest.items())


def render_markdown(results: list[CheckResult], versions: dict[str, str], size: str) -> str:
    """theory.md: the summary table, then claim, evidence and closest instance of each check."""
    out = ["# Theory checks", "",
           f"Size `{size}`{' (per row)' if size == 'mixed' else ''}: {summary(results)}. "
           "worst margin = min over criteria and instances "
           "of (tolerance - error), or (theorem's bound - measured) where a theorem bounds a "
           "measured quantity; >= 0 passes. looseness = how far the theorem's bound is from "
           "the measured value at the closest instance (the check says which ratio). A "
           "*finding* is a check whose theorem's conditions do not hold where the paper uses "
           "it: reported, not failed. non-trivial = the share of instances where the statement "
           "was non-trivial (a check reporting 0 fails); DIVERGED = every run diverged, a "
           "failure.", "",
           "| " + " | ".join(_HEADER) + " |",
           "|" + "|".join("---" for _ in _HEADER) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in _rows(results)]
    out += ["", *pep_table_lines(results)]
    out += ["## Checks", ""]
    for r in results:
        gt = r.ground_truth
        ground = ", ".join(f"{k}={gt[k]}" for k in ("solver", "solver_version", "cvxpy_version",
                                                    "statuses") if k in gt)
        word = {"pass": "passed", "fail": "FAILED", "finding": "finding",
                "diverged": "DIVERGED (every run diverged)"}[r.verdict]
        out += [f"### {r.name}", "", f"- claim: {r.claim}",
                f"- paper: {r.paper}, {r.equation}",
                f"- ground truth: {ground or '-'}",
                f"- result: {word}, worst margin "
                f"{_num(r.worst_margin)} over {r.instances} instances, seed {r.seed}"
                + ("" if r.nontrivial is None
                   else f"; non-trivial on a share {_share(r)} of them")]
        if r.bound is not None or r.measured is not None:
            out.append(f"- measured {_val(r.measured)}, theorem's bound {_val(r.bound)}, "
                       f"exact {_val(r.exact)}, looseness {_num(r.looseness)}")
        if r.closest:
            out.append(f"- closest instance: {_closest(r.closest)}")
        if r.finding:
            out.append(f"- finding: {r.finding}")
        out += _evidence_lines(r)
        out.append("")
        if "error" in r.details:
            out += ["```", str(r.details["error"]).rstrip(), "```", ""]
    out += render_terms(results)
    out += ["## Versions", ""] + [f"- {k}: {v}" for k, v in versions.items()]
    out += [_commit_line(results), ""]
    return "\n".join(out)


def _commit_line(results: list[CheckResult]) -> str:
    """Which commit made the checks: one, or each with its count (a merged file)."""
    counts = Counter(r.commit or "not recorded" for r in results)
    if len(counts) == 1:
        return f"- commit: {next(iter(counts))}"
    return "- commits: " + ", ".join(f"{c} ({n} check{'s' * (n != 1)})"
                                     for c, n in sorted(counts.items()))


def _evidence_lines(r: CheckResult) -> list[str]:
    """The named criteria, the package paths driven and the paper's own setting of a check."""
    out = []
    if r.criteria:
        out.append("- criteria (worst margin): " + "; ".join(
            f"{k} {_num(v)}" for k, v in r.criteria.items()))
    if r.paths:
        out.append(f"- package paths driven: {', '.join(r.paths)}")
    if r.paper_setting:
        out.append(f"- paper's setting: {_closest(r.paper_setting)}")
    if r.paper_finding:
        out.append(f"- finding at the paper's setting: {r.paper_finding}")
    return out


_FLOATS = ("worst_margin", "measured", "bound", "exact", "looseness")


def _from_json(d: dict[str, Any]) -> CheckResult:
    known = {f.name for f in dataclasses.fields(CheckResult)}
    out = {k: float(v) if k in _FLOATS and isinstance(v, str) else v
           for k, v in d.items() if k in known}
    if isinstance(out.get("criteria"), dict):  # non-finite margins are strings in the JSON
        out["criteria"] = {k: float(v) for k, v in out["criteria"].items()}
    return CheckResult(**out)


def _merge_earlier(results: list[CheckResult], path: Path, size: str) -> list[CheckResult]:
    """The results of this run plus the earlier file's results of checks not rerun, by name.

    Checks of an earlier file of another size are kept, each with its own ``size`` (shown per
    row; the file's size becomes ``"mixed"``): a small ``--only`` run never wipes a
    default-size file.
    """
    if not path.is_file():
        return results
    try:
        earlier = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        print(f"{path}: unreadable ({exc}); replaced by this run's results only "
              "(rerun without --only to refill it)", file=sys.stderr)
        return results
    names = {r.name for r in results}
    kept = [_from_json({"size": earlier.get("size"), **d})
            for d in earlier.get("checks", []) if d["name"] not in names]
    other = sorted({str(r.size) for r in kept if r.size != size})
    if other:
        print(f"{path}: merged with earlier checks of size {', '.join(other)} (this run: "
              f"{size}); each row shows its size; rerun with --all for one size",
              file=sys.stderr)
    return sorted(results + kept, key=lambda r: r.name)


def _file_size(results: list[CheckResult], size: str) -> str:
    sizes = {r.size or size for r in results}
    return sizes.pop() if len(sizes) == 1 else "mixed"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m theory", description=__doc__.split("\n")[0])
    parser.add_argument("--only", default=None, metavar="PATTERN",
                        help="run checks whose name contains PATTERN (fnmatch globs allowed); "
                             "merged into the earlier theory.json unless --all")
    parser.add_argument("--size", default="default", choices=SIZES)
    parser.add_argument("--out", default=None, type=Path,
                        help="folder for theory.md and theory.json (default: $FEDREPRO_FIGURES, "
                             "else the package's figures folder)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--all", action="store_true",
                      help="replace theory.json with this run's results only")
    mode.add_argument("--update", action="store_true",
                      help="merge into the earlier theory.json (the default with --only; "
                           "kept for old commands)")
    args = parser.parse_args(argv)

    out_dir = output_dir(args.out, args.size, args.only)
    names = selected(args.only)
    if not names:
        print(f"no theory check matches {args.only!r}", file=sys.stderr)
        return 2
    source = merge_source(out_dir)
    if (args.only and not args.all and (out_dir / "theory.md").is_file()
            and not source.is_file()):  # nothing to merge into
        print(f"{out_dir / 'theory.md'} has no theory.json beside it to merge --only into; "
              "nothing run (it would be replaced by the selected checks alone): rerun with "
              "--all to replace it, or --out DIR", file=sys.stderr)
        return 2
    unwritable = _unwritable(out_dir)
    if unwritable:
        print(unwritable, file=sys.stderr)
        return 2
    if out_dir != output_dir(args.out, "default"):
        print(f"theory.md and theory.json in {out_dir} (the committed ones are written only by "
              "a run of every check at the default size: make theory)", file=sys.stderr)
    bar = tqdm(total=len(names), desc=f"theory [{args.size}]", unit="check", file=sys.stderr,
               dynamic_ncols=True)
    done = [0]

    def report(r: CheckResult) -> None:
        done[0] += 1
        bar.write(progress_line(done[0], len(names), r), file=sys.stdout)
        sys.stdout.flush()
        bar.update(1)

    try:
        results = run_checks(args.only, args.size, on_result=report)
    finally:
        bar.close()
    results = [dataclasses.replace(r, commit=git_commit()) for r in results]
    print(render_table(results))
    if pep := pep_text_table(results):
        print(pep)
    merge = bool(args.only) and not args.all
    written = _write(_merge_earlier(results, source, args.size) if merge else results,
                     out_dir, args, merge)
    ran = summary(results)
    checks = f"check{'s' * (len(results) != 1)}"
    line = (f"{ran} (the {len(results)} {checks} run); wrote {out_dir / 'theory.md'}"
            + (f", which holds {len(written)} checks ({summary(written)}) merged with "
               f"{source}" if merge and len(written) > len(results) else ""))
    print(line)
    # an earlier failure merged into the file keeps the run failing until it is rerun
    failed = [r.name for r in written if r.verdict in ("fail", "diverged")]
    if failed:
        ran = {r.name for r in results}
        print("FAILED: " + ", ".join(n + ("" if n in ran else " (earlier run, merged)")
                                      for n in failed), file=sys.stderr)
        return 1
    return 0


def _write(results: list[CheckResult], out_dir: Path, args, merge: bool) -> list[CheckResult]:
    """theory.md and theory.json of ``results`` in ``out_dir``; the checks written."""
    versions = package_versions()
    out_dir.mkdir(parents=True, exist_ok=True)
    file_size = _file_size(results, args.size)
    (out_dir / "theory.md").write_text(render_markdown(results, versions, file_size))
    pattern = f"{args.only} (merged into earlier results)" if merge else args.only
    payload = {"size": file_size, "pattern": pattern, "versions": versions,
               "checks": [{**r.to_dict(), "verdict": r.verdict} for r in results]}
    (out_dir / "theory.json").write_text(json.dumps(jsonable(payload), indent=2) + "\n")
    return results


if __name__ == "__main__":
    sys.exit(main())
