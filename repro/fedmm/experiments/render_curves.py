"""The accuracy-curve figures of paper 004's MNIST -> MNIST-M experiments (Figs. 4 and 5, and
the DANN step-size diagnostic), drawn from run records. Output only: not part of the code
identity.

A run that diverged (its record a named :class:`repro.core.validation.DivergenceError`, with
the curve it logged before) is drawn as ended: its own curve up to its last evaluation, thin,
and a black cross at the round its state first held NaN or inf; it never enters a mean, so no
curve drops to one class's share as if the method had collapsed. A record made before training
checked finiteness whose run froze on one class (NaN parameters,
:func:`repro.fedmm.experiments.budgets.frozen_from`) is drawn the same way, ended at the round
it froze (the claims keep such a run in their means and name it). Every legend entry names the
seeds its mean is drawn over (per panel where they differ) and the runs that diverged.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from repro.engine.records.query import where
from repro.engine.records.records import RunRecord
from repro.engine.report.plotting import figure, plot_mean_band, save_figure, scale_text
from repro.engine.run.planning import diverged
from repro.fedmm.models import DA_METHODS

ENDED_LABEL = "run diverged (NaN/inf): ended at the cross"
# one style per method in every panel (colour, dash, marker), whatever the panel draws
_DASHES = ("-", "--", ":", "-.", (0, (5, 1.5)), (0, (3, 1, 1, 1, 1, 1)))
_MARKERS = ("o", "s", "^", "D", "v", "P")


def style(k: int) -> dict:
    """The k-th method's colour, dash pattern and marker."""
    return {"color": f"C{k}", "linestyle": _DASHES[k % len(_DASHES)],
            "marker": _MARKERS[k % len(_MARKERS)]}


_ROUND = re.compile(r"diverged at round (\d+)")


def ended_round(r: RunRecord) -> int | None:
    """The round a diverged run's state first held NaN or inf (from its reason), else None."""
    m = _ROUND.search(r.reason) if diverged(r) else None
    return int(m.group(1)) if m else None


def frozen_round(r: RunRecord) -> float | None:
    """The round from which a run made before training checked finiteness froze on one class
    (:func:`repro.fedmm.experiments.budgets.frozen_from`: NaN parameters), else None.
    """
    from repro.fedmm.experiments.budgets import frozen_from

    cv = r.curves
    if not r.ok or "finite_checked" in r.metrics or not cv.get("acc") or not cv.get("round"):
        return None
    return frozen_from(cv["round"], cv["acc"])


def drawn(records) -> list[RunRecord]:
    """The records a figure draws: runs with a result, and diverged runs (drawn as ended)."""
    return [r for r in records if r.ok or diverged(r)]


def in_mean(r: RunRecord) -> bool:
    """Whether a run enters the figures' means: it has a result and did not end early (a
    diverged run, or an older record's run that froze on one class, is drawn as ended).
    """
    return r.ok and frozen_round(r) is None


def ended_at(r: RunRecord) -> tuple[float, list[float], list[float]]:
    """(round it ended at, its rounds and accuracies before that) of a run drawn as ended."""
    rounds, acc = list(r.curves.get("round", [])), list(r.curves.get("acc", []))
    frozen = frozen_round(r)
    if frozen is not None:
        keep = [k for k, x in enumerate(rounds) if x < frozen]
        return frozen, [rounds[k] for k in keep], [acc[k] for k in keep]
    return float(ended_round(r) or (rounds[-1] if rounds else 1)), rounds, acc


def seed_mean(records) -> list[RunRecord]:
    """One record per config-without-seed: metrics and the ``acc`` curve averaged over seeds
    (same round grid), ``config['seed']`` replaced by the list of seeds averaged.
    """
    groups: dict[tuple, list[RunRecord]] = {}
    for r in records:
        key = tuple(sorted((k, v) for k, v in r.config.items() if k != "seed"))
        groups.setdefault(key, []).append(r)
    out = []
    for rs in groups.values():
        rs = sorted(rs, key=lambda r: r.config["seed"])
        metrics = {k: float(np.mean([r.metrics[k] for r in rs])) for k in rs[0].metrics}
        curves = {"round": rs[0].curves["round"],
                  "acc": np.mean([r.curves["acc"] for r in rs], axis=0).tolist(),
                  "acc_runs": [r.curves["acc"] for r in rs]}  # per seed: the figures' band
        out.append(RunRecord(experiment=rs[0].experiment,
                             config={**rs[0].config, "seed": [r.config["seed"] for r in rs]},
                             key="mean", seed=-1, metrics=metrics, curves=curves))
    return out


def run_label(r: RunRecord) -> str:
    c = r.config
    if c["algorithm"] == "FedSGDA":
        return "FedSGDA (M=1)"
    mu = "" if c.get("preset", "paper") == "paper" else ", authors' code: μ=2"
    return f"{c['algorithm']} (M={c['local_steps']}{mu})"


