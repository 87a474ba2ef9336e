r"""One matplotlib style for every figure; every figure is saved as PNG and PDF.

What a paper could print, applied by :func:`save_figure` to every figure (so that no renderer
has to remember it), and what a renderer calls where it has the data:

- **distinct curves**: the style's property cycle changes colour, dash pattern and marker
  together, so curves that coincide stay distinguishable; markers on long curves are spaced
  (``markevery``);
- **math in mathtext**: Greek letters in titles, axis labels and legend entries are set as
  mathtext (``ε`` -> ``$\varepsilon$``); renderers write whole expressions as mathtext
  (``$R(\theta^*_\phi)$``);
- **one legend per figure**, outside the data (below the panels), built from every panel's
  labelled artists; panels that draw one label in two styles keep their own legends, each
  placed outside its panel;
- **integer ticks** on every linear axis whose plotted data are all integers (rounds,
  iterations, counts);
- **uncertainty**: :func:`plot_mean_band` draws a mean over seeds with a ±1 std band
  (sample std) whenever there is more than one seed;
- **the paper's values**: :func:`plot_paper_points` marks the values a paper prints in a table
  (black-edged stars, no line), :func:`plot_paper_curve` draws a curve whose values the paper
  prints (dashed); both carry the gid ``"paper"`` so that a test can read them back;
- **the scale, in words**: titles say ``scale: paper`` (:func:`scale_text`), never a bare
  ``(paper)`` that reads as "the paper's values";
- **smoke is marked**: a figure rendered from smoke records (within :func:`rendering_smoke`,
  which ``repro figures`` sets, or titled ``scale: smoke``) carries a large translucent
  diagonal "SMOKE" across it and a red title that starts "SMOKE RUN, not a result"
  (:func:`mark_smoke`).
"""

from __future__ import annotations

import contextlib
import re
from contextvars import ContextVar
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from cycler import cycler  # noqa: E402
from matplotlib.colors import to_rgba_array  # noqa: E402
from matplotlib.ticker import AutoLocator, MaxNLocator  # noqa: E402

_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")  # matplotlib's tab10: the C0..C9 of renderers
_DASHES = ("-", "--", ":", "-.", (0, (5, 1.5)), (0, (3, 1, 1, 1, 1, 1)), (0, (1, 1)),
           (0, (6, 2, 1, 2)), (0, (2, 2)), (0, (8, 2)))
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")

STYLE = {
    "figure.figsize": (5.0, 3.6),
    "figure.dpi": 120,
    "savefig.dpi": 200,
    "savefig.bbox": "tight",
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.prop_cycle": (cycler(color=list(_COLORS)) + cycler(linestyle=list(_DASHES))
                        + cycler(marker=list(_MARKERS))),
    "font.size": 10,
    "legend.frameon": False,
    "lines.linewidth": 1.6,
    "lines.markersize": 4.5,
    # Fonts embedded as TrueType keep PDFs editable and deterministic.
    "pdf.fonttype": 42,
}

MARKERS_PER_CURVE = 12  # a curve with more points than this gets evenly spaced markers
BAND_ALPHA = 0.2

_GREEK = {"α": r"\alpha", "β": r"\beta", "γ": r"\gamma", "δ": r"\delta", "ε": r"\varepsilon",
          "η": r"\eta", "θ": r"\theta", "κ": r"\kappa", "λ": r"\lambda", "μ": r"\mu",
          "ν": r"\nu", "ξ": r"\xi", "π": r"\pi", "ρ": r"\rho", "σ": r"\sigma", "τ": r"\tau",
          "φ": r"\phi", "ψ": r"\psi", "ω": r"\omega", "Γ": r"\Gamma", "Δ": r"\Delta",
          "Θ": r"\Theta", "Λ": r"\Lambda", "Σ": r"\Sigma", "Φ": r"\Phi", "Ψ": r"\Psi",
          "Ω": r"\Omega"}
