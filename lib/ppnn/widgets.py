"""ipywidgets used by the notebooks. The library works without a display: every widget has a
plain-data twin (``*_frame``) that the notebooks print, so papermill output is meaningful.
"""

from __future__ import annotations

import html
import io
from collections.abc import Callable

import pandas as pd

from .core.ledger import Ledger
from .core.views import EVERYONE
from .sequence import MAX_WIDTH, alert_steps, fmt_bits, lanes, layout, sequence_diagram, steps
from .textfit import math_html

__all__ = ["transcript_frame", "transcript_stepper", "interactive_table", "protocol_player",
           "views_table", "ProtocolPlayer", "InteractiveView", "Progress", "progress"]


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
    """A slider that steps through the rounds of a protocol transcript (an
    :class:`InteractiveView`: in a static copy, the first round's table once)."""
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
    return InteractiveView(w.VBox([slider, out]), _as_html(transcript_frame(ledger, 1, phase)))


class InteractiveView:
    """Controls and the output they drive, with a static twin. Displayed in a live notebook it
    is the widget alone; anywhere else (papermill, nbconvert, GitHub) its HTML is ``static``,
    so each result appears once -- never a live table beside a stale copy."""

    def __init__(self, widget, static: str):
        self.widget, self.static = widget, static

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/plain": "<interactive view>", "text/html": self.static}
        try:
            bundle.update(self.widget._repr_mimebundle_(include=include, exclude=exclude) or {})
        except Exception:  # noqa: BLE001 - no widget support: the static twin stands
            pass
        return bundle


def _as_html(obj) -> str:
    to_html = getattr(obj, "to_html", None)
    if callable(to_html):
        return to_html()
    rich = getattr(obj, "_repr_html_", None)
    return rich() if callable(rich) else f"<pre>{html.escape(str(obj))}</pre>"


def _render(fn: Callable, values: dict):
    """``fn(**values)``, or -- for a setting ``fn`` refuses with ``ValueError`` -- its message
    as a line of HTML (a slider must not reach a traceback)."""
    from IPython.display import HTML

    try:
        return fn(**values)
    except ValueError as e:
        return HTML("<p style='color:#c0392b'>This setting is outside what the function "
                    f"accepts: {html.escape(str(e))}</p>")


def interactive_table(fn: Callable[..., pd.DataFrame], static: str | None = None, **controls):
    """Wrap ``fn(**values) -> DataFrame`` (or a Styler) with the given ipywidgets controls.

    Returns ``(view, default_frame)``: display ``view`` (an :class:`InteractiveView`: the live
    widget, or in a static copy the default frame -- or the HTML ``static`` -- once); the
    default frame is what ``fn`` gives for the controls' initial values. A setting ``fn``
    refuses with ``ValueError`` shows its message in the widget, not a traceback.
    """
    import ipywidgets as w
    from IPython.display import display

    out = w.Output()

    def refresh(change=None):
        out.clear_output(wait=True)
        with out:
            display(_render(fn, {k: c.value for k, c in controls.items()}))

    for c in controls.values():
        c.observe(refresh, names="value")
    refresh()
    default = fn(**{k: c.value for k, c in controls.items()})
    view = InteractiveView(w.VBox([*controls.values(), out]),
                           static if static is not None else _as_html(default))
    return view, default


# -- the protocol player -----------------------------------------------------------------------
def _seen_by(rows: pd.DataFrame, lane: str) -> set[int]:
    """Steps ``lane`` takes part in: it sent or received the message, held the value or did
    the operation."""
    mask = (rows["party"] == lane) | ((rows["kind"] == "message") & (rows["peer"] == lane))
    return set(rows.loc[mask, "step"].astype(int))


