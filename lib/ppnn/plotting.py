"""Deterministic figure output: the same data and seed give byte-identical SVG/PNG files."""

from __future__ import annotations

from pathlib import Path

import matplotlib

from . import paths

__all__ = ["savefig", "setup", "show"]


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