_G = "[" + "".join(_GREEK) + "]"
# a Greek letter with an optional subscript: "Λ_φ", "λ_1", "Δ_0.5", "θ_{k+1}"
_GREEK_RUN = re.compile(f"({_G})(?:_({_G}|\\{{[^}}]*\\}}|[0-9.]*[0-9]|[A-Za-z]))?")


def _greek_math(m: re.Match) -> str:
    base, sub = _GREEK[m.group(1)], m.group(2)
    if sub is None:
        return f"${base}$"
    sub = _GREEK.get(sub, sub if sub.startswith("{") else "{" + sub + "}")
    return f"${base}_{sub}$"


def figure(nrows: int = 1, ncols: int = 1, **kwargs):
    """``plt.subplots`` under the project style."""
    with plt.rc_context(STYLE):
        return plt.subplots(nrows, ncols, **kwargs)


def mathtext(text: str) -> str:
    r"""Greek letters outside ``$...$`` set as mathtext (``"L(θ), ε"`` ->
    ``"L($\theta$), $\varepsilon$"``); text already in mathtext is kept as written.

    >>> mathtext("DEO(θ) ≤ ε, $\\lambda_1$, Λ_φ(Δ_0.5)")
    'DEO($\\theta$) ≤ $\\varepsilon$, $\\lambda_1$, $\\Lambda_\\phi$($\\Delta_{0.5}$)'
    """
    parts = text.split("$")
    if len(parts) % 2 == 0:  # an unpaired "$": not mathtext, leave it alone
        return text
    for i in range(0, len(parts), 2):  # even parts lie outside $...$
        parts[i] = _GREEK_RUN.sub(_greek_math, parts[i])
    return "$".join(parts)


def plot_mean_band(ax, x, runs, *, label: str | None = None, **kwargs):
    """The mean over seeds of ``runs`` (seeds x points) against ``x``, with a band of ±1
    sample std (ddof = 1) wherever there is more than one seed. Returns the mean's line.
    """
    runs = np.atleast_2d(np.asarray(runs, dtype=float))
    mean = runs.mean(axis=0)
    (line,) = ax.plot(x, mean, label=label, **kwargs)
    if runs.shape[0] > 1:
        std = runs.std(axis=0, ddof=1)
        ax.fill_between(x, mean - std, mean + std, color=line.get_color(), alpha=BAND_ALPHA,
                        linewidth=0, label="_band")
    return line


PAPER_GID = "paper"  # the gid of every artist that shows a value the paper prints


def scale_text(scale: str) -> str:
    """``"scale: paper"``: the scale a figure's records ran at, said as such in its title."""
    return f"scale: {scale}"


def plot_paper_points(ax, x, y, *, label: str, color: str = "black", yerr=None,
                      marker: str = "*"):
    """Values the paper prints (in a table) at ``x``: large markers edged in black, no line,
    ``yerr`` the printed std where there is one. Returns the markers' line (gid ``"paper"``).
    """
    x, y = np.atleast_1d(np.asarray(x, dtype=float)), np.atleast_1d(np.asarray(y, dtype=float))
    if yerr is not None and np.any(np.asarray(yerr, dtype=float) > 0):
        ax.errorbar(x, y, yerr=yerr, ls="none", color=color, capsize=3, zorder=6,
                    label="_paper_err")
    (line,) = ax.plot(x, y, ls="none", marker=marker, markersize=11, color=color,
                      markeredgecolor="black", markeredgewidth=0.8, zorder=7, label=label)
    line.set_gid(PAPER_GID)
    return line


def plot_paper_curve(ax, x, y, *, label: str, color: str = "black"):
    """A curve whose values the paper prints, dashed, no markers (gid ``"paper"``)."""
    (line,) = ax.plot(x, y, ls="--", marker="none", color=color, zorder=6, label=label)
    line.set_gid(PAPER_GID)
    return line


def paper_artists(fig) -> list:
    """Every line of ``fig`` that shows the paper's values (:func:`plot_paper_points`,
    :func:`plot_paper_curve`).
    """
    return [ln for ax in fig.get_axes() for ln in ax.get_lines() if ln.get_gid() == PAPER_GID]


