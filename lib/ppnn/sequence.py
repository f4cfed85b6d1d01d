"""Sequence diagrams of a ledger: who sends what to whom, round by round.

:func:`steps` turns a ledger into the rows a person reads -- one per message, per holding
(with values) and per batch of local operations (HE rotations, gate levels ...), or, for long
runs, one per round or per layer and direction -- and :func:`sequence_diagram` draws them:
one vertical lane per party (and one for the dealer when it sent offline material), an arrow
per row labelled with its ``what`` and size, local operations as marks on their lane, rounds
numbered on the left and the offline phase shaded. The protocol player
(:func:`ppnn.widgets.protocol_player`) steps through the same rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .core.ledger import Ledger

__all__ = ["steps", "sequence_diagram", "layout", "Layout", "lanes", "fmt_bits", "alert_steps",
           "MAX_WIDTH"]

_STEP_COLUMNS = ["step", "kind", "party", "peer", "what", "bits", "phase", "round", "label",
                 "messages", "shown"]


def fmt_bits(bits: float) -> str:
    """``'64 bit'``, ``'1.5 KB'``, ``'3.2 MB'`` (decimal units, as the papers)."""
    if bits < 8 * 100:
        return f"{int(bits)} bit" if bits % 8 else f"{int(bits) // 8} B"
    b = bits / 8
    for unit in ("KB", "MB", "GB"):
        b /= 1000
        if b < 1000:
            return f"{b:.3g} {unit}"
    return f"{b:.3g} TB"


def lanes(ledger: Ledger) -> list[str]:
    """The diagram's lanes, left to right: the dealer (if it sent anything), then the parties."""
    dealer = any(m.sender == Ledger.DEALER for m in ledger.messages)
    return ([Ledger.DEALER] if dealer else []) + list(ledger.parties)


def _ops_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} x{v}" for k, v in counts.items())


def steps(ledger: Ledger, group: str | None = None, ops: bool = True,
          max_rows: int = 40, split_ops: bool = False) -> pd.DataFrame:
    """The rows of the diagram and the player, in the order booked (:meth:`Ledger.events`).

    ``group``: None (one row per message, holding and operation batch -- the operations one
    party booked at one position, merged: ``Perm x3, ScMult x4``), ``'round'`` (one row per
    round, sender and receiver, sizes summed) or ``'label'`` (one per top-level label, phase,
    sender and receiver); grouped, the operations are one mark per party, phase and
    top-level label, and so are the holdings; ``'auto'``: none up to ``max_rows`` events,
    then per round, then per layer. ``split_ops`` (ungrouped only): one row per operation
    booking, in order (a kernel's ``ScMult``, ``Perm``, ``Add`` ... as separate steps).
    Holdings appear only when the ledger recorded values. ``messages`` lists the ledger
    indices a row stands for."""
    if group == "auto":
        group = _auto_group(ledger, max_rows)
    if group not in (None, "round", "label"):
        raise ValueError(f"group must be None, 'round', 'label' or 'auto', got {group!r}")
    rows: dict[tuple, dict] = {}  # row key -> row, in the order of its first event
    for kind, i in ledger.events():
        if kind == "held":
            h = ledger.holds[i]
            if group is None:
                rows[("held", i)] = {"kind": "held", "party": h.party, "peer": "", "bits": 0,
                                     "what": h.name, "phase": h.phase, "round": 0,
                                     "label": h.label, "messages": [], "shown": h.value.text()}
                continue
            top = h.label.split("/")[0]  # grouped: one mark per party, phase and layer
            r = rows.setdefault(("held", h.party, h.phase, top), {
                "kind": "held", "party": h.party, "peer": "", "bits": 0, "what": {},
                "phase": h.phase, "round": 0, "label": top, "messages": [], "shown": ""})
            r["what"][h.name] = r["what"].get(h.name, 0) + 1
        elif kind == "op":
            if not ops:
                continue
            o = ledger.ops[i]
            party = o.party or ledger.parties[-1]
            label = o.label if group is None else o.label.split("/")[0]
            where = ledger.op_at[i] if group is None else None
            key = ("op", where, party, o.phase, label) + ((i,) if split_ops and group is None
                                                          else ())
            r = rows.setdefault(key, {
                "kind": "op", "party": party, "peer": "", "bits": 0, "phase": o.phase,
                "round": 0, "label": label, "messages": [], "what": {}, "shown": ""})
            r["what"][o.op] = r["what"].get(o.op, 0) + o.n
        else:
            m = ledger.messages[i]
            top = m.label.split("/")[0] if m.label else "(none)"
            key = {None: ("message", i), "round": ("message", m.phase, m.round),
                   "label": ("message", m.phase, top)}[group] + (m.sender, m.receiver)
            v = ledger.values.get(i)
            r = rows.setdefault(key, {"kind": "message", "party": m.sender, "peer": m.receiver,
                                      "what": {}, "bits": 0, "phase": m.phase, "round": m.round,
                                      "label": m.label if group != "label" else top,
                                      "messages": [],
                                      "shown": v.text() if v is not None and group is None
                                      else ""})
            r["bits"] += m.bits
            r["messages"].append(i)
            r["what"][m.what] = r["what"].get(m.what, 0) + 1
    for r in rows.values():
        if r["kind"] == "op":
            r["what"] = _ops_text(r["what"])
        elif r["kind"] == "held" and isinstance(r["what"], dict):
            names = list(r["what"])
            n = sum(r["what"].values())
            r["what"] = f"holds {names[0]}" + (f" (+{n - 1} more)" if n > 1 else "")
        elif r["kind"] == "message":
            whats = sorted(r["what"].items(), key=lambda kv: -kv[1])
            r["what"] = whats[0][0] + (f" (+{len(whats) - 1} kinds)" if len(whats) > 1 else "")
            if len(r["messages"]) > 1:
                r["what"] += f" [{len(r['messages'])} msgs]"
    df = pd.DataFrame(list(rows.values()), columns=_STEP_COLUMNS[1:])
    df.insert(0, "step", np.arange(1, len(df) + 1))
    return df


