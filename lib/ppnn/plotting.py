"""Deterministic figure output: the same data and seed give byte-identical SVG/PNG files."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
from matplotlib import ticker

from . import paths

__all__ = ["savefig", "setup", "show", "waterfall", "view_panels", "plain_log_ticks",
           "label_points"]


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


class _PlainLogFormatter(ticker.LogFormatterSciNotation):
    """Matplotlib's choice of which log ticks to label, each label a plain number ("0.5", "2",
    "10,000"; from ten million on "1e+07")."""

    def __call__(self, x, pos=None):
        if not super().__call__(x, pos):
            return ""
        return f"{int(x):,}" if x == int(x) and abs(x) < 1e7 else f"{x:g}"


#: minor ticks of a log axis that spans less than a decade (1.2, 1.5, 2, ... times a power)
_NARROW_SUBS = (1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)


def plain_log_ticks(ax, axis: str = "y") -> None:
    """Label the ticks of a log ``axis`` (``"x"``, ``"y"`` or ``"both"``) of ``ax`` as plain
    numbers ("2", "0.5", "300") instead of "2 x 10^0". An axis whose limits span less than a
    decade gets minor ticks at 1.2, 1.5, 2, 2.5, ... times a power of ten, so it carries more
    than one or two labels: call it once the limits are set."""
    if axis not in ("x", "y", "both"):
        raise ValueError(f"axis must be 'x', 'y' or 'both', got {axis!r}")
    for name in (("x", "y") if axis == "both" else (axis,)):
        a = getattr(ax, f"{name}axis")
        lo, hi = sorted(getattr(ax, f"get_{name}lim")())
        if lo > 0 and hi / lo < 10:
            a.set_minor_locator(ticker.LogLocator(subs=_NARROW_SUBS))
        a.set_major_formatter(_PlainLogFormatter())
        a.set_minor_formatter(_PlainLogFormatter(labelOnlyBase=False))


#: where a label may sit around its point (offsets in points), nearest first
_LABEL_OFFSETS = [(d * dx, d * dy) for d in (4, 9, 15)
                  for dx, dy in ((1, 1), (1, -1), (-1, 1), (-1, -1), (1, 0), (-1, 0), (0, 1),
                                 (0, -1))]


def label_points(ax, x, y, labels, colors=None, fontsize: float = 7, merge: float = 4.0,
                 avoid=None, settle: bool = True) -> list:
    """Label the points ``(x[i], y[i])`` of ``ax`` with ``labels[i]`` so that no two labels
    overlap and no label covers a point or leaves the axes.

    Points of one colour closer than ``merge`` points (on screen) share one label, their
    labels joined by commas ("8,10,12" for a cluster); each label then takes the nearest free
    place around its point (``_LABEL_OFFSETS``), or -- with no free place -- the one that
    overlaps least. ``avoid``: further ``(x, y)`` points in data coordinates that labels must
    not cover. Call it once the axes' scales and limits are set; it draws the figure once to
    settle its layout (``settle=False``: the caller just did, e.g. before labelling several
    axes of one figure). Deterministic: the same figure gives the same places. Returns the
    annotations."""
    from matplotlib.transforms import Bbox

    labels = [str(t) for t in labels]
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if not len(labels) == x.size == y.size:
        raise ValueError(f"x, y and labels must have one entry per point, got {x.size}, "
                         f"{y.size} and {len(labels)}")
    colors = list(colors) if colors is not None else [None] * x.size
    fig = ax.figure
    if settle:
        fig.draw_without_rendering()  # settle the layout, so display coordinates hold
    renderer = fig.canvas.get_renderer()
    px_per_pt = fig.dpi / 72
    disp = ax.transData.transform(np.column_stack([x, y])) if x.size else np.zeros((0, 2))
    # clusters: a point joins the first earlier point of its colour within ``merge`` points
    groups: list[list[int]] = []
    for i in range(x.size):
        for g in groups:
            j = g[0]
            if colors[j] == colors[i] and np.hypot(*(disp[i] - disp[j])) <= merge * px_per_pt:
                g.append(i)
                break
        else:
            groups.append([i])
    others = disp
    if avoid is not None:
        extra = np.asarray(avoid, dtype=float).reshape(-1, 2)
        others = np.vstack([disp, ax.transData.transform(extra)]) if extra.size else disp
    r = 2.5 * px_per_pt  # half a marker, in pixels
    markers = [Bbox.from_extents(px - r, py - r, px + r, py + r) for px, py in others]
    frame = ax.get_window_extent(renderer)
    placed, out = [], []

    def cost(bb):
        overlap = sum(_overlap(bb, o) for o in placed) + sum(_overlap(bb, m) for m in markers)
        return overlap + (bb.width * bb.height - _overlap(bb, frame)) * 4

    for g in groups:
        i = g[0]
        text = ",".join(dict.fromkeys(labels[j] for j in g))
        best = None
        for dx, dy in _LABEL_OFFSETS:
            ann = ax.annotate(text, (x[i], y[i]), xytext=(dx, dy), textcoords="offset points",
                              fontsize=fontsize, color=colors[i],
                              ha="left" if dx > 0 else "right" if dx < 0 else "center",
                              va="bottom" if dy > 0 else "top" if dy < 0 else "center")
            bb = ann.get_window_extent(renderer)
            c = cost(bb)
            if best is None or c < best[0]:
                if best is not None:
                    best[1].remove()
                best = (c, ann, bb)
            else:
                ann.remove()
            if c == 0:
                break
        placed.append(best[2])
        out.append(best[1])
    return out


def _overlap(a, b) -> float:
    """Area of the intersection of two display-space boxes."""
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return w * h if w > 0 and h > 0 else 0.0