def integer_ticks(ax, which: str = "x") -> None:
    """Ticks at integers only on ``ax``'s ``which`` axis ("x" or "y")."""
    getattr(ax, f"{which}axis").set_major_locator(MaxNLocator(integer=True))


def _all_integer(arrays) -> bool:
    vals = [np.asarray(a, dtype=float).ravel() for a in arrays]
    vals = [v[np.isfinite(v)] for v in vals]
    return any(v.size for v in vals) and all(np.all(v == np.round(v)) for v in vals)


def _style_key(artist) -> tuple:
    """What a reader tells artists apart by: colour, dash pattern, marker."""
    out = []
    for getter in ("get_color", "get_facecolor", "get_linestyle", "get_marker"):
        if not hasattr(artist, getter):
            continue
        v = getattr(artist, getter)()
        if getter in ("get_color", "get_facecolor"):
            try:
                v = tuple(np.round(to_rgba_array(v)[0], 3)) if len(to_rgba_array(v)) else ()
            except (TypeError, ValueError):
                v = str(v)
        out.append((getter, str(v)))
    return tuple(out)


def shared_legend(fig):
    """Replace the panels' legends by one figure legend below the panels (outside the data).

    Entries are every panel's labelled artists, one per label, in drawing order. Where one
    label is drawn in two styles a shared legend would mislead: each panel then keeps a legend
    of its own, placed outside it on the right. Returns the figure legend, or None.
    """
    entries: dict[str, object] = {}
    styles: dict[str, tuple] = {}
    conflict = False
    per_axes = []
    for ax in fig.get_axes():
        handles, labels = ax.get_legend_handles_labels()
        mine = [(h, lab) for h, lab in zip(handles, labels, strict=True)
                if lab and not lab.startswith("_")]
        per_axes.append((ax, mine))
        for h, lab in mine:
            key = _style_key(h)
            conflict |= lab in styles and styles[lab] != key
            entries.setdefault(lab, h)
            styles.setdefault(lab, key)
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    if not entries:
        return None
    if conflict:
        for ax, mine in per_axes:
            if mine:
                ax.legend([h for h, _ in mine], [mathtext(lab) for _, lab in mine],
                          loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                          fontsize=7, frameon=False)
        return None
    labels = list(entries)
    width = max(len(lab) for lab in labels)
    ncols = max(1, min(len(labels), 5 if width <= 18 else 3 if width <= 32 else 2))
    return fig.legend([entries[lab] for lab in labels], [mathtext(lab) for lab in labels],
                      loc="upper center", bbox_to_anchor=(0.5, 0.0), ncols=ncols,
                      frameon=False, fontsize=8)