def alert_steps(rows: pd.DataFrame, alert: dict[int, str] | None) -> dict[int, str]:
    """The step numbers of ``rows`` (of :func:`steps`) that stand for an alerted message, with
    their notes (``alert``: ledger message index -> note, e.g. ``{57: "tampered"}``)."""
    if not alert:
        return {}
    out = {}
    for r in rows.itertuples():
        if r.kind == "message":
            notes = [alert[i] for i in r.messages if i in alert]
            if notes:
                out[int(r.step)] = "; ".join(dict.fromkeys(notes))
    return out


def _auto_group(ledger: Ledger, max_rows: int) -> str | None:
    if len(ledger.messages) + len(ledger.holds) <= max_rows:
        return None
    n_rounds = len({(m.phase, m.round, m.sender, m.receiver) for m in ledger.messages})
    return "round" if n_rounds <= max_rows else "label"


# -- the drawing --------------------------------------------------------------------------------
#: font sizes (points) of an arrow's label, of a value and of a mark's text
_LABEL_PT, _VALUE_PT, _MARK_PT = 8.0, 7.0, 7.5
#: inches: the round numbers' margin, a text's padding in its gap, the narrowest gap between
#: two lanes, the figure's default widest width, the height of a row with and without values
_LEFT, _PAD, _MIN_GAP, MAX_WIDTH = 0.75, 0.1, 1.4, 12.0
_ROW, _ROW_BARE = 0.58, 0.42
_RED, _INK, _GREY = "#c0392b", "0.15", "0.72"


@dataclass(frozen=True)
class Layout:
    """Where the lanes of a diagram stand (inches from the left) and how wide it is: each gap
    between two lanes (and the margin right of the last) as wide as its widest text, within
    ``max_width`` (a value takes two lines when one does not fit); ``full`` when the texts
    wanted more than ``max_width`` even so (only then is a text cut)."""

    x: dict[str, float]
    width: float
    full: bool
    values: bool


