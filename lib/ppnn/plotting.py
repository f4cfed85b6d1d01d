"""Deterministic figure output: the same data and seed give byte-identical SVG/PNG files."""

from __future__ import annotations

from pathlib import Path

import matplotlib

from . import paths

__all__ = ["savefig", "setup", "show", "waterfall"]


def setup() -> None:
    """Matplotlib settings that make SVG output reproducible."""
    matplotlib.rcParams["svg.hashsalt"] = "ppnn-lab"
    matplotlib.rcParams["svg.fonttype"] = "none"
    matplotlib.rcParams["figure.dpi"] = 100


def savefig(fig, paper: str, name: str, formats=("svg", "png"),
            directory: str | Path | None = None) -> list[Path]:
    """Save ``fig`` as ``figures/<paper>/<name>.<fmt>`` (or ``<directory>/<name>.<fmt>``)
    atomically, without dates in metadata."""
    setup()
    out = []
    folder = Path(directory) if directory is not None else paths.figures_dir(paper)
    for fmt in formats:
        target = folder / f"{name}.{fmt}"
        meta = {"Date": None} if fmt == "svg" else {"Software": None}
        with paths.atomic_path(target) as tmp:
            fig.savefig(tmp, format=fmt, metadata=meta, bbox_inches="tight")
        out.append(target)
    return out


def show(fig) -> None:
    """Display ``fig`` once and close it: in a live notebook (inline backend) a figure left
    open is drawn a second time when the cell ends; closed, only this copy stays."""
    import matplotlib.pyplot as plt
    from IPython.display import display

    display(fig)
    plt.close(fig)



def waterfall(ladder, ax=None):
    """A :class:`ppnn.experiments.ladder.Ladder` as a waterfall on a log axis: ours, each
    step's factor as a floating bar from the value before it (green up, red down), the
    residual (hatched) when the ladder stops short, and the paper's value. Returns the
    figure."""
    import matplotlib.pyplot as plt
    from matplotlib import ticker

    setup()
    if ax is None:
        fig, ax = plt.subplots(figsize=(1.6 + 1.1 * (len(ladder.steps) + 2), 3.4))
    else:
        fig = ax.figure
    values = ladder.values
    labels = ["ours"] + [s.assumption for s in ladder.steps]
    bottom = min([*values, ladder.target]) / 1.6
    ax.bar(0, values[0] - bottom, bottom=bottom, color="#4c72b0")
    for i, (a, b) in enumerate(zip(values, values[1:]), start=1):
        lo, hi = sorted((a, b))
        ax.bar(i, hi - lo, bottom=lo, color="#55a868" if b >= a else "#c44e52")
        ax.text(i, hi * 1.05, f"x{b / a:.3g}", ha="center", va="bottom", fontsize=8)
        ax.plot([i - 1.4, i - 0.6], [a, a], color="0.5", lw=0.8)
    n = len(values)
    if not ladder.reached:
        lo, hi = sorted((values[-1], ladder.target))
        ax.bar(n, hi - lo, bottom=lo, color="white", edgecolor="0.3", hatch="//")
        ax.text(n, hi * 1.05, f"x{ladder.residual:.3g}", ha="center", va="bottom", fontsize=8)
        labels.append("unexplained")
        n += 1
    ax.bar(n, ladder.target - bottom, bottom=bottom, color="#8172b2")
    labels.append("paper")
    ax.set_yscale("log")
    ax.set_ylim(bottom, max([*values, ladder.target]) * 2.5)  # autoscale can drop the ours bar
    ax.set_xticks(range(len(labels)), [lbl.replace(" ", "\n", 1) for lbl in labels],
                  fontsize=8)
    ax.set_ylabel(ladder.unit or "value")
    ax.set_title(f"{ladder.table}: {ladder.row} ({ladder.metric})", fontsize=9)
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    fig.tight_layout()
    return fig