def views_table(ledger: Ledger, rows: pd.DataFrame | None = None,
                upto: int | None = None) -> pd.DataFrame:
    """Each step with what every lane sees of it: the value a party received or held, ``sent``
    for its own message, and nothing where it sees nothing (rows of
    :func:`ppnn.sequence.steps`; up to step ``upto``)."""
    rows = steps(ledger) if rows is None else rows
    if upto is not None:
        rows = rows[rows["step"] <= upto]
    out = pd.DataFrame({"step": rows["step"].to_numpy(),
                        "phase/round": [f"{r.phase} r{r.round}" if r.kind == "message" else
                                        r.phase for r in rows.itertuples()],
                        "from": rows["party"].to_numpy(),
                        "to": rows["peer"].to_numpy(),
                        "what": rows["what"].to_numpy(),
                        "size": [fmt_bits(b) if k == "message" else ""
                                 for k, b in zip(rows["kind"], rows["bits"])]})
    for lane in lanes(ledger):
        col = []
        for r in rows.itertuples():
            if r.kind == "message" and r.peer == lane:
                col.append(r.shown or "received")
            elif r.kind == "message" and r.party == lane:
                col.append("sent")
            elif r.kind in ("held", "op") and r.party == lane:
                col.append(r.shown or r.what if r.kind == "held" else "computes")
            else:
                col.append("")
        out[lane] = col
    return out


def _svg(fig) -> str:
    """``fig`` as inline SVG (closed after), scaled down to fit a narrower output area."""
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):].replace("<svg ", "<svg style='max-width:100%;height:auto' ",
                                             1)