def _texts(r, x_of: dict[str, int], n_lanes: int, values: bool) -> tuple[int, bool, list]:
    """The gap a row's texts stand in (gap i: right of lane i; the last, the margin), whether
    they are centred in it (an arrow's) or start at its lane (a mark's), and the texts as
    ``(text, size, mono)``."""
    if r["kind"] == "message" and r["party"] in x_of and r["peer"] in x_of:
        a, b = x_of[r["party"]], x_of[r["peer"]]
        gap = a if b > a else a - 1  # the gap next to the sender, so no text crosses a lane
        out = [(f"{r['what']}  ({fmt_bits(r['bits'])})", _LABEL_PT, False)]
        if values and r["shown"]:
            out.append((r["shown"], _VALUE_PT, True))
        return gap, True, out
    out = [(r["what"], _MARK_PT, False)]
    if r["kind"] == "held" and values and r["shown"]:
        out.append((r["shown"], _VALUE_PT, True))
    return min(x_of.get(r["party"], 0), n_lanes - 1), False, out


def _share(need: list[float], floor: list[float], budget: float) -> list[float]:
    """Widths for gaps that need ``need`` (at least ``floor``) within ``budget``: all they
    need when it fits, else the same share for every gap that needs more than it (water
    filling)."""
    want = [max(n, f) for n, f in zip(need, floor)]
    if sum(want) <= budget:
        return want
    out = list(floor)
    left = budget - sum(floor)
    open_ = sorted(range(len(want)), key=lambda i: want[i] - floor[i])
    while open_:
        each = left / len(open_)
        i = open_[0]
        if want[i] - floor[i] <= each:
            out[i], left = want[i], left - (want[i] - floor[i])
            open_.pop(0)
        else:
            for j in open_:
                out[j] = floor[j] + each
            break
    return out


def layout(rows: pd.DataFrame, lane_names: list[str], values: bool | None = None,
           max_width: float = MAX_WIDTH, note: dict[int, str] | None = None,
           visible: set[int] | None = None) -> Layout:
    """The :class:`Layout` of a diagram of ``rows`` (of :func:`steps`): every gap as wide as
    the widest text it holds (an alerted row's ``note`` included; values only of the
    ``visible`` steps, the ones drawn), the figure at most ``max_width`` inches wide.
    ``values``: whether values are drawn (default: when any row has one)."""
    from .textfit import text_width, two_line_width

    if not max_width > _LEFT + 1:
        raise ValueError(f"max_width must be > {_LEFT + 1} inches, got {max_width!r}")
    values = bool(rows["shown"].astype(bool).any()) if values is None else values
    x_of = {p: i for i, p in enumerate(lane_names)}
    n = len(lane_names)
    one, two = [0.0] * n, [0.0] * n  # what each gap needs: values on one line, on two
    for r in rows.to_dict("records"):
        gap, centred, texts = _texts(r, x_of, n, values)
        if visible is not None and r["step"] not in visible:
            texts = texts[:1]
        label = texts[0][0]
        if note and r["step"] in note:
            label = f"[{note[r['step']]}] {label}"
        w = text_width(label, texts[0][1], bold=True)
        w1 = max([w] + [text_width(t, size, mono) for t, size, mono in texts[1:]])
        w2 = max([w] + [two_line_width(t, size, mono) for t, size, mono in texts[1:]])
        pad = (2 * _PAD if centred else _PAD + 0.1) + 0.01
        one[gap], two[gap] = max(one[gap], w1 + pad), max(two[gap], w2 + pad)
    floor = [_MIN_GAP] * (n - 1) + [0.4]
    budget = max_width - _LEFT
    two = [max(a, b) for a, b in zip(two, floor)]
    full = sum(two) > budget + 1e-9
    # every value on one line if the figure has room; else two lines where needed, and the
    # room left shared out towards one line; past the widest width, texts are cut
    gaps = _share(two, floor, budget) if full else _share(one, two, budget)
    xs, x = {}, _LEFT
    for p, g in zip(lane_names, gaps):
        xs[p] = x
        x += g
    return Layout(xs, x, full, values)


