"""The claims of paper 004's MNIST -> MNIST-M figures read back from the committed per-seed
tables (``figures/fedmm_fig{2,4,5}.csv`` and their ``_curves.csv``) when no run records are at
hand: :func:`table_records` turns a table into records (registered with
:mod:`repro.engine.records.from_outputs` by each figure's experiment), :func:`verdicts_from_tables`
recomputes what the tables can decide (``python -m repro.fedmm.experiments.tables figures``).
A diverged run's row (``diverged at round``) holds no final accuracy and is not read back, as
the engine passes no diverged record to a claim.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from repro.engine.experiment import RecordsMissing
from repro.engine.records.records import RunRecord
from repro.fedmm.experiments.claims import (
    claim_fig2,
    claim_fig2_monotone,
    claim_fig4_m25,
    claim_fig4_saving,
    claim_fig4_sgda_rounds,
    claim_fig5,
    word,
)


# -- verdicts from the committed per-seed tables ---------------------------------------------
def _read_table(path: Path) -> list[dict]:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such table; render it with `repro render "
                                f"{path.stem.replace('_', '.')}` from run records")
    with path.open() as fh:
        return list(csv.DictReader(fh))


def _run_id(row: dict) -> tuple:
    return (row["DA"], row["algorithm"], int(row["M"]), float(row["p"]),
            row.get("clients") or "1+1", int(row["seed"]))


def _table_records(rows: list[dict], experiment: str,
                   curves: list[dict] | None = None) -> list[RunRecord]:
    """Rows of a rendered fedmm table as records holding the finals they print (percent ->
    fraction) and, where the table's ``_curves.csv`` rows are given, each run's curve and
    ``final_acc`` (the mean of its last five evaluations, as
    :func:`repro.fedmm.training.summary_metrics` defines it); a table written with a
    ``scale`` column gives its records ``config['scale']``. Rows of diverged runs are skipped.
    """
    def pct(row, col):  # an ``ours (paper)`` column's "<col> mean", or an older plain column
        return float(row[f"{col} mean"] if f"{col} mean" in row else row[col]) / 100

    by_run: dict[tuple, dict[str, list[float]]] = {}
    for c in curves or ():
        cv = by_run.setdefault(_run_id(c), {"round": [], "acc": [], "acc_code_client": []})
        for k in cv:
            cv[k].append(float(c[k]) if c[k] != "" else float("nan"))
    out = []
    for k, row in enumerate(rows):
        if row.get("diverged at round", "—") not in ("", "—"):
            continue  # a diverged run: no finals to read back (module docstring)
        cfg = {"da": row["DA"], "algorithm": row["algorithm"], "local_steps": int(row["M"]),
               "p": float(row["p"]), "seed": int(row["seed"]),
               "clients": row.get("clients") or "1+1", "rounds": int(row["rounds"])}
        if row.get("scale"):
            cfg["scale"] = row["scale"]
        metrics = {"test_acc_full": pct(row, "final acc (full test)"),
                   "best_acc": pct(row, "best acc (subset)")}
        curve = by_run.get(_run_id(row), {})
        if curve:
            metrics["final_acc"] = float(np.mean(curve["acc"][-5:]))
        out.append(RunRecord(experiment=experiment, config=cfg, key=str(k), seed=cfg["seed"],
                             metrics=metrics, curves=curve))
    return out


def table_records(path: Path) -> list[RunRecord]:
    """The records a committed per-seed table ``figures/fedmm_fig<k>.csv`` holds, with the
    curves of ``fedmm_fig<k>_curves.csv`` beside it where that file exists (registered with
    :mod:`repro.engine.records.from_outputs` by the figure's experiment).
    """
    path = Path(path)
    side = path.with_name(f"{path.stem}_curves.csv")
    curves = _read_table(side) if side.is_file() else None
    return _table_records(_read_table(path), "fedmm." + path.stem.split("_", 1)[1], curves)


def verdicts_from_tables(figures: Path) -> list[dict]:
    """The fedmm claims the committed per-seed tables can decide: Figs. 2 and 5 fully; Fig. 4
    fully where ``fedmm_fig4_curves.csv`` is committed beside its table, else only its "> 1000
    rounds" claim, as a bound from the finals (the curve claims are then ``not_run``). Rows:
    {claim, verdict, measured}.
    """
    figures = Path(figures)
    f2, f4, f5 = (table_records(figures / f"fedmm_fig{k}.csv") for k in (2, 4, 5))
    rows = []
    for claim, fn, recs in (("Fig. 2 degradation p=0.5 -> p=1", claim_fig2, f2),
                            ("Fig. 2 monotone in p (stricter)", claim_fig2_monotone, f2),
                            ("Fig. 4 FedSGDA needs > 1000 rounds", claim_fig4_sgda_rounds, f4),
                            ("Fig. 4 FedMM saves > 90% of the rounds", claim_fig4_saving, f4),
                            ("Fig. 4 M = 25 faster than M = 20", claim_fig4_m25, f4),
                            ("Fig. 5 gap > 20 pp", claim_fig5, f5)):
        try:
            v, text = fn(recs)
        except RecordsMissing as exc:
            rows.append({"claim": claim, "verdict": "not_run", "measured": str(exc)})
            continue
        rows.append({"claim": claim, "verdict": word(v), "measured": text})
    return rows


if __name__ == "__main__":  # python -m repro.fedmm.experiments.tables [figures dir]
    import sys

    for row in verdicts_from_tables(Path(sys.argv[1] if len(sys.argv) > 1 else "figures")):
        print(f"{row['claim']}: {row['verdict']}\n  {row['measured']}")
