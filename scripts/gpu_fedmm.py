"""fedmm's MNIST -> MNIST-M figures on a lent CUDA GPU: the steps of
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
    every missing ``extended`` cell of Figs. 4, 5, 2 and the DANN mu diagnostic, in the order
    of :func:`stages` (``plan`` prints it: first the three Fig. 4 runs that froze before
    training checked finiteness, then the rest of Fig. 4, seeds 0-1 before 2, Fig. 5's 1+1
    baselines, the mu = 2 diagnostic, Fig. 2, Fig. 5's 2+2 and 5+5 settings last) into the
    results folder, ``N`` processes at a time. An interrupt (``timeout -s INT``) stops it
    cleanly; finished cells keep their records and running ones their last checkpoint (every
    25 rounds), so the next sweep on the same results folder continues.
``python scripts/gpu_fedmm.py plan [--scale S]``
    the sweep's stages and their cells, in order (nothing run).
``python scripts/gpu_fedmm.py import ARCHIVE [--results DIR] [--accelerator NAME]``
    here, after the call: the records of ``records.tgz`` into the results folder, each checked
    first (its data here equal the record's, its config is a cell of the experiment's grid at
    its scale, a CUDA cell names the accelerator model it ran on, and its key is the one the
    engine gives that cell, config, data, code and accelerator with the package version the
    record names). A record made where the package was not installed (a device machine gets
    the working tree only) has a key made with version "not installed": it is saved under the
    key this checkout gives the same cell (``timings['rekeyed_from']`` keeps the old one); its
    content is unchanged. Records that predate records naming their accelerator get the
    model ``--accelerator`` or ``<ARCHIVE without .tgz>.json`` names. A record made by other
    code than this checkout's is kept as what it is: stale, shown marked, never as current,
    until a rerun of its cell replaces it.
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

FIGS = ("fedmm.fig4", "fedmm.fig5", "fedmm.dann_mu", "fedmm.fig2")  # :func:`stages` orders
# the first such cell of the experiment's grid: FedMM with M = 20 (smoke scale: M = 2)
REPEAT_CELL = {"experiment": "fedmm.fig4", "da": "MDD", "algorithm": "FedMM", "seed": 0}


def _experiments():
    import repro.fedmm.experiments.dann_mu  # noqa: F401  (registers fedmm.dann_mu)
    import repro.fedmm.experiments.fig2  # noqa: F401  (registers fedmm.fig2)
    import repro.fedmm.experiments.fig4  # noqa: F401
    import repro.fedmm.experiments.fig5  # noqa: F401
    from repro.engine.registry import get

    return [get(n) for n in FIGS]


def stages(scale: str) -> list[tuple[str, object]]:
    """The sweep's plan, in the order its cells are handed to the workers: ``(what, the
    experiment restricted to those cells)`` (the same experiment, so the same keys and seeds).

    1. the three Fig. 4 runs whose first GPU records froze on one class (MDD FedMM M = 20 and
       M = 25 seed 0, DANN FedMM M = 20 seed 2): does the finiteness check end them, where?
    2. the rest of Fig. 4, seeds 0-1, then 3. its seed 2 (Fig. 4 decides three claims);
    4. Fig. 5's 1+1 baselines (its FedMM 1+1 runs are Fig. 4's, shared);
    5. the DANN step-size diagnostic (mu = 2; its mu = 1 runs are Fig. 4's);
    6. Fig. 2; 7. Fig. 5's 2+2 and 5+5 settings (2x and 5x a 1+1 run).
    """
    import dataclasses

    from repro.fedmm.experiments._cells import mnist_cell

    fig4, fig5, diag, fig2 = _experiments()
    froze = [mnist_cell(scale, "MDD", "FedMM", 20, seed=0),
             mnist_cell(scale, "MDD", "FedMM", 25, seed=0),
             mnist_cell(scale, "DANN", "FedMM", 20, seed=2)]

    def only(exp, what, keep):
        return what, dataclasses.replace(exp, cells=lambda s: [c for c in exp.cells(s)
                                                                if keep(c)])

    return [only(fig4, "Fig. 4, the 3 runs that froze", lambda c: c in froze),
            only(fig4, "Fig. 4, seeds 0-1", lambda c: c not in froze and c["seed"] < 2),
            only(fig4, "Fig. 4, seed 2", lambda c: c not in froze and c["seed"] >= 2),
            only(fig5, "Fig. 5, 1+1", lambda c: "clients" not in c),
            only(diag, "DANN mu diagnostic", lambda c: True),
            only(fig2, "Fig. 2", lambda c: True),
            only(fig5, "Fig. 5, 2+2 and 5+5", lambda c: "clients" in c)]


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
    from repro.engine.run.runner import plan, run_cell

    exp, config = _repeat_config(args.scale)
    cell = next(c for c in plan(exp, args.scale) if c.config == config)
    rec, how = run_cell(exp, cell, Path(args.results), force=True)
    print(f"{how}: {rec.status} final acc {rec.metrics.get('test_acc_full')} in "
          f"{rec.timings['wall_s']:.1f} s", flush=True)
    return 0 if rec.ok else 1


def cmd_repeat(args) -> int:
    from repro.engine.records.records import scan_records

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


def cmd_plan(args) -> int:
    """Print :func:`stages` at ``--scale``: what each stage runs, in order."""
    from repro.engine.run.planning import plan

    for what, exp in stages(args.scale):
        cells = plan(exp, args.scale)
        print(f"{what}: {len(cells)} cells of {exp.name}: " + "; ".join(
            f"{c.config['da']} {c.config['algorithm']} M={c.config['local_steps']} seed "
            f"{c.config['seed']}" + (f" {c.config['clients']}" if "clients" in c.config else "")
            + (f" p={c.config['p']}" if c.config["p"] != 1.0 else "")
            + (f" {c.config['preset']}" if c.config["preset"] != "paper" else "")
            for c in cells[:12]) + (" ..." if len(cells) > 12 else ""), flush=True)
    return 0


def cmd_sweep(args) -> int:
    """Every missing cell of :func:`stages`, in that order, ``--jobs`` at a time (one sweep: a
    worker that finishes takes the next cell of the plan, whatever its stage).
    """
    from repro.engine.run.planning import diverged
    from repro.engine.run.runner import run_experiments

    plan = stages(args.scale)
    t0 = time.perf_counter()
    try:
        summaries = run_experiments([exp for _, exp in plan], args.scale, jobs=args.jobs,
                                    keep_going=True, progress=False, out=_results())
    except KeyboardInterrupt:
        print(f"sweep interrupted after {time.perf_counter() - t0:.0f} s; finished cells keep "
              "their records, running ones their last checkpoint", flush=True)
        return 0
    for (what, _), s in zip(plan, summaries, strict=True):
        recs = s.records
        print(f"{what} ({s.experiment} [{s.scale}]): {sum(r.ok for r in recs)} with a result, "
              f"{sum(diverged(r) for r in recs)} diverged, "
              f"{sum(r.status == 'not_run' for r in recs)} not run, "
              f"{sum(r.status == 'failed' and not diverged(r) for r in recs)} failed "
              f"of {len(recs)}", flush=True)
    return 0


def _scale_of(config: dict) -> str:
    if config.get("device") == "cuda":
        return "extended"
    return {150: "reduced", 3000: "reduced", 3: "smoke"}.get(config.get("rounds"), "other")


def _steps(config: dict, rounds: float) -> float:
    n = sum(int(x) for x in str(config.get("clients", "1+1")).split("+"))
    return rounds * config["local_steps"] * n


def cmd_pack(args) -> int:
    from repro.engine.records.records import scan_records

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
                "backends": sorted({r.config.get("backend", "?") for r in mine}),
                "accelerators": sorted({r.accelerator or "cpu" for r in mine}),
                "diverged": sum(r.status == "failed" and "DivergenceError" in r.reason
                                for r in mine)}
    with tarfile.open(out / "records.tgz", "w:gz") as tar:
        for f in files:
            tar.add(f, arcname=str(f.relative_to(results)))
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    for k, v in summary.items():
        print(k, json.dumps(v), flush=True)
    print(f"packed {len(files)} records into {out / 'records.tgz'}", flush=True)
    return 0


def _archive_accelerator(archive: Path, given: str | None) -> str:
    """The accelerator model the records of ``archive`` that do not name one were made on:
    ``--accelerator``, else the ``accelerator`` of ``<archive>.json`` beside it (records made
    before records named their accelerator; ``gpu-records/`` holds one per archive), else "".
    """
    if given:
        return given
    side = Path(str(archive).removesuffix(".tgz") + ".json")
    if side.is_file():
        return str(json.loads(side.read_text()).get("accelerator", ""))
    return ""


def _check_record(rec, exp, shas: dict, accelerator: str) -> str:
    """Why ``rec`` cannot be imported, or "": its data must be this checkout's, its config a
    cell of the experiment's grid, a CUDA cell's accelerator known, and its key the one its
    cell, data, code and accelerator give with the package version the record names.
    """
    from unittest import mock

    from repro.engine.records import records

    made_with = rec.versions.get("fedrepro", "")
    with mock.patch.object(records, "versions", return_value={"fedrepro": made_with}):
        own_key = records.record_key(exp.name, rec.config, shas, rec.code, rec.accelerator)
    grid = [c for s in exp.scales for c in exp.configs(s)]
    return ("its data differ from the data here" if rec.data != shas else
            "its config is no cell of the experiment" if rec.config not in grid else
            "its key is not the one its cell, data and code give" if own_key != rec.key else
            "it ran on CUDA and names no accelerator model (pass --accelerator NAME)"
            if rec.config.get("device") == "cuda" and not (rec.accelerator or accelerator)
            else "")


def cmd_import(args) -> int:
    """Check and bring home the records of a ``records.tgz`` (see the module docstring)."""
    from repro.engine.records import records
    from repro.engine.registry import get, load_all
    from repro.engine.run.code_identity import code_hash, stale_note
    from repro.engine.run.planning import data_sha256

    load_all()
    results = Path(args.results) if args.results else _results()
    here = records.versions()["fedrepro"]
    model = _archive_accelerator(Path(args.archive), args.accelerator)
    recs = []
    with tarfile.open(args.archive) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(".json"):
                recs.append(records.RunRecord.from_json(tar.extractfile(member).read().decode()))
    moved, refused, accepted, stale = {}, [], [], set()
    for rec in recs:
        exp = get(rec.experiment)
        shas = data_sha256(exp)
        why = _check_record(rec, exp, shas, model)
        if why:
            refused.append(f"{rec.experiment}/{rec.key}: {why}")
            continue
        if rec.config.get("device") == "cuda" and not rec.accelerator:
            rec.accelerator = model  # made before records named it: the archive's model
        if rec.code != code_hash(exp):
            stale.add(stale_note(rec.code))
        new_key = records.record_key(exp.name, rec.config, shas, rec.code, rec.accelerator)
        if new_key != rec.key:
            moved[f"{rec.experiment}/{rec.key}"] = f"{rec.experiment}/{new_key}"
            rec.timings = {**rec.timings, "rekeyed_from": (
                f"{rec.key} (made with fedrepro {rec.versions.get('fedrepro', '')!r}; here "
                f"{here!r}; accelerator {rec.accelerator or 'none'})")}
            rec.key = new_key
        accepted.append(rec)
    for rec in accepted:
        if "shared_from" in rec.timings:  # the copy names the computed record by its new key
            rec.timings = {**rec.timings, "shared_from": moved.get(
                str(rec.timings["shared_from"]), rec.timings["shared_from"])}
        records.save_record(rec, results)
    n_stale = sum(r.code != code_hash(get(r.experiment)) for r in accepted)
    made_on = ", ".join(sorted({r.accelerator or "the CPU" for r in accepted})) or "-"
    print(f"imported {len(accepted)} of {len(recs)} records into {results} "
          f"({len(moved)} re-keyed; made on {made_on})", flush=True)
    if n_stale:
        print(f"{n_stale} of them were made by other code ({'; '.join(sorted(stale))}): they "
              f"are shown marked stale, never as current, until a rerun of their cells "
              f"replaces them", flush=True)
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
    p.add_argument("--accelerator", default=None,
                   help="the accelerator model the archive's records that name none ran on")
    p = sub.add_parser("sweep")
    p.add_argument("--jobs", type=int, default=16)
    p.add_argument("--scale", default="extended")
    p = sub.add_parser("plan")
    p.add_argument("--scale", default="extended")
    args = ap.parse_args(argv)
    return {"check": cmd_check, "repeat": cmd_repeat, "cell": cmd_cell, "sweep": cmd_sweep,
            "pack": cmd_pack, "import": cmd_import, "plan": cmd_plan}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