def setting(r: RunRecord) -> str:
    return str(r.config.get("clients", "1+1"))


def seeds_text(seeds) -> str:
    """``0, 1, 2`` as ``0-2``, ``0, 2`` as written."""
    s = sorted(int(x) for x in seeds)
    if len(s) > 2 and s == list(range(s[0], s[-1] + 1)):
        return f"{s[0]}-{s[-1]}"
    return ", ".join(str(x) for x in s)


def _panel(r: RunRecord, settings: list[str]) -> str:
    return r.config["da"] if len(settings) == 1 else f"{r.config['da']} {setting(r)}"


def legend_labels(records, settings: list[str]) -> dict[str, str]:
    """Per method, its legend text: the seeds its means are drawn over (per panel where they
    differ) and its diverged runs with their rounds.
    """
    out = {}
    for lab in sorted({run_label(r) for r in records}):
        mine = [r for r in records if run_label(r) == lab]
        per_panel: dict[str, list[int]] = {}
        for r in mine:
            per_panel.setdefault(_panel(r, settings), [])
            if in_mean(r):
                per_panel[_panel(r, settings)].append(int(r.config["seed"]))
        groups: dict[str, list[str]] = {}
        for panel, s in per_panel.items():
            groups.setdefault(seeds_text(s) if s else "none with a result", []).append(panel)
        if len(groups) == 1:
            text = f"seeds {next(iter(groups))}"
        else:
            text = "seeds " + "; ".join(f"{s} ({', '.join(p)})" for s, p in groups.items())
        ended = [f"{_panel(r, settings)} seed {r.config['seed']} at round {ended_round(r)}"
                 for r in mine if diverged(r)]
        froze = [f"{_panel(r, settings)} seed {r.config['seed']} at round "
                 f"{frozen_round(r):g}" for r in mine if frozen_round(r) is not None]
        out[lab] = (f"{lab}: {text}" + (f"; diverged: {', '.join(ended)}" if ended else "")
                    + (f"; froze on one class (NaN, older record): {', '.join(froze)}"
                       if froze else ""))
    return out


def draw_ended(ax, r: RunRecord, color: str) -> None:
    """A run drawn as ended (:func:`ended_at`): its curve before, thin, and a black cross at
    the round it ended.
    """
    at, rounds, acc = ended_at(r)
    acc = 100 * np.asarray(acc)
    if len(rounds):
        ax.plot(rounds, acc, color=color, linewidth=0.8, alpha=0.6, marker=".",
                linestyle="-", label="_ended_curve")
    y = float(acc[-1]) if len(acc) else 0.0
    ax.plot([at], [y], marker="x", color="black", markersize=8, linestyle="none",
            label=ENDED_LABEL, gid="diverged")


def curves_figure(records, out: Path, stem: str, title: str, scale: str,
                  missing: str = "") -> list[Path]:
    """One row of DANN/CDAN/MDD panels per client setting (one row unless Fig. 5's split
    settings have records): per method the mean over its seeds with a ±1 std band, each
    method one colour in every panel and one legend below the panels; diverged runs drawn as
    ended (module docstring). ``missing``: what the figure's grid lacks, said in the title.
    The paper prints these figures as images only: there are no printed values to overlay.
    """
    records = drawn(records)
    ok = [r for r in records if in_mean(r)]
    settings = sorted({setting(r) for r in records},
                      key=lambda c: sum(int(x) for x in c.split("+")))
    labels = legend_labels(records, settings)
    styles = {lab: style(i) for i, lab in enumerate(sorted(labels))}
    fig, axes = figure(len(settings), 3, figsize=(13, 3.6 + 4.4 * (len(settings) - 1)),
                       squeeze=False, gridspec_kw={"hspace": 0.45})
    means = seed_mean(ok)
    for row, sett in zip(axes, settings, strict=True):
        for ax, da in zip(row, DA_METHODS, strict=True):
            here = [r for r in means if setting(r) == sett and r.config["da"] == da]
            for r in sorted(here, key=run_label):
                plot_mean_band(ax, r.curves["round"], 100 * np.asarray(r.curves["acc_runs"]),
                               label=labels[run_label(r)], **styles[run_label(r)])
            ended = [r for r in records if not in_mean(r) and setting(r) == sett
                     and r.config["da"] == da]
            for r in ended:
                draw_ended(ax, r, styles[run_label(r)]["color"])
            rounds = [max(r.curves["round"]) for r in here + ended if r.curves.get("round")]
            if max(rounds, default=0) > 200:
                ax.set_xscale("log")  # FedSGDA runs 20x the rounds of FedMM
            ax.set_xlabel("communication round")
            ax.set_ylabel("MNIST-M test accuracy (%)")
            ax.set_title(da if len(settings) == 1 else f"{da}, {sett} clients")
    seeds = seeds_text({int(r.config["seed"]) for r in ok}) or "none"
    fig.suptitle(f"{title} ({scale_text(scale)}; mean over the seeds each legend entry "
                 f"names (drawn: {seeds}), band ±1 std" + (f"; {missing}" if missing else "")
                 + ")")
    fig.subplots_adjust(top=0.84 if len(settings) == 1 else 0.92)  # the title above the panels
    return save_figure(fig, out, stem)


