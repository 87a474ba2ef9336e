"""The verdict rule (:mod:`repro.engine.compare.verdict`) applied to a committed comparison row from
its committed columns, without its records: how a partial
``repro compare NAME`` judges the rows it keeps (:func:`repro.engine.records.kept.rejudge_kept`),
and what ``scripts/reverdict.py`` prints for a whole committed ``comparison.csv``.

What the committed columns give: our mean, our std and its n (``n_seeds``), the printed value
and std. What comes from the code: the table's noise model (:mod:`repro.engine.compare.noise`,
declared
in each paper package's ``repro/<paper>/experiments/reproduce.py``; else its ``PAPER_RUNS``),
the printed std as printed (its precision, from the reported CSV), which rows pool trials x
clients (constrfl Tables 1-2 objective and relative difference, :data:`POOLED`) and the misprint
corrections (from the row's reason). A row whose committed std pools trials x clients
(``n_seeds`` = 10 n, n > 1 clients) is ``match`` where the mean is within the tolerance (the
mean needs no std); otherwise the rule refuses the pooled std, but it bounds the std of the
trial means (the between-trial sum of squares is at most the total one: s_T <= s_pool sqrt((Tn -
1) / (n (T - 1)))), so a row beyond even that largest band ``deviates``, and the others are
:data:`NEEDS_RERUN` (the per-trial std needs the records). Convergence flags (k of N) are not in
the committed columns: a kept row cannot say them.
"""

from __future__ import annotations

import importlib
import math
import re
from functools import cache
from types import SimpleNamespace

from repro.engine.compare.noise import noise_model
from repro.engine.compare.verdict import NEEDS_RERUN, RULE_ID, judge

__all__ = ["POOLED", "REJUDGED", "is_current", "paper_runs", "rejudge_row",
           "reverdict"]

REJUDGED = f"{RULE_ID} (re-judged from committed columns)"   # the ``rule`` of such a row
POOLED = {("constrfl.table1", "objective"), ("constrfl.table1", "relative_difference"),
          ("constrfl.table2", "objective"), ("constrfl.table2", "relative_difference")}
ONE_RUN = {"constrfl.table3": 1}   # Table 3 prints one run per problem (docs/decisions.md#constrfl)
PRINTED_UNITS = {"constrfl.table4": 1.0}   # Table 4 was rounded twice: one unit
ONE_SIDED = re.compile(r"one-sided: match when <= \S+, whatever the printed value;?\s*")
UNJUDGED = ("not_run", "substitute_data")


@cache
def paper_runs(group: str) -> int | None:
    """The runs behind each printed number of paper package ``group``: its
    ``repro/<group>/experiments/reproduce.py``'s ``PAPER_RUNS`` (None where it has none:
    then there is no noise band).
    """
    try:
        mod = importlib.import_module(f"repro.{group}.experiments.reproduce")
    except ImportError:
        return None
    return getattr(mod, "PAPER_RUNS", None)


def is_current(row: dict) -> bool:
    """Whether ``row`` was judged by the current rule (from records or re-judged)."""
    return str(row.get("rule", "")).startswith(RULE_ID)


def _float(x) -> float | None:
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


@cache
def _printed() -> dict[tuple[str, str, str, str], tuple[str, str]]:
    """(paper file, table, key, metric) -> (stem, std as printed) of every reported row."""
    from repro.engine.compare.reported import load_reported

    return {(r.paper_file, str(r.table), r.key_text, r.metric): (r.stem, r.std_text)
            for r in load_reported()}


def _key(text: str) -> dict[str, str]:
    return dict(kv.split("=", 1) for kv in text.split(";") if "=" in kv)


