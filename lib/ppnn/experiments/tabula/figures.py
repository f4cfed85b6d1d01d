"""01_tabula's trade-off figure: what each table width buys and costs (the paper's Figs. 4-6).

One panel per figure, accuracy on the x axis: communication reduction against the garbled
circuit at the same bits (Fig. 4), Tabula's storage per inference (Fig. 5) and the projected
speed-up against the garbled circuit (Fig. 6), one line per network and dataset, each point
labelled with its table's bits. Labels are placed by :func:`ppnn.plotting.label_points` (no
two overlap) and the log axes carry plain tick labels.
"""

from __future__ import annotations

import pandas as pd

from ... import plotting

__all__ = ["TRADEOFF_PANELS", "plot_tradeoffs"]

#: (column of the trade-off frame, divisor, panel title, y label), one per panel
TRADEOFF_PANELS = (
    ("comm_reduction", 1, "Fig. 4: comm. reduction vs GC (same bits)", "GC bytes / Tabula bytes"),
    ("tabula_storage_B", 2**20, "Fig. 5: Tabula storage per inference", "MiB per party"),
    ("speedup", 1, "Fig. 6: projected speed-up vs GC", "GC time / Tabula time"),
)


def plot_tradeoffs(tr: pd.DataFrame):
    """Figs. 4-6 from :func:`ppnn.experiments.tabula.paper.tradeoffs`' frame ``tr`` (columns
    ``zoo, dataset, bits, accuracy`` and the panels' columns). Returns the figure."""
    import matplotlib.pyplot as plt

    missing = {"zoo", "dataset", "bits", "accuracy", *(c for c, *_ in TRADEOFF_PANELS)} - set(tr)
    if missing:
        raise ValueError(f"tr lacks the columns {sorted(missing)}")
    plotting.setup()
    fig, axes = plt.subplots(1, len(TRADEOFF_PANELS), figsize=(14, 3.9), layout="constrained")
    groups = list(tr.groupby(["zoo", "dataset"]))
    for ax, (col, div, title, ylabel) in zip(axes, TRADEOFF_PANELS):
        for (z, ds), g in groups:
            g = g.sort_values("bits")
            ax.plot(g.accuracy * 100, g[col] / div, "o-", ms=4, label=f"{z} ({ds})")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("accuracy (%)")
        ax.set_ylabel(ylabel)
        ax.set_yscale("log")
        ax.margins(x=0.08, y=0.12)
        plotting.plain_log_ticks(ax)
    axes[0].legend(fontsize=7, title="point label: table bits", title_fontsize=7)
    fig.draw_without_rendering()  # one layout for the three panels' labels
    for ax, (col, div, *_) in zip(axes, TRADEOFF_PANELS):
        plotting.label_points(ax, tr.accuracy * 100, tr[col] / div,
                              [f"{int(b)}" for b in tr.bits],
                              colors=[_color(ax, z, ds) for z, ds in zip(tr.zoo, tr.dataset)],
                              settle=False)
    return fig


def _color(ax, zoo: str, dataset: str):
    """The colour of the line labelled ``zoo (dataset)`` on ``ax``."""
    for line in ax.get_lines():
        if line.get_label() == f"{zoo} ({dataset})":
            return line.get_color()
    return None