def _wrap(text: str, width: float, size: float) -> list[str]:
    from .textfit import text_width

    lines, line = [], ""
    for word in text.split():
        if line and text_width(f"{line} {word}", size) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return lines + ([line] if line else [])


def sequence_diagram(ledger: Ledger, highlight: int | None = None,
                     visible: set[int] | None = None, group: str | None = "auto",
                     max_rows: int = 40, title: str | None = None,
                     rows: pd.DataFrame | None = None, values: bool | None = None,
                     alert: dict[int, str] | None = None, upto: int | None = None,
                     window: int | None = None, max_width: float = MAX_WIDTH,
                     lay: Layout | None = None):
    """A matplotlib figure of the run: one lane per party, one arrow per row of
    :func:`steps` labelled with ``what`` and size and, under it, the value that crossed;
    local operations as squares and holdings as dots on their lane, with their text beside
    them; rounds numbered on the left, the offline phase shaded.

    Each gap between lanes is as wide as the widest text it holds and no text crosses a lane:
    an arrow's texts stand in the gap next to its sender, a mark's right of its lane. A text
    is cut (with an ellipsis) only when the figure would be wider than ``max_width`` inches.

    ``highlight``: the current step, in red and marked on the left -- in grey, with no value,
    when ``visible`` does not hold it; ``visible``: the step numbers one seat can see (the rest
    greyed, their values left out); ``group``: as :func:`steps` (``'auto'``: grouped per round,
    then per layer, past ``max_rows``); ``rows``: the rows of :func:`steps` when the caller has
    them; ``values``: draw the values (default: when any row has one); ``alert``: ledger
    message index -> note (``{57: "tampered"}``): those rows red on a pink band, the note
    before their label. ``upto``: draw only the steps up to this one (the steps revealed so
    far); ``window``: at most this many rows, the last ones, the figure that tall whatever
    ``upto`` (a note says how many earlier steps are left out). ``lay``: the
    :func:`layout` when the caller has it (the same lanes at every step: the layout of all
    the rows, as the seat of ``visible`` sees them). Text artists carry
    ids for a browser to find (``ppnn-title``, ``ppnn-lane-<i>``, ``ppnn-step-<n>-label``,
    ``ppnn-step-<n>-value``); ``fig.ppnn`` holds the layout, the steps drawn and the texts
    cut. The SVG is deterministic (:func:`ppnn.plotting.setup`)."""
    import matplotlib.pyplot as plt

    from .plotting import setup
    from .textfit import fit, fit_lines, math_text

    setup()
    if window is not None and (not isinstance(window, int) or window < 1):
        raise ValueError(f"window must be an int >= 1 (rows) or None, got {window!r}")
    if rows is None:
        rows = steps(ledger, group, max_rows=max_rows)
    lane_names = lanes(ledger)
    alerts = alert_steps(rows, alert)
    lay = lay or layout(rows, lane_names, values, max_width, alerts, visible)
    x_of = {p: i for i, p in enumerate(lane_names)}
    xs = [lay.x[p] for p in lane_names]
    right = [*xs[1:], lay.width]  # each lane's gap ends at the next lane (the last: the edge)
    shown = rows if upto is None else rows[rows["step"] <= upto]
    hidden = 0
    if window is not None and len(shown) > window:
        hidden = len(shown) - window
        shown = shown.iloc[hidden:]
    slots = window if window is not None else len(shown)
    slots = max(min(slots, len(rows)), 1)
    row_h = _ROW if lay.values else _ROW_BARE
    title_lines = _wrap(title, lay.width - 0.2, 11) if title else []
    name_y = 0.12 + 0.22 * len(title_lines) + 0.26  # the lanes' names stand on this line
    # the lanes start here (below the line that says how many steps are left out, when some
    # may be: the figure stays that tall at every step)
    top = name_y + 0.08 + (0.2 if window is not None and len(rows) > window else 0)
    height = top + row_h * slots + 0.15
    fig = plt.figure(figsize=(lay.width, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, lay.width)
    ax.set_ylim(height, 0)
    ax.axis("off")
    cut: list[str] = []
    if title_lines:
        ax.text(0.08, 0.1, "\n".join(title_lines), ha="left", va="top", fontsize=11,
                linespacing=1.25, gid="ppnn-title")
    for i, (p, x) in enumerate(zip(lane_names, xs)):
        ax.plot([x, x], [top - 0.02, height - 0.1], color="0.55", lw=1, zorder=0,
                gid=f"ppnn-lane-{i}")
        ax.text(x, name_y, p, ha="center", va="bottom", fontsize=11, fontweight="bold")
    if hidden:
        ax.text(0.08, name_y + 0.2, f"\u2191 {hidden} earlier step{'s' * (hidden > 1)} (in the "
                "table below)", ha="left", va="bottom", fontsize=7.5, color="0.45",
                style="italic")
    last = None
    for k, r in enumerate(shown.to_dict("records")):
        y = top + row_h * (k + 0.5)
        step = int(r["step"])
        note = alerts.get(step)
        seen = visible is None or step in visible
        hi = highlight is not None and step == highlight
        if note or r["phase"] == "offline":  # alerted rows on a pink band, offline shaded
            ax.axhspan(y - row_h / 2, y + row_h / 2, color="#fbe3e0" if note else "#eef2f7",
                       zorder=-1, lw=0)
        if r["kind"] == "message" and ((r["phase"], r["round"]) != last or k == 0):
            ax.text(0.08, y, f"{'off ' if r['phase'] == 'offline' else ''}r{r['round']}",
                    ha="left", va="center", fontsize=8, color="0.35")
            last = (r["phase"], r["round"])
        # the current step is red -- unless this seat does not see it: then it stays grey
        color = (_RED if (hi or note) and seen else _INK if seen else _GREY)
        weight = "bold" if hi and seen else "normal"
        if hi:
            ax.text(xs[0] - 0.1, y, "\u25b6", ha="right", va="center", fontsize=9,
                    color=_RED if seen else _GREY, gid="ppnn-current-mark")
        gap, centred, texts = _texts(r, x_of, len(xs), lay.values)
        if not seen:
            texts = texts[:1]  # a seat never reads values it cannot see
        room = right[gap] - xs[gap] - (2 * _PAD if centred else _PAD + 0.1)
        x_text = (xs[gap] + right[gap]) / 2 if centred else xs[gap] + 0.1
        if r["kind"] == "message" and r["party"] in x_of and r["peer"] in x_of:
            x0, x1 = xs[x_of[r["party"]]], xs[x_of[r["peer"]]]
            ax.annotate("", xy=(x1, y), xytext=(x0, y),
                        arrowprops={"arrowstyle": "-|>", "color": color,
                                    "lw": 2.4 if (hi or note) and seen else 1.2,
                                    "shrinkA": 0, "shrinkB": 0})
        else:
            x = xs[min(x_of.get(r["party"], 0), len(xs) - 1)]
            ax.plot([x], [y], marker="s" if r["kind"] == "op" else "o",
                    ms=7 if hi else 5, color=color, zorder=3)
        alone = len(texts) == 1 and not centred  # a mark's one text: level with the mark
        for j, (text, size, mono) in enumerate(texts):
            if j == 0 and note:
                text = f"[{note}] {text}"
            above = j == 0
            if above:
                text, was_cut = fit(text, room, size, mono, bold=True)
            else:  # a value: two lines before it is cut
                lines, was_cut = fit_lines(text, room, size, mono)
                text = "\n".join(lines)
            if was_cut:
                cut.append(text)
            ax.text(x_text, y if alone else y - 0.06 if above else y + 0.08, math_text(text),
                    ha="center" if centred else "left",
                    va="center" if alone else "bottom" if above else "top",
                    fontsize=size, color=color, family="monospace" if mono else None,
                    fontweight=weight if not mono else "normal",
                    style="italic" if r["kind"] == "op" else "normal",
                    gid=f"ppnn-step-{step}-{'label' if above else 'value'}")
    fig.ppnn = {"layout": lay, "steps": [int(s) for s in shown["step"]], "cut": cut,
                "hidden": hidden}
    return fig