def _table_html(df: pd.DataFrame, current: int | None = None, seat: str = EVERYONE,
                seen: set[int] | None = None, alerts: dict[int, str] | None = None) -> str:
    """The views table as HTML: the current step in bold red (grey on a grey band when the
    seat does not see it), steps the seat cannot see grey with their values hidden, alerted
    steps (step -> note) red on pink."""
    lanes_ = [c for c in df.columns if c not in
              ("step", "phase/round", "from", "to", "what", "size")]
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = []
    for r in df.itertuples(index=False):
        step = int(r[0])
        hide = seen is not None and step not in seen  # the seat's lanes show nothing here
        style = []
        if alerts and step in alerts:
            style.append("background:#fbe3e0" + ("" if hide else ";color:#c0392b"))
        if current is not None and step == current:
            style.append("background:#e8e8e8;color:#999" if hide else
                         "color:#c0392b;font-weight:bold")
        elif hide:
            style.append("color:#aaa")
        cells = ["<td></td>" if hide and c in lanes_ else
                 f"<td>{math_html(str(v)) if c == 'what' else html.escape(str(v))}</td>"
                 for c, v in zip(df.columns, r)]
        current_cls = " ppnn-current-row" if current is not None and step == current else ""
        body.append(f"<tr class='ppnn-step{current_cls}' data-step='{step}' "
                    f"style='{';'.join(style)}'>" + "".join(cells) + "</tr>")
    return ("<table class='ppnn-views' style='font-size:12px;font-family:monospace'>"
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")


class ProtocolPlayer:
    """A recorded run, stepped through: the sequence diagram with the current step in red, a
    seat selector (everyone, or one party: the steps it cannot see greyed and its values
    hidden), the views table and the bytes and rounds so far.

    Displayed in a live notebook, it is a widget: step slider, play button and seat on top;
    under them the current step in words with its value, then the diagram of the steps so
    far (the last ``window`` of them: the current step is its last row, always next to the
    controls), then the views table up to that step (scrolled to its end). It opens on the
    first step its seat sees, and its title says which seat is taken. Anywhere else
    (papermill, nbconvert, a static page) the same output holds the whole diagram and the
    views table as HTML, as the player's seat sees them, so an executed notebook shows the
    protocol.

    ``title``: what the run is (the player adds the seat); ``split_ops``: one step per
    operation booking (see :func:`ppnn.sequence.steps`); ``panel``: ``panel(step) ->
    matplotlib figure, HTML string or None``, a picture the same slider drives (e.g. the slot
    diagram of a packed-HE kernel after that step); the static twin shows it at the last
    step. ``alert``: ledger message index -> note (``{57: "tampered"}``): those messages' rows
    red on a pink band in the diagram and the table, the note shown with them (default:
    none). ``window``: rows of the live diagram (>= 1); ``max_width``: the diagram's widest
    width in inches (its labels are cut only past it)."""

    def __init__(self, ledger: Ledger, seat: str = EVERYONE, group: str | None = "auto",
                 title: str | None = None, max_rows: int = 40, split_ops: bool = False,
                 panel: Callable[[int], object] | None = None,
                 alert: dict[int, str] | None = None, window: int = 8,
                 max_width: float = MAX_WIDTH):
        seats = [EVERYONE, *lanes(ledger)]
        if seat not in seats:
            raise ValueError(f"seat must be one of {seats}, got {seat!r}")
        if panel is not None and not callable(panel):
            raise TypeError(f"panel must be a callable step -> figure or HTML, got {panel!r}")
        if not isinstance(window, int) or window < 1:
            raise ValueError(f"window must be an int >= 1 (rows), got {window!r}")
        self.ledger, self.seat, self.title, self.seats = ledger, seat, title, seats
        self.panel, self.window = panel, window
        self.rows = steps(ledger, group, max_rows=max_rows, split_ops=split_ops)
        self.table = views_table(ledger, self.rows)
        self.alert = dict(alert or {})
        self.alerts = alert_steps(self.rows, self.alert)  # step -> note
        self.max_width = float(max_width)
        self._layouts: dict[str, object] = {}
        self._widget = None

    @property
    def n_steps(self) -> int:
        return len(self.rows)

    def seen(self, seat: str) -> set[int] | None:
        """Steps ``seat`` takes part in (None: every step)."""
        return None if seat == EVERYONE else _seen_by(self.rows, seat)

    def first_seen(self, seat: str) -> int:
        """The first step ``seat`` sees (1 when it sees none): where the player opens."""
        seen = self.seen(seat)
        return min(seen) if seen else 1

    def title_for(self, seat: str) -> str:
        """The diagram's title as ``seat`` sees it: the run's title and the seat taken."""
        return f"{self.title} (seat: {seat})" if self.title else f"seat: {seat}"

    def so_far(self, step: int) -> str:
        """Bytes and rounds booked up to ``step``, per phase."""
        done = self.rows[(self.rows["step"] <= step) & (self.rows["kind"] == "message")]
        parts = []
        for ph in ("offline", "online"):
            d = done[done["phase"] == ph]
            if len(d):
                parts.append(f"{ph}: {fmt_bits(int(d['bits'].sum()))} in "
                             f"{d['round'].nunique()} round(s)")
        return "; ".join(parts) or "nothing sent yet"

    def _describe(self, step: int, seat: str) -> tuple[str, str, str]:
        """``describe``'s three parts: what happens, the value ('' when none is seen), the
        alert note."""
        r = self.rows[self.rows["step"] == step].iloc[0]
        seen = self.seen(seat)
        if seen is not None and step not in seen:
            return f"step {step}/{self.n_steps}: {seat} does not see this step", "", ""
        if r["kind"] == "message":
            text = f"{r['party']} \u2192 {r['peer']}: {r['what']} ({fmt_bits(r['bits'])})"
        elif r["kind"] == "held":
            text = f"{r['party']} holds {r['what']}"
        else:
            text = f"{r['party']} computes locally: {r['what']}"
        note = f" [{self.alerts[step]}]" if step in self.alerts else ""
        return f"step {step}/{self.n_steps} [{r['phase']}]: {text}", r["shown"] or "", note

    def describe(self, step: int, seat: str = EVERYONE) -> str:
        """One line on ``step`` as ``seat`` sees it (its value included)."""
        text, value, note = self._describe(step, seat)
        return text + (f" = {value}" if value else "") + note

    def line_html(self, step: int, seat: str = EVERYONE) -> str:
        """:meth:`describe` as the live widget's line (the value in a ``ppnn-value`` span)."""
        text, value, note = self._describe(step, seat)
        value = f"<span class='ppnn-value'> = {html.escape(value)}</span>" if value else ""
        return (f"<b class='ppnn-current'>{math_html(text)}{value}{html.escape(note)}</b>"
                f"<br><span class='ppnn-sofar'>so far: {html.escape(self.so_far(step))}</span>")

    def panel_html(self, step: int) -> str:
        """The ``panel`` picture at ``step`` as HTML ('' without a panel)."""
        if self.panel is None:
            return ""
        out = self.panel(step)
        if out is None:
            return ""
        body = out if isinstance(out, str) else _svg(out)
        return f"<div class='ppnn-panel' data-step='{int(step)}'>{body}</div>"

    def layout(self, seat: str = EVERYONE):
        """The diagram's lanes as ``seat`` sees the run (:func:`ppnn.sequence.layout`: the
        room its texts need; the same at every step)."""
        if seat not in self._layouts:
            self._layouts[seat] = layout(self.rows, lanes(self.ledger), None, self.max_width,
                                         self.alerts, self.seen(seat))
        return self._layouts[seat]

    def figure(self, step: int | None = None, seat: str = EVERYONE, live: bool = False):
        """The diagram as ``seat`` sees it, ``step`` current; ``live``: as the widget draws
        it, the steps up to ``step`` only, the last :attr:`window` of them."""
        return sequence_diagram(self.ledger, highlight=step, visible=self.seen(seat),
                                rows=self.rows, title=self.title_for(seat), alert=self.alert,
                                upto=step if live else None,
                                window=self.window if live else None,
                                lay=self.layout(seat))

    def diagram_html(self, step: int | None = None, seat: str = EVERYONE,
                     live: bool = False) -> str:
        """:meth:`figure` as inline SVG in a ``ppnn-diagram`` block (``data-full``: the
        diagram is at its widest width, so a label may be cut; ``data-seat``, ``data-step``:
        what it shows)."""
        full = "1" if self.layout(seat).full else "0"
        at = f" data-step='{int(step)}'" if step is not None else ""
        return (f"<div class='ppnn-diagram' data-full='{full}' data-seat="
                f"'{html.escape(seat, quote=True)}'{at}>{_svg(self.figure(step, seat, live))}"
                "</div>")

    def static_html(self) -> str:
        """The static twin: the whole diagram and the views table, as the player's seat sees
        them (the steps it cannot see greyed, their values hidden)."""
        seat = "" if self.seat == EVERYONE else (
            f"<p>Seen from <b>{html.escape(self.seat)}</b>'s seat: grey steps are ones it "
            "does not see.</p>")
        table = _table_html(self.table, seat=self.seat, seen=self.seen(self.seat),
                            alerts=self.alerts)
        return (f"<div class='ppnn-player-static'>{seat}"
                f"{self.diagram_html(seat=self.seat)}"
                f"{self.panel_html(self.n_steps)}"
                f"<p>{html.escape(self.so_far(self.n_steps))}</p>"
                f"{table}</div>")

    def widget(self):
        """The live widget (made once)."""
        if self._widget is not None:
            return self._widget
        import ipywidgets as w

        n = max(self.n_steps, 1)
        start = self.first_seen(self.seat)
        play = w.Play(value=start, min=1, max=n, step=1, interval=900, description="play")
        slider = w.IntSlider(value=start, min=1, max=n, description="step",
                             continuous_update=False)
        w.jslink((play, "value"), (slider, "value"))
        seat = w.Dropdown(options=self.seats, value=self.seat, description="seat")
        line = w.HTML()
        diagram = w.HTML()
        panel = w.HTML()
        table = w.HTML()

        def redraw(change=None):
            k, who = slider.value, seat.value
            diagram.value = self.diagram_html(k, who, live=True)
            panel.value = self.panel_html(k)
            # the table up to this step, in a box that stays scrolled to its end
            table.value = ("<div class='ppnn-table-box' style='max-height:16em;overflow:auto;"
                           "display:flex;flex-direction:column-reverse'>"
                           + _table_html(self.table[self.table["step"] <= k], k, who,
                                         self.seen(who), self.alerts) + "</div>")
            # the line last: once a page shows it, the diagram and the table are there
            line.value = self.line_html(k, who)

        slider.observe(redraw, names="value")
        seat.observe(redraw, names="value")
        redraw()
        self._widget = w.VBox([w.HBox([play, slider, seat]), line, diagram, panel, table],
                              layout=w.Layout(overflow="auto"))
        self._widget.add_class("ppnn-player")
        return self._widget

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/plain": f"<protocol player: {self.n_steps} steps; "
                                f"seats {', '.join(self.seats)}>",
                  "text/html": self.static_html()}
        try:
            bundle.update(self.widget()._repr_mimebundle_(include=include, exclude=exclude)
                          or {})
            bundle["text/plain"] = f"<protocol player: {self.n_steps} steps>"
        except Exception:  # noqa: BLE001 - no widget support: the static twin stands
            pass
        return bundle