def reverdict(row: dict) -> tuple[str, dict]:
    """``(new verdict, details)`` of one committed row under the current rule, from its
    committed columns; details: ``n`` (independent runs), ``n_paper``, ``sigma_diff``,
    ``tolerance`` and ``notes`` (the derived sentences of the rule).
    """
    if row["verdict"] in UNJUDGED:
        return row["verdict"], {}
    exp = row["experiment"]
    group = exp.split(".")[0]
    pooled_paper = (exp, row["metric"]) in POOLED
    n = int(float(row["n_seeds"] or 0))
    clients = int(_key(row["key"]).get("n", "1") or 1) if pooled_paper else 1
    runs = n // clients   # a pooled list holds 10 trials x n clients
    std = _float(row.get("reproduced_std", ""))
    printed_std = _float(row.get("reported_std", ""))
    paper_runs(group)   # imports the package's reproduce module: its noise models
    stem, std_text = _printed().get((row["paper_file"], str(row["table"]), row["key"],
                                     row["metric"]), ("", ""))
    noise = noise_model(stem)
    n_paper = noise.n_paper if noise else ONE_RUN.get(exp, paper_runs(group))
    rep = SimpleNamespace(
        n=runs, n_runs=runs, n_planned=None, mean=float(row["reproduced"]),
        std=math.nan if std is None or runs < 2 else std,
        corrected=None,
        printed_units=PRINTED_UNITS.get(exp, 0.5), tolerance=None, rel_tolerance=None,
        over="trials" if group == "constrfl" else "seeds", n_paper=n_paper,
        paper_std_over="trials x clients" if pooled_paper else "",
        table=row["experiment"], key={}, metric=row["metric"])
    got = judge(row["reported"], printed_std, rep, noise, std_text or None)
    details = {"n": runs, "n_paper": n_paper, "sigma_diff": got["sigma_diff"],
               "tolerance": got["tolerance"], "paper_std": got["paper_std"],
               "notes": got["notes"]}
    if clients > 1 and got["verdict"] != "match":
        d = abs(rep.mean - float(row["reported"]))
        if std is None or runs < 2 or not n_paper:
            return NEEDS_RERUN, {**details, "sigma_diff": math.nan, "notes": [
                f"std pooled over {runs} trials x {clients} clients: refused, and no bound "
                f"on the per-trial std from it: needs the per-trial std"]}
        # the rule refuses the pooled std; the std of the T trial means is bounded by it
        # (between-trial sum of squares <= total): s_T <= s_pool sqrt((Tn - 1) / (n (T - 1)))
        s_max = std * math.sqrt((n - 1) / (clients * (runs - 1)))
        sd_max = math.sqrt(s_max ** 2 / runs + s_max ** 2 / n_paper)
        if d > 2 * sd_max:
            return "deviates", {**details, "sigma_diff": sd_max, "notes": [
                f"std pooled over {runs} trials x {clients} clients refused; even the largest "
                f"per-trial std it allows ({s_max:.3g}) gives 2σ_diff <= {2 * sd_max:.3g} < "
                f"|d| {d:.3g}"]}
        return NEEDS_RERUN, {**details, "sigma_diff": math.nan,
                             "notes": [f"std pooled over {runs} trials x {clients} clients: "
                                       f"refused; |d| {d:.3g} is within the largest band it "
                                       f"allows ({2 * sd_max:.3g}): needs the per-trial std"]}
    return got["verdict"], details


def rejudge_row(row: dict) -> dict:
    """``row`` (a committed comparison row) judged by the current rule from its committed
    columns, where an older rule judged it (no ``rule`` = :data:`RULE_ID`); else ``row``
    itself. ``made_by`` (where the numbers come from) is kept; ``rule`` says
    :data:`REJUDGED`; the reason says the rule's notes, the old verdict and the old reason
    (an older rule's own wording, the one-sided "match whatever the printed value", dropped);
    its cause is assigned with every other row's (:mod:`repro.engine.compare.causes`). Rows not
    judged
    (``not_run``, ``substitute_data``) are returned as they are.
    """
    if is_current(row) or row.get("verdict") in UNJUDGED or row.get("reproduced", "") == "":
        return row
    new, d = reverdict(row)
    old_reason = ONE_SIDED.sub("", row.get("reason", "")).strip().strip(";").strip()
    was = f"re-judged from the committed columns (verdict by the older rule: {row['verdict']})"
    sd = d.get("sigma_diff", math.nan)
    return {**row, "verdict": new, "n_seeds": d["n"], "n_paper": d["n_paper"] or "",
            "sigma_diff": "" if sd is None or math.isnan(sd) else sd,
            "tolerance": d["tolerance"], "paper_std": d.get("paper_std", ""), "rule": REJUDGED,
            "reason": "; ".join(filter(None, (*d["notes"], was, old_reason)))}