MU = {"paper": "μ=1 (paper)", "code": "μ=2 (authors' code)"}


def _dual_max(r: RunRecord) -> list[float]:
    """max_i ||lambda_i|| at each evaluation (FedMM's omega duals), empty without them."""
    cols = [v for k, v in r.curves.items() if k.startswith("lambda_norm_")]
    return [float(max(x)) for x in zip(*cols, strict=True)] if cols else []


def render_dann_mu(records, out: Path, scale: str) -> list[Path]:
    """The DANN step-size diagnostic (:mod:`.dann_mu`): a per-run table (final accuracy,
    diverged round, the largest ||lambda_i|| and |theta0| of the run) and a figure of the
    accuracy (mean over the seeds with a result, diverged runs ended at their cross) and of
    max_i ||lambda_i|| per run, at mu = 1 and mu = 2.
    """
    from repro.engine.report.report import Measured, Table, write_table

    runs = sorted(drawn(records), key=lambda r: (list(MU).index(r.config["preset"]),
                                                 r.config["seed"]))
    if not any(r.ok for r in runs):
        return []
    t = Table("DANN FedMM (M=20) at mu=1 and mu=2 (" + scale_text(scale) + ")",
              ["mu", "seed", "rounds", "final acc (full test)", "diverged at round",
               "max ‖λ_i‖ over the run", "max abs(θ0) over the run"],
              caption="A diagnostic, not an item of the paper. Diverged at round: the first "
                      "round at which the run's parameters held NaN or inf (the run ended "
                      "there); the maxima are over its evaluations before that.")
    for r in runs:
        lam, th = _dual_max(r), r.curves.get("theta0_max_abs", [])
        t.add(MU[r.config["preset"]], r.config["seed"], r.config["rounds"],
              Measured((100 * r.metrics["test_acc_full"],), digits=2) if r.ok else "—",
              ended_round(r) if not r.ok else "—", f"{max(lam):.3g}" if lam else "—",
              f"{max(th):.3g}" if th else "—")
    fig, (a1, a2) = figure(1, 2, figsize=(11, 3.8))
    for k, preset in enumerate(MU):
        mine = [r for r in runs if r.config["preset"] == preset]
        ok = [r for r in mine if in_mean(r)]
        if ok:
            plot_mean_band(a1, ok[0].curves["round"],
                           100 * np.asarray([r.curves["acc"] for r in ok]), **style(k),
                           label=f"{MU[preset]}: seeds {seeds_text(r.config['seed'] for r in ok)}")
        for r in mine:
            if not in_mean(r):
                draw_ended(a1, r, f"C{k}")
            lam = _dual_max(r)
            if lam:
                a2.plot(r.curves["round"][:len(lam)], lam, color=f"C{k}", marker="none",
                        linestyle="-", linewidth=1.0, label=MU[preset])
    a1.set_xlabel("communication round")
    a1.set_ylabel("MNIST-M test accuracy (%)")
    a1.set_title("accuracy (mean over seeds with a result)")
    a2.set_yscale("log")
    a2.set_xlabel("communication round")
    a2.set_ylabel("max_i ‖λ_i‖ (one line per run)")
    a2.set_title("FedMM's omega duals")
    fig.suptitle(f"DANN FedMM (M=20): μ=1 (paper) vs μ=2 (authors' code) ({scale_text(scale)}"
                 "; a diagnostic, not in the paper)")
    return write_table(t, out, "fedmm_dann_mu") + save_figure(fig, out, "fedmm_dann_mu")


def missing_runs(records, algorithms: tuple[str, ...], settings: tuple[str, ...]) -> str:
    """What a figure's grid has no drawn run of: ``""`` or e.g. ``not run yet: FedAvgGDA,
    FedProxGDA; the 2+2, 5+5 client settings``.
    """
    runs = drawn(records)
    algs = [a for a in algorithms if not where(runs, algorithm=a)]
    sets = [s for s in settings if not [r for r in runs if setting(r) == s]]
    parts = ([", ".join(algs)] if algs else []) + (
        [f"the {', '.join(sets)} client setting{'s' if len(sets) > 1 else ''}"] if sets else [])
    return "not run yet: " + "; ".join(parts) if parts else ""


__all__ = ["ENDED_LABEL", "curves_figure", "draw_ended", "drawn", "ended_at", "ended_round",
           "frozen_round", "in_mean", "legend_labels",
           "missing_runs", "render_dann_mu", "run_label", "seed_mean", "seeds_text", "setting",
           "style"]
