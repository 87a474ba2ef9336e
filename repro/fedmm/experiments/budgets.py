"""What every claim of paper 004's MNIST -> MNIST-M figures appends to its text: the run
budget its records were made at (:func:`budget`, via :func:`with_budget`) and the runs whose
predictions froze on one class (:func:`frozen_note`: records made before training checked
finiteness; a run of the current code that leaves the floats ends as a named divergence
instead, counted apart by the engine).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# -- runs whose predictions froze --------------------------------------------------------------
FROZEN_EVALS = 5     # evaluations in a row with the same accuracy, to the end of the run
ONE_CLASS_MAX = 0.12  # above the largest class share of the MNIST(-M) test labels (11.35 %)


def frozen_from(rounds: Sequence[float], acc: Sequence[float]) -> float | None:
    """The first evaluated round from which a run's accuracy stays exactly the same to its end,
    over at least :data:`FROZEN_EVALS` evaluations and at one class's share or below
    (:data:`ONE_CLASS_MAX`), else None. A model still training changes its predictions on the
    2,000 evaluation images between evaluations; one whose parameters left the floats (NaN)
    predicts one class for every image, so its accuracy is that class's share from then on
    (9.8-10.5 % here). The first 18 extended GPU runs, made before training checked
    finiteness, hold 3 such runs (FedMM, M = 20 and 25): their records end with that
    chance-level accuracy, stay in every mean as they ended and are named here. A run of the
    current code ends at its first non-finite round instead (:mod:`repro.fedmm.health`).
    """
    n = len(acc)
    k = n - 1
    while k > 0 and acc[k - 1] == acc[-1]:
        k -= 1
    if n - k < FROZEN_EVALS or acc[-1] > ONE_CLASS_MAX:
        return None
    return float(rounds[k])


def frozen_note(records) -> str:
    """``"; k of n runs froze ..."`` naming each run whose accuracy curve froze
    (:func:`frozen_from`) among the records made before training checked finiteness (without
    the ``finite_checked`` metric), or ``""``.
    """
    with_curves = [r for r in records if "acc" in r.curves and "round" in r.curves
                   and "finite_checked" not in r.metrics]
    frozen = [(r, frozen_from(r.curves["round"], r.curves["acc"])) for r in with_curves]
    frozen = [(r, at) for r, at in frozen if at is not None]
    if not frozen:
        return ""
    runs = ", ".join(f"{r.config['da']} {r.config['algorithm']} M={r.config['local_steps']} "
                     f"seed {r.config['seed']} from round {at:g} at "
                     f"{100 * r.curves['acc'][-1]:.2f}%" for r, at in frozen)
    return (f"; {len(frozen)} of {len(with_curves)} runs froze (records made before training "
            f"checked finiteness: the same accuracy at every evaluation to the end, predictions "
            f"stuck on one class, as parameters that became NaN give; kept in the means as "
            f"they ended): {runs}")


# -- run budget appended to the figures' claims ----------------------------------------------
def budget(records) -> str:
    """The run budget of ``records``: data sizes, batch, rounds per run and the seeds."""
    r = records[0].config
    seeds = sorted({s for x in records for s in np.atleast_1d(x.config["seed"]).tolist()})
    if "n_source" not in r:  # records read back from a committed table (table_records)
        return ("budget: rounds per run " + ",".join(sorted({str(x.config["rounds"])
                                                            for x in records}))
                + f" (per the table); mean over seeds {seeds}")
    return (f"budget: {int(r['n_source'])}+{int(r['n_target'])} train images, batch "
            f"{r['batch']}, rounds per run " + ",".join(sorted(
                {str(x.config['rounds']) for x in records}))
            + f"; mean over seeds {seeds}")


def with_budget(check):
    """A claim of :mod:`.claims` with the run budget and the frozen runs appended to its text."""
    def run(records):
        verdict, text = check(records)
        return verdict, f"{text}; {budget(records)}{frozen_note(records)}"
    run.__doc__ = check.__doc__
    return run
