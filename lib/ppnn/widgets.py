"""ipywidgets used by the notebooks. The library works without a display: every widget has a
plain-data twin (``*_frame``) that the notebooks print, so papermill output is meaningful.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from .core.ledger import Ledger

__all__ = ["transcript_frame", "transcript_stepper", "interactive_table"]


def transcript_frame(ledger: Ledger, round_no: int | None = None, phase: str = "online"
                     ) -> pd.DataFrame:
    """The messages of one round (or all rounds) as a table: who sends what to whom."""
    df = ledger.messages_frame()
    df = df[df["phase"] == phase]
    rounds = sorted(df["round"].unique())
    df = df.assign(step=df["round"].map({r: i + 1 for i, r in enumerate(rounds)}))
    if round_no is not None:
        df = df[df["step"] == round_no]
    return df[["step", "sender", "receiver", "bits", "label", "what"]].reset_index(drop=True)


def transcript_stepper(ledger: Ledger, phase: str = "online"):
    """A slider that steps through the rounds of a protocol transcript."""
    import ipywidgets as w
    from IPython.display import display

    n = max(ledger.rounds(phase), 1)
    slider = w.IntSlider(value=1, min=1, max=n, description="round", continuous_update=False)
    out = w.Output()

    def show(change=None):
        out.clear_output(wait=True)
        with out:
            display(transcript_frame(ledger, slider.value, phase))

    slider.observe(show, names="value")
    show()
    return w.VBox([slider, out])


def interactive_table(fn: Callable[..., pd.DataFrame], **controls):
    """Wrap ``fn(**values) -> DataFrame`` with the given ipywidgets controls.

    Returns ``(widget, default_frame)``; the default frame is what ``fn`` gives for the
    controls' initial values, so non-interactive runs still show the result.
    """
    import ipywidgets as w
    from IPython.display import display

    out = w.Output()

    def refresh(change=None):
        out.clear_output(wait=True)
        with out:
            display(fn(**{k: c.value for k, c in controls.items()}))

    for c in controls.values():
        c.observe(refresh, names="value")
    refresh()
    default = fn(**{k: c.value for k, c in controls.items()})
    return w.VBox([*controls.values(), out]), default
