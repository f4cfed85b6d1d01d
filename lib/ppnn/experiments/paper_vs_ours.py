"""Compare, save and show one reproduced paper table; a paper's status summary and errata.

A notebook's "Reproduced tables" section is one call per paper table into its paper's
``tables`` module (``ppnn.experiments.<paper>.tables``). Each of those builds the reproduced
values, names the reasons that explain a difference, and hands the frame to
:func:`compare_and_save` here -- :func:`ppnn.report.compare` against
``data/paper/<paper>_<table>.csv``, :func:`ppnn.report.save` to ``figures/tables/`` -- and
shows the result once with :func:`show` (both in one: :func:`compare_and_show`). Table
functions return nothing, so a cell ending in one shows its table exactly once.

The tables compared in this process are kept (:data:`COMPARED`) for a paper's
:func:`status_summary`.
"""

from __future__ import annotations

import pandas as pd

from ppnn import paths, report

#: every table compared in this process, ``(paper, table) -> compared frame``, in order
COMPARED: dict[tuple[str, str], pd.DataFrame] = {}


def compare_and_save(paper: str, table: str, frame: pd.DataFrame, title: str,
                     rtol: float = 0.05, reasons: dict | None = None,
                     kind: str | None = None) -> pd.DataFrame:
    """:func:`ppnn.report.compare` ``frame`` with the paper's table, :func:`ppnn.report.save`
    it under ``title`` and keep it for :func:`status_summary`; returns the compared frame."""
    cmp = report.compare(paper, table, frame, rtol=rtol, kind=kind, reasons=reasons or {})
    return save(paper, table, cmp, title)


def save(paper: str, table: str, cmp: pd.DataFrame, title: str) -> pd.DataFrame:
    """:func:`ppnn.report.save` a compared frame under ``title`` and keep it for
    :func:`status_summary` (for tables compared in more than one step); returns it."""
    report.save(cmp, paper, table, title)
    COMPARED[(paper, table)] = cmp
    return cmp


def compare_and_show(paper: str, table: str, frame: pd.DataFrame, title: str,
                     reasons: dict | None = None, *, rtol: float = 0.05,
                     heading: str | None = None, columns=None) -> None:
    """:func:`compare_and_save`, then :func:`show` the compared table once under ``heading``
    (a template with ``{name}``, the table's key, ``{label}``, its label in the paper, and
    ``{title}``; default: the :func:`status_line`), only ``columns`` if given."""
    cmp = compare_and_save(paper, table, frame, title, rtol=rtol, reasons=reasons)
    text = (status_line(title, cmp) if heading is None else
            heading.format(name=table, label=cmp["table"].iloc[0], title=title))
    show(cmp, text, columns)


def status_line(title: str, cmp: pd.DataFrame) -> str:
    """``**title** — exact: 3, differs: 1`` (the statuses of one compared table)."""
    return f"**{title}** — " + ", ".join(
        f"{k}: {v}" for k, v in cmp["status"].value_counts().items())


def show(df: pd.DataFrame, heading: str | None = None, columns=None) -> None:
    """Display ``heading`` (Markdown) and ``df`` (only ``columns`` if given) in a notebook;
    printed as text elsewhere."""
    from IPython.display import Markdown, display

    display(*([Markdown(heading)] if heading else []),
            df if columns is None else df[list(columns)])


def compared(paper: str) -> list[pd.DataFrame]:
    """The tables of ``paper`` compared in this process, in the order they were compared."""
    return [df for (p, _), df in COMPARED.items() if p == paper]


def status_summary(paper: str, by_table: bool = True) -> pd.DataFrame:
    """How many cells of ``paper``'s compared tables have each status: per table (a table x
    status count frame) or, with ``by_table=False``, over all of them (column ``cells``)."""
    done = compared(paper)
    if not done:
        raise ValueError(f"no {paper} table compared in this process yet")
    rows = pd.concat(done)
    if by_table:
        return rows.groupby("table")["status"].value_counts().unstack(fill_value=0)
    return rows["status"].value_counts().to_frame("cells")


def errata(paper: str) -> pd.DataFrame:
    """Save ``paper``'s errata (``data/errata.csv``, rows: paper, where, finding, evidence) to
    ``figures/tables/errata_<paper>.csv`` for the report; returns them."""
    report.save_errata(paper)
    return report.load_errata(paper)


def headlines(paper: str, ours: pd.DataFrame, ladders=(), show_table: bool = True
              ) -> pd.DataFrame:
    """Save ``paper``'s ladders (:func:`ppnn.experiments.ladder.save`) and judge its headline
    claims (:func:`ppnn.report.headlines`, with each ladder's verdict beside its claim);
    shows the headline table once in a notebook and returns it."""
    from . import ladder as lad

    ladders = list(ladders)
    lad.save(paper, ladders)
    verdicts = {(x.row, x.metric): x.verdict for x in ladders if x.table == "Headlines"}
    df = report.headlines(paper, ours, verdicts)
    if show_table:
        show(report._headline_view(df).drop(columns="paper"),
             f"**{paper}: the headline claims** — " + report.headline_verdicts(
                 paths.tables_dir(), paper))
    return df


def show_ladder(ladder) -> None:
    """Draw ``ladder`` as a waterfall (:func:`ppnn.plotting.waterfall`), save it to
    ``figures/<paper>/ladders/<slug>.svg`` and show it with its steps."""
    from ppnn import plotting

    fig = plotting.waterfall(ladder)
    plotting.savefig(fig, ladder.paper, report.ladder_slug(ladder.key), formats=("svg",),
                     directory=paths.figures_dir(ladder.paper) / "ladders")
    plotting.show(fig)


LADDER_COLUMNS = ("row", "step", "assumption", "paper_as", "value", "factor", "verdict")


def show_ladders(ladders, heading: str | None = None) -> None:
    """Show every step of ``ladders`` as one frame (:data:`LADDER_COLUMNS`)."""
    from . import ladder as lad

    show(lad.frame(list(ladders)), heading, LADDER_COLUMNS)
