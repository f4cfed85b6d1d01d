"""Ledger vs wire: what a wire-mode run booked beside what crossed its sockets.

:func:`wire_summary` takes the ledger a party's process booked and the launched processes'
transport statistics (:func:`ppnn.wire.launch.launch`) and returns, per traffic class
(:data:`ppnn.wire.transport.CLASSES`), the ledger's messages and bytes, the wire bytes the
ledger predicts (payload plus framing, :func:`ppnn.wire.framing.frame_bytes`) and the frames
and bytes measured on the wire; then the ledger's rounds beside the measured causal depth,
and each process's seconds, CPU and memory. Every family's wire run puts it in
``result.extra["wire"]``; :func:`summary_frame` shows it as a table.

See also
--------
docs/wire.md : what crosses, and why the wire bytes must equal the ledger's prediction.
"""

from __future__ import annotations

from .framing import frame_bytes
from .transport import CLASSES, WireError

__all__ = ["wire_summary", "summary_frame"]

#: traffic classes the ledger does not book (inputs; the dealer's stand-in for counted HE;
#: key material the in-process run does not book, e.g. SHE's tfhe-rs server key; the base
#: OTs of the garbled-circuit families' OT extension; the empty frames of Wire.barrier)
_UNBOOKED = ("inputs", "offline ideal", "unbooked keys", "unbooked base OT", "unbooked sync")

def wire_summary(ledger, launched) -> dict:
    """Ledger vs wire: bytes per class (the ledger's booked bits / 8, the frames' payload
    and wire bytes, and ``sum(ceil(bits / 8) + header)`` over the ledger's messages, which
    the wire bytes must equal), rounds (ledger) vs measured causal depth, and seconds."""
    stats = {r: s for r, (_, s) in launched.items()}
    msgs = ledger.messages
    classes = {
        "online": [m for m in msgs if m.phase == "online"],
        "offline dealer": [m for m in msgs if m.sender == ledger.DEALER],
        "offline setup": [m for m in msgs if m.phase == "offline" and m.sender != ledger.DEALER],
        **{c: [] for c in _UNBOOKED},  # no ledger message
    }
    out: dict = {"classes": {}}
    for c in CLASSES:
        sent = {k: sum(s["sent"][c][k] for s in stats.values())
                for k in ("frames", "bits", "payload", "wire")}
        recv = {k: sum(s["received"][c][k] for s in stats.values())
                for k in ("frames", "bits", "payload", "wire")}
        if sent != recv:
            raise WireError(f"{c}: the processes sent {sent} but received {recv}")
        ms = classes[c]
        out["classes"][c] = {
            "ledger messages": len(ms) if c not in _UNBOOKED else None,
            "ledger bytes": sum(m.bits for m in ms) / 8 if c not in _UNBOOKED else None,
            "expected wire bytes": sum(frame_bytes(m.bits) for m in ms)
            if c not in _UNBOOKED else None,
            "frames": sent["frames"], "bits": sent["bits"], "payload bytes": sent["payload"],
            "wire bytes": sent["wire"]}
    out["ledger rounds"] = ledger.rounds("online")
    out["measured rounds"] = max(s["depth"] for s in stats.values())
    # waits in a round that already had one (each can add a latency; transport docstring)
    out["waits"] = {r: s["waits"] for r, s in stats.items()}
    out["extra waits"] = {r: s["extra waits"] for r, s in stats.items()}
    out["extra wait steps"] = {r: s["extra wait steps"] for r, s in stats.items()
                               if s["extra wait steps"]}
    out["seconds"] = launched.seconds
    parties = [s for s in stats.values() if "online" in s["marks"]]
    if parties:  # offline first (WireFalcon): the online phase, from its first party's start
        # (the parties meet at a barrier just before: they start within a latency or so of
        # each other) to the last party's end
        marks = [s["marks"]["online"] for s in parties]
        out["offline seconds"] = min(marks) - min(s["t start"] for s in parties)
        out["online seconds"] = max(s["t end"] for s in parties) - min(marks)
        out["party online cpu s"] = {
            r: s["cpu user s"] + s["cpu system s"] - s["mark cpu s"]["online"]
            for r, s in stats.items() if "online" in s["marks"]}
        out["party online page faults"] = {
            r: s["page faults"] - s["mark faults"]["online"]
            for r, s in stats.items() if "online" in s["marks"]}
        if all(s.get("split cpu s") is not None for s in parties):  # PPNN_WIRE_SPLIT
            # the protocol thread's wire path, and every other thread of the process
            path = {}
            for s in parties:
                (p1, t1), (p0, t0) = s["split cpu s"], s["mark split cpu s"]["online"]
                online = out["party online cpu s"][s["role"]]
                path[s["role"]] = (p1 - p0) + max(0.0, online - (t1 - t0))
            out["party online wire path cpu s"] = path
    out["party seconds"] = {r: s["seconds"] for r, s in stats.items()}
    out["party cpu s"] = {r: s["cpu user s"] + s["cpu system s"] for r, s in stats.items()}
    out["party cpu system s"] = {r: s["cpu system s"] for r, s in stats.items()}
    out["party max rss MB"] = {r: s["max rss MB"] for r, s in stats.items()}
    out["ports"] = dict(launched.ports)
    return out


def summary_frame(summary: dict):
    """:func:`wire_summary` as a table: one row per traffic class (ledger bytes, expected and
    measured wire bytes), then rounds and seconds."""
    import pandas as pd

    rows = [{"quantity": f"{c} bytes", "ledger": v["ledger bytes"],
             "ledger + framing": v["expected wire bytes"], "wire": v["wire bytes"],
             "frames": v["frames"], "payload bytes": v["payload bytes"]}
            for c, v in summary["classes"].items()]
    rows.append({"quantity": "online rounds", "ledger": summary["ledger rounds"],
                 "ledger + framing": None, "wire": summary["measured rounds"],
                 "frames": None, "payload bytes": None})
    return pd.DataFrame(rows, dtype=object)