def finish_figure(fig) -> None:
    """Apply this module's rules to a drawn figure: mathtext, spaced markers, integer ticks,
    one legend outside the data. :func:`save_figure` calls it.
    """
    if fig._suptitle is not None:
        fig._suptitle.set_text(mathtext(fig._suptitle.get_text()))
    for ax in fig.get_axes():
        ax.set_title(mathtext(ax.get_title()))
        ax.set_xlabel(mathtext(ax.get_xlabel()))
        ax.set_ylabel(mathtext(ax.get_ylabel()))
        lines = [ln for ln in ax.get_lines() if np.size(ln.get_xdata()) > 0]
        for k, ln in enumerate(lines):
            n = np.size(ln.get_xdata())
            marked = ln.get_marker() not in ("None", "none", "", " ", None)
            if marked and ln.get_markevery() is None and n > MARKERS_PER_CURVE:
                step = max(1, n // MARKERS_PER_CURVE)
                # staggered: coinciding curves show their markers side by side
                ln.set_markevery((k * step // max(1, len(lines)) % step, step))
        in_data = [ln for ln in lines if ln.get_transform() == ax.transData]  # not axhline
        for which in ("x", "y"):
            data = [getattr(ln, f"get_{which}data")() for ln in in_data]
            axis = getattr(ax, f"{which}axis")
            if (getattr(ax, f"get_{which}scale")() == "linear"
                    and type(axis.get_major_locator()) is AutoLocator and _all_integer(data)):
                integer_ticks(ax, which)
    shared_legend(fig)


def _column_has_xlabel_below(fig, ax) -> bool:
    """A panel of a grid may leave its x label to the panel below it in the same column."""
    spec = ax.get_subplotspec() if hasattr(ax, "get_subplotspec") else None
    if spec is None:
        return False
    for other in fig.get_axes():
        o = other.get_subplotspec() if hasattr(other, "get_subplotspec") else None
        if (o is not None and other is not ax and other.get_xlabel()
                and o.get_gridspec() is spec.get_gridspec() and o.colspan == spec.colspan
                and o.rowspan.start > spec.rowspan.start):
            return True
    return False


RENDERING_SMOKE: ContextVar[bool] = ContextVar("rendering_smoke", default=False)
SMOKE_WORD = "SMOKE"
SMOKE_TITLE = "SMOKE RUN, not a result"


@contextlib.contextmanager
def rendering_smoke(smoke: bool):
    """Within: every figure saved is marked as a smoke figure when ``smoke``."""
    token = RENDERING_SMOKE.set(bool(smoke))
    try:
        yield
    finally:
        RENDERING_SMOKE.reset(token)


def _is_smoke(fig) -> bool:
    titles = [fig._suptitle.get_text() if fig._suptitle else ""]
    titles += [ax.get_title() for ax in fig.get_axes()]
    return RENDERING_SMOKE.get() or any("scale: smoke" in t for t in titles)


def mark_smoke(fig) -> None:
    """A large translucent "SMOKE" across the figure and a red line above its title."""
    w, h = fig.get_size_inches()
    fig.text(0.5, 0.5, SMOKE_WORD, transform=fig.transFigure, ha="center", va="center",
             rotation=20, fontsize=16 * min(w, h), fontweight="bold", color="tab:red",
             alpha=0.13, zorder=1000, gid="smoke")
    title = fig._suptitle.get_text() if fig._suptitle else ""
    fig.suptitle(f"{SMOKE_TITLE}: {title}".strip(" :"), color="tab:red")


def save_figure(fig, out_dir: Path, stem: str) -> list[Path]:
    """Save ``fig`` as ``<stem>.png`` and ``<stem>.pdf``; refuse a figure missing its labels.

    Every axes must have x and y labels and a title (on the axes or the figure). The figure is
    then finished by :func:`finish_figure` (one legend for the figure, outside the data;
    mathtext; integer ticks; spaced markers).
    """
    for ax in fig.get_axes():
        if not (ax.get_xlabel() or _column_has_xlabel_below(fig, ax)) or not ax.get_ylabel():
            raise ValueError(f"{stem}: every axes needs x and y labels (an x label may be "
                             "given once, on the bottom panel of its column)")
        if not ax.get_title() and not (fig._suptitle and fig._suptitle.get_text()):
            raise ValueError(f"{stem}: every axes needs a title (or the figure a suptitle)")
    finish_figure(fig)
    from repro.engine.report.report import RENDERING_COVERAGE, partial_title
    from repro.engine.run.code_identity import RENDERING_STALE

    if RENDERING_COVERAGE.get():  # fewer cells than declared: say so in the title
        title = fig._suptitle.get_text() if fig._suptitle else ""
        fig.suptitle(partial_title(title).strip(), color="tab:red")

    if RENDERING_STALE.get():  # records made by other code: say so in the title
        title = fig._suptitle.get_text() if fig._suptitle else ""
        fig.suptitle(f"{title} [{RENDERING_STALE.get()}]".strip(), color="tab:red")
    if _is_smoke(fig):  # never mistaken for a result at the paper's scale
        mark_smoke(fig)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    with plt.rc_context(STYLE):
        for ext in ("png", "pdf"):
            p = out_dir / f"{stem}.{ext}"
            fig.savefig(p, metadata={"CreationDate": None} if ext == "pdf" else None)
            paths.append(p)
    plt.close(fig)
    return paths