def protocol_player(ledger: Ledger, seat: str = EVERYONE, group: str | None = "auto",
                    title: str | None = None, max_rows: int = 40, split_ops: bool = False,
                    panel: Callable[[int], object] | None = None,
                    alert: dict[int, str] | None = None, window: int = 8,
                    max_width: float = MAX_WIDTH) -> ProtocolPlayer:
    """Step through a recorded run (see :class:`ProtocolPlayer`); display the result."""
    return ProtocolPlayer(ledger, seat, group, title, max_rows, split_ops, panel, alert,
                          window, max_width)


class Progress:
    """A status line for a long cell: what runs, how far it got and for how long.

    ``with progress("accuracy sweep", total=10) as p: ... p.step()`` shows one line that a
    background ticker refreshes every ``every`` seconds (elapsed time, and ``done/total`` when
    the work reports its steps); at the end the line says what ran and how long it took, so an
    executed notebook keeps that line and no bar. Outside IPython it prints the final line
    only. The ticker only reads the counters; the work runs on the calling thread."""

    def __init__(self, label: str, total: int | None = None, every: float = 1.0):
        if total is not None and int(total) < 1:
            raise ValueError(f"total must be >= 1 (or None), got {total}")
        if not every > 0:
            raise ValueError(f"every must be > 0 seconds, got {every}")
        self.label, self.total, self.every = str(label), total, float(every)
        self.done, self.note = 0, ""
        self._t0 = 0.0
        self._handle = None
        self._stop = None
        self._thread = None

    def step(self, n: int = 1, note: str = "") -> None:
        """Count ``n`` finished steps; ``note`` says what finished last."""
        self.done += int(n)
        if note:
            self.note = str(note)

    def _line(self, final: bool = False, failed: bool = False) -> str:
        import time

        secs = time.perf_counter() - self._t0
        count = f" {self.done}/{self.total}" if self.total else ""
        if failed:
            return f"{self.label}: stopped after {secs:.1f} s{count and ' at' + count}"
        if final:
            return f"{self.label}: done{count and ' (' + count.strip() + ')'} in {secs:.1f} s"
        note = f" -- {self.note}" if self.note else ""
        return f"{self.label}: running{count} ({secs:.0f} s){note}"

    def _show(self, final: bool = False, failed: bool = False):
        from IPython.display import HTML

        text = html.escape(self._line(final, failed))
        return HTML(f'<div class="ppnn-progress" style="font-family:monospace">{text}</div>')

    def __enter__(self) -> Progress:
        import threading
        import time

        self._t0 = time.perf_counter()
        try:
            from IPython import get_ipython
            from IPython.display import display
        except ImportError:  # pragma: no cover - IPython is a dependency
            return self
        if get_ipython() is None:
            return self
        self._handle = display(self._show(), display_id=True)
        self._stop = threading.Event()

        def tick():
            while not self._stop.wait(self.every):
                self._handle.update(self._show())

        self._thread = threading.Thread(target=tick, name="ppnn-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
        if exc[0] is not None:  # the exception itself is shown by the caller
            if self._handle is not None:
                self._handle.update(self._show(failed=True))
            return
        if self._handle is not None:
            self._handle.update(self._show(final=True))
        else:
            print(self._line(final=True))


def progress(label: str, total: int | None = None, every: float = 1.0) -> Progress:
    """A :class:`Progress` status line for a cell that takes more than a few seconds."""
    return Progress(label, total, every)
