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

import numpy as np
import pandas as pd

from .core.ledger import Ledger

__all__ = ["steps", "sequence_diagram", "lanes", "fmt_bits", "alert_steps"]

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


def sequence_diagram(ledger: Ledger, highlight: int | None = None,
                     visible: set[int] | None = None, group: str | None = "auto",
                     max_rows: int = 40, title: str | None = None,
                     rows: pd.DataFrame | None = None, values: bool | None = None, ax=None,
                     alert: dict[int, str] | None = None):
    """A matplotlib figure of the run: one lane per party, one arrow per row of
    :func:`steps` labelled with ``what`` and size, local operations as marks on their lane,
    holdings as dots, rounds numbered on the left, the offline phase shaded.

    ``highlight``: a step number drawn in red (the player's current step); ``visible``: the
    step numbers one seat can see (the rest greyed, their values left out); ``group``: as
    :func:`steps`, or ``'auto'`` (grouped per round, then per layer, past ``max_rows``);
    ``rows``: the rows of :func:`steps` when the caller already has them; ``values``: write
    each message's recorded value under its arrow (default: when there are at most 24 rows);
    ``alert``: ledger message index -> note (``{57: "tampered"}``): the rows of those messages
    drawn in red on a pink band, the note before their label (default: none).
    The SVG is deterministic (:func:`ppnn.plotting.setup`)."""
    import matplotlib.pyplot as plt

    from .plotting import setup

    setup()
    if rows is None:
        rows = steps(ledger, group, max_rows=max_rows)
    lane_names = lanes(ledger)
    x_of = {p: i for i, p in enumerate(lane_names)}
    n = len(rows)
    values = n <= 24 if values is None else values
    height = 1.2 + (0.58 if values else 0.42) * max(n, 1)
    if ax is None:
        fig, ax = plt.subplots(figsize=(1.6 + 2.6 * len(lane_names), height))
    else:
        fig = ax.figure
    ax.set_xlim(-0.9, len(lane_names) - 0.3)
    ax.set_ylim(n + 0.6, -0.9)
    ax.axis("off")
    for p, x in x_of.items():
        ax.plot([x, x], [-0.3, n + 0.4], color="0.55", lw=1, zorder=0)
        ax.text(x, -0.55, p, ha="center", va="bottom", fontsize=11, fontweight="bold")
    ys = np.arange(1, n + 1) - 0.5
    alerts = alert_steps(rows, alert)
    last = None
    for y, (_, r) in zip(ys, rows.iterrows()):
        step = int(r["step"])
        note = alerts.get(step)
        # alerted rows on a pink band, the offline phase shaded, rounds numbered
        if note or r["phase"] == "offline":
            ax.axhspan(y - 0.5, y + 0.5, color="#fbe3e0" if note else "#eef2f7", zorder=-1,
                       lw=0)
        if r["kind"] == "message" and (r["phase"], r["round"]) != last:
            ax.text(-0.75, y, f"{'off ' if r['phase'] == 'offline' else ''}r{r['round']}",
                    ha="left", va="center", fontsize=8, color="0.35")
            last = (r["phase"], r["round"])
        hi = highlight is not None and step == highlight
        seen = visible is None or step in visible
        color = "#c0392b" if hi or note else ("0.15" if seen else "0.78")
        lw = 2.4 if hi or note else 1.2
        if r["kind"] == "message" and r["party"] in x_of and r["peer"] in x_of:
            x0, x1 = x_of[r["party"]], x_of[r["peer"]]
            ax.annotate("", xy=(x1, y), xytext=(x0, y),
                        arrowprops={"arrowstyle": "-|>", "color": color, "lw": lw,
                                    "shrinkA": 0, "shrinkB": 0})
            label = f"{r['what']}  ({fmt_bits(r['bits'])})"
            if note:
                label = f"[{note}] {label}"
            ax.text((x0 + x1) / 2, y - 0.08, _clip(label, 26 * abs(x1 - x0) + 14),
                    ha="center", va="bottom", fontsize=8, color=color,
                    fontweight="bold" if hi or note else "normal")
            if values and r["shown"] and seen:  # a seat never reads values it cannot see
                ax.text((x0 + x1) / 2, y + 0.1, _clip(r["shown"], 30 * abs(x1 - x0) + 14),
                        ha="center", va="top", fontsize=7, color=color, family="monospace")
        else:
            x = x_of.get(r["party"], 0)
            marker = "s" if r["kind"] == "op" else "o"
            ax.plot([x], [y], marker=marker, ms=7 if hi else 5, color=color, zorder=3)
            text = (r["what"] if r["kind"] == "op" or not seen
                    else f"{r['what']}: {r['shown']}")
            ax.text(x + 0.07, y, _clip(text, 34), ha="left", va="center", fontsize=7.5,
                    color=color, style="italic" if r["kind"] == "op" else "normal",
                    fontweight="bold" if hi else "normal")
    if title:
        ax.set_title(title, fontsize=11, loc="left")
    return fig


def _clip(text: str, n: float) -> str:
    n = max(8, int(n))
    return text if len(text) <= n else text[: n - 1] + "\u2026"
