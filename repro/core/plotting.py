"""One matplotlib style for every figure; every figure is saved as PNG and PDF."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

STYLE = {
    "figure.figsize": (5.0, 3.6),
    "figure.dpi": 120,
    "savefig.dpi": 200,
    "savefig.bbox": "tight",
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "font.size": 10,
    "legend.frameon": False,
    "lines.linewidth": 1.6,
    # Fonts embedded as TrueType keep PDFs editable and deterministic.
    "pdf.fonttype": 42,
}


def figure(nrows: int = 1, ncols: int = 1, **kwargs):
    """``plt.subplots`` under the project style."""
    with plt.rc_context(STYLE):
        return plt.subplots(nrows, ncols, **kwargs)


def save_figure(fig, out_dir: Path, stem: str) -> list[Path]:
    """Save ``fig`` as ``<stem>.png`` and ``<stem>.pdf``; refuse a figure missing its labels.

    Every axes must have x and y labels and a title (on the axes or the figure), and a legend
    whenever it draws more than one labelled artist.
    """
    for ax in fig.get_axes():
        if not ax.get_xlabel() or not ax.get_ylabel():
            raise ValueError(f"{stem}: every axes needs x and y labels")
        if not ax.get_title() and not (fig._suptitle and fig._suptitle.get_text()):
            raise ValueError(f"{stem}: every axes needs a title (or the figure a suptitle)")
        labelled = [h for h in ax.get_legend_handles_labels()[1] if not h.startswith("_")]
        if len(labelled) > 1 and ax.get_legend() is None:
            raise ValueError(f"{stem}: axes with {len(labelled)} labelled lines needs a legend")
    from repro.core.code_identity import RENDERING_STALE

    if RENDERING_STALE.get():  # records made by other code: say so in the title
        title = fig._suptitle.get_text() if fig._suptitle else ""
        fig.suptitle(f"{title} [{RENDERING_STALE.get()}]".strip(), color="tab:red")
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
