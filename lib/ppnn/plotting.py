"""Deterministic figure output: the same data and seed give byte-identical SVG/PNG files."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np

from . import paths

__all__ = ["savefig", "setup", "show", "waterfall", "view_panels"]


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
    ax.set_xticks(range(len(labels)), [lbl.replace(" ", "\n", 1) for lbl in labels],
                  fontsize=8)
    ax.set_ylabel(ladder.unit or "value")
    ax.set_title(f"{ladder.table}: {ladder.row} ({ladder.metric})", fontsize=9)
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    fig.tight_layout()
    return fig


def view_panels(experiments: dict, xlabel: str, ylabel: str = "samples", *,
                value=None, bins: int = 40, range: tuple | None = None,
                levels: int | None = None, secret_label="x = {}",
                width: float = 5.0, height: float = 3.0):
    """View experiments (:class:`ppnn.core.views.ViewExperiment`) side by side, one panel per
    experiment (``{title: experiment}``): the party's sample for each of the two secrets, with
    the KS statistic and its threshold in the title.

    Every panel has **its own y axis**: a broken variant's spike must not flatten the honest
    panel's histogram, whose flatness is the point. ``value(sample) -> array`` maps a sample
    before it is drawn (default: as is); ``levels``: a discrete sample taking the values
    ``0 .. levels - 1``, drawn as paired bars per value instead of a histogram of ``bins``
    bins over ``range``. ``secret_label``: a format string or a callable that names a secret
    in the legend. Returns the figure."""
    import matplotlib.pyplot as plt

    setup()
    if not experiments:
        raise ValueError("experiments must hold at least one view experiment")
    if levels is not None and int(levels) < 2:
        raise ValueError(f"levels must be >= 2 (or None), got {levels}")
    fig, axes = plt.subplots(1, len(experiments), figsize=(width * len(experiments), height),
                             squeeze=False)
    for ax, (title, exp) in zip(axes[0], experiments.items()):
        for (secret, sample), shift in zip(zip(exp.secrets, exp.samples), (-0.2, 0.2)):
            v = np.asarray(value(sample) if value is not None else sample)
            label = (secret_label(secret) if callable(secret_label)
                     else secret_label.format(secret))
            if levels is None:
                ax.hist(v, bins=bins, range=range, alpha=0.55, label=label)
            else:
                counts = np.bincount(v.astype(np.int64), minlength=int(levels))
                ax.bar(np.arange(counts.size) + shift, counts, width=0.4, label=label)
        ax.set_title(f"{title}\nKS D = {exp.test.statistic:.3f}, threshold "
                     f"{exp.test.threshold:.3f}", fontsize=10)
        ax.set(xlabel=xlabel, ylabel=ylabel)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    return fig
