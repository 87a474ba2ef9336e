"""fedmm's MNIST -> MNIST-M figures on a lent CUDA GPU (issue #20): the steps of
``scripts/gpu_fedmm_extended.sh``, which runs them in order on the device machine.

It imports only the engine and fedmm's figure experiments (the device machine's Python has
torch, numpy, scipy, joblib, tqdm and matplotlib but not cvxpy, which other papers import).

``python scripts/gpu_fedmm.py check --out DIR``
    per DA method, one FedMM round (M = 20, 2 clients x batch 64, real shapes on random
    images) with the ``vectorized`` (eager) and ``graphed`` backends on CUDA: rounds per
    second after a warm-up, and the largest difference of the two after 3 rounds. Writes
    ``DIR/check.json`` with ``graphed_ok`` (the graph captured and replayed without error and
    its numbers are finite).
``python scripts/gpu_fedmm.py repeat --out DIR``
    item 3 of the issue: one ``reduced`` cell (Fig. 4, MDD, FedMM, M = 20, seed 0), run in two
    separate processes on the GPU from the same seed; the two records' metrics and curves
    must be bitwise equal. Writes ``DIR/repeat.json``; exits 1 when they differ.
``python scripts/gpu_fedmm.py sweep --jobs N``
    every missing ``extended`` cell of Figs. 4, 5 and 2 (in that order: Figs. 4 and 5 decide the
    claims, issue 34; within Fig. 5 its 1+1 cells come first, its 2+2 and 5+5
    settings last) into the results folder, ``N`` processes at a time. An interrupt (``timeout
    -s INT``) stops it cleanly; finished cells keep their records and running ones their last
    checkpoint (every 25 rounds), so the next sweep on the same results folder continues.
``python scripts/gpu_fedmm.py import ARCHIVE [--results DIR]``
    here, after the call: the records of ``records.tgz`` into the results folder, each checked
    first (its experiment's code identity and data here equal the record's, its config is a
    cell of the experiment's grid at its scale, and its key is the one the engine gives that
    cell, config, data and code with the package version the record names). A record made
    where the package was not installed (a device machine gets the working tree only, issue 34)
    has a key made with version "not installed": it is saved under the key this checkout gives
    the same cell (``timings['rekeyed_from']`` keeps the old one); its content is unchanged.
``python scripts/gpu_fedmm.py pack --out DIR``
    the records (JSON, no checkpoints) of the three figures into ``DIR/records.tgz`` and a
    summary (cells done per experiment and scale, GPU wall seconds, local steps per second)
    into ``DIR/summary.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

FIGS = ("fedmm.fig4", "fedmm.fig5", "fedmm.fig2")  # the sweep's order (issue 34)
# the first such cell of the experiment's grid: FedMM with M = 20 (smoke scale: M = 2)
REPEAT_CELL = {"experiment": "fedmm.fig4", "da": "MDD", "algorithm": "FedMM", "seed": 0}


def _experiments():
    import repro.fedmm.experiments.fig2  # noqa: F401  (registers fedmm.fig2)
    import repro.fedmm.experiments.fig4  # noqa: F401
    import repro.fedmm.experiments.fig5  # noqa: F401
    from repro.engine.registry import get

    return [get(n) for n in FIGS]


def _results() -> Path:
    from repro.core import paths

    return paths.results_dir()


def cmd_check(args) -> int:
    import torch

    from repro.fedmm.instances import random_da_problem
    from repro.fedmm.methods import build
    from repro.fedmm.models import DA_METHODS, MnistNet
    from repro.fedmm.training import ETA3_BASE, blocks_for

    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = False
    dev = torch.device(args.device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    n, batch = (2048, 64) if dev.type == "cuda" else (64, 8)  # the CPU: a dry run
    rows, ok = [], True
    for method in DA_METHODS:
        net = MnistNet(method)
        theta = net.init(torch.Generator().manual_seed(0)).to(dev)
        row = {"method": method}
        states = {}
        for backend in ("vectorized", "graphed"):
            try:
                alg = build("FedMM", random_da_problem(net, n=n, batch=batch, device=dev),
                            init=theta, backend=backend,
                            blocks=blocks_for(net, "mnist", "paper"), local_steps=20,
                            eta3=ETA3_BASE[method])
                alg.step()  # warm-up (and the capture, for graphed)
                sync()
                t0 = time.perf_counter()
                alg.step()
                alg.step()
                sync()
                row[f"{backend}_steps_per_s"] = 40 / (time.perf_counter() - t0)
                states[backend] = alg.state.theta0
            except Exception as exc:  # report and go on: the sweep then uses vectorized
                row[f"{backend}_error"] = f"{type(exc).__name__}: {exc}"[:500]
        if len(states) == 2:
            d = (states["vectorized"] - states["graphed"]).abs().max().item()
            row["max_abs_diff_after_3_rounds"] = d
            row["bitwise_equal"] = bool(torch.equal(states["vectorized"], states["graphed"]))
            ok &= bool(torch.isfinite(states["graphed"]).all())
        else:
            ok = False
        rows.append(row)
        print(json.dumps(row), flush=True)
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu (dry run)"
    info = {"device": name, "torch": torch.__version__,
            "graphed_ok": ok, "rows": rows}
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "check.json").write_text(json.dumps(info, indent=1))
    print(f"graphed_ok={ok}", flush=True)
    return 0


def _repeat_config(scale: str = "reduced") -> tuple:
    """(experiment, config) of the repeat cell at ``scale``."""
    exp = [e for e in _experiments() if e.name == REPEAT_CELL["experiment"]][0]
    want = {k: v for k, v in REPEAT_CELL.items() if k != "experiment"}
    return exp, next(c for c in exp.configs(scale)
                     if all(c[k] == v for k, v in want.items()))


def cmd_cell(args) -> int:
    """One reduced run of the repeat cell into ``--results`` (a subprocess of ``repeat``)."""
    from repro.engine.runner import plan, run_cell

    exp, config = _repeat_config(args.scale)
    cell = next(c for c in plan(exp, args.scale) if c.config == config)
    rec, how = run_cell(exp, cell, Path(args.results), force=True)
    print(f"{how}: {rec.status} final acc {rec.metrics.get('test_acc_full')} in "
          f"{rec.timings['wall_s']:.1f} s", flush=True)
    return 0 if rec.ok else 1


def cmd_repeat(args) -> int:
    from repro.engine.records import scan_records

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    folders = [Path(args.scratch) / f"repeat{k}" for k in (0, 1)]
    t0 = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, __file__, "cell", "--results", str(f),
                               "--scale", args.scale]) for f in folders]
    codes = [p.wait() for p in procs]
    wall = time.perf_counter() - t0
    recs = [scan_records(f, REPEAT_CELL["experiment"]) for f in folders]
    same = (all(c == 0 for c in codes) and all(len(r) == 1 for r in recs)
            and recs[0][0].metrics == recs[1][0].metrics
            and recs[0][0].curves == recs[1][0].curves)
    _, config = _repeat_config(args.scale)
    info = {"config": config, "exit_codes": codes, "wall_s_both": wall,
            "bitwise_equal": same,
            "metrics": [r[0].metrics if r else None for r in recs],
            "wall_s": [r[0].timings.get("wall_s") if r else None for r in recs]}
    (out / "repeat.json").write_text(json.dumps(info, indent=1))
    print(f"repeat: bitwise_equal={same} ({wall:.0f} s for both)", flush=True)
    return 0 if same else 1


def cmd_sweep(args) -> int:
    from repro.engine.runner import run_experiments

    exps = _experiments()
    t0 = time.perf_counter()
    try:
        summaries = run_experiments(exps, args.scale, jobs=args.jobs, keep_going=True,
                                    progress=False, out=_results())
    except KeyboardInterrupt:
        print(f"sweep interrupted after {time.perf_counter() - t0:.0f} s; finished cells keep "
              "their records, running ones their last checkpoint", flush=True)
        return 0
    for s in summaries:
        print(f"{s.experiment} [{s.scale}]: {s.computed} computed, {s.cached} cached, "
              f"{s.not_run} not run", flush=True)
    return 0


def _scale_of(config: dict) -> str:
    if config.get("device") == "cuda":
        return "extended"
    return {150: "reduced", 3000: "reduced", 3: "smoke"}.get(config.get("rounds"), "other")


def _steps(config: dict, rounds: float) -> float:
    n = sum(int(x) for x in str(config.get("clients", "1+1")).split("+"))
    return rounds * config["local_steps"] * n


def cmd_pack(args) -> int:
    from repro.engine.records import scan_records

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = _results()
    summary, files = {}, []
    for name in FIGS:
        recs = scan_records(results, name)
        files += [results / name / f"{r.key}.json" for r in recs]
        for scale in ("extended", "reduced", "smoke"):
            mine = [r for r in recs if _scale_of(r.config) == scale]
            if not mine:
                continue
            ok = [r for r in mine if r.ok]
            own = [r for r in ok if "shared_from" not in r.timings]  # computed here
            wall = sum(float(r.timings.get("wall_s", 0.0)) for r in own)
            steps = sum(_steps(r.config, r.metrics["rounds"]) for r in own)
            summary[f"{name} [{scale}]"] = {
                "records": len(mine), "ok": len(ok), "shared_copies": len(ok) - len(own),
                "wall_s_summed": round(wall, 1),
                "client_steps": steps,
                "client_steps_per_s_per_run": round(steps / wall, 1) if wall else None,
                "backends": sorted({r.config.get("backend", "?") for r in mine})}
    with tarfile.open(out / "records.tgz", "w:gz") as tar:
        for f in files:
            tar.add(f, arcname=str(f.relative_to(results)))
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    for k, v in summary.items():
        print(k, json.dumps(v), flush=True)
    print(f"packed {len(files)} records into {out / 'records.tgz'}", flush=True)
    return 0


def cmd_import(args) -> int:
    """Check and bring home the records of a ``records.tgz`` (see the module docstring)."""
    from unittest import mock

    from repro.engine import records
    from repro.engine.code_identity import code_hash
    from repro.engine.planning import data_sha256
    from repro.engine.registry import get, load_all

    load_all()
    results = Path(args.results) if args.results else _results()
    here = records.versions()["fedrepro"]
    recs = []
    with tarfile.open(args.archive) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(".json"):
                recs.append(records.RunRecord.from_json(tar.extractfile(member).read().decode()))
    moved, refused, accepted = {}, [], []
    for rec in recs:
        exp = get(rec.experiment)
        code, shas = code_hash(exp), data_sha256(exp)
        made_with = rec.versions.get("fedrepro", "")
        with mock.patch.object(records, "versions", return_value={"fedrepro": made_with}):
            own_key = records.record_key(exp.name, rec.config, shas, code)
        grid = [c for s in exp.scales for c in exp.configs(s)]
        why = ("its code identity differs from this checkout's" if rec.code != code else
               "its data differ from the data here" if rec.data != shas else
               "its config is no cell of the experiment" if rec.config not in grid else
               "its key is not the one its cell, data and code give" if own_key != rec.key
               else "")
        if why:
            refused.append(f"{rec.experiment}/{rec.key}: {why}")
            continue
        new_key = records.record_key(exp.name, rec.config, shas, code)
        if new_key != rec.key:
            moved[f"{rec.experiment}/{rec.key}"] = f"{rec.experiment}/{new_key}"
            rec.timings = {**rec.timings, "rekeyed_from": (
                f"{rec.key} (made with fedrepro {made_with!r}; here {here!r})")}
            rec.key = new_key
        accepted.append(rec)
    for rec in accepted:
        if "shared_from" in rec.timings:  # the copy names the computed record by its new key
            rec.timings = {**rec.timings, "shared_from": moved.get(
                str(rec.timings["shared_from"]), rec.timings["shared_from"])}
        records.save_record(rec, results)
    print(f"imported {len(accepted)} of {len(recs)} records into {results} "
          f"({len(moved)} re-keyed from an uninstalled package's key)", flush=True)
    for line in refused:
        print(f"refused {line}", file=sys.stderr)
    return 1 if refused else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    # --scale/--device other than the defaults: a dry run of the script on a CPU machine
    for name in ("check", "repeat", "pack"):
        p = sub.add_parser(name)
        p.add_argument("--out", default=os.environ.get("OUT", "gpu-out"))
        if name == "repeat":
            p.add_argument("--scratch", default="/tmp/fedmm-repeat")
            p.add_argument("--scale", default="reduced")
        if name == "check":
            p.add_argument("--device", default="cuda")
    p = sub.add_parser("cell")
    p.add_argument("--results", required=True)
    p.add_argument("--scale", default="reduced")
    p = sub.add_parser("import")
    p.add_argument("archive")
    p.add_argument("--results", default=None)
    p = sub.add_parser("sweep")
    p.add_argument("--jobs", type=int, default=16)
    p.add_argument("--scale", default="extended")
    args = ap.parse_args(argv)
    return {"check": cmd_check, "repeat": cmd_repeat, "cell": cmd_cell, "sweep": cmd_sweep,
            "pack": cmd_pack, "import": cmd_import}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
