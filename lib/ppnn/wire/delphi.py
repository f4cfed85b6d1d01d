"""Delphi + Tabula in wire mode: the client, the server and the dealer as processes, SPMD
with garbage (the ``delphi_tabula`` family).

The client (``P0``) and the server (``P1``) each run the in-process protocol
(:func:`ppnn.protocols.tabula.network.secure_inference`) with a :class:`WireLedger`, which
changes only where values come from: the client holds the image and its shares, the server
the integer weights and biases and its shares, and everything else is garbage until a
booked message (``Ledger.transmit``, ``Ledger.send``) or the dealer's material brings the
real value. Delphi's counted HE crosses as zero filler of its booked size.

The dealer's process (``dealer``) is the simulation's ideal dealer: it runs the in-process
protocol with the run's seed and sends each party its tables, table secrets and Delphi's
masks (class ``offline ideal`` for the HE's result). Its masks and the table entries the
run reads follow the seed, since each party truncates its own share and the logits depend
on them; the provenance says so, and ``seed=None`` draws them from OS entropy.

Main names: :func:`run_plan`, :func:`delphi_job`, :data:`ROLE_OF`;
:func:`delphi_online_reading_client_share` is a deliberately broken step (the server reads
the client's local share and mask) that the garbage test catches. Delphi + GC
(:mod:`.delphi_gc`) reuses the parties' side: :class:`WireLedger` (whose
:meth:`WireLedger.staged` gives messages booked without a value their real content),
:func:`send_masks` and :func:`collect`.

See also
--------
docs/wire.md : the honesty argument, and Delphi + Tabula in "Family by family".
"""

from __future__ import annotations

import contextlib
import dataclasses

import numpy as np

from ppnn.core import Ledger
from ppnn.errors import InvalidArgument
from ppnn.protocols import delphi as dl
from ppnn.protocols.tabula import network as tn
from ppnn.protocols.tabula.tables import LazyTables, TabulaTables, _book_dealer

from .launch import checked_images, launch, swapped
from .transport import Wire, WireError

__all__ = ["WireLedger", "DELPHI_FAMILIES", "ROLE_OF", "run_plan", "collect", "send_masks",
           "delphi_online_reading_client_share", "reading_client_share"]

#: the Delphi-based families that run with ``transport="tcp"``
DELPHI_FAMILIES = ("delphi_tabula",)
#: the launcher's role of each party (the family's roles: no ``P2``)
ROLE_OF = {"client": "P0", "server": "P1", Ledger.DEALER: "dealer"}
_PARTY_OF = {r: p for p, r in ROLE_OF.items()}


def _layout(value: np.ndarray | None, bits: int) -> list[tuple[tuple, np.dtype, int]]:
    """The frame parts of a message: the value at ``bits / size`` bits per element, or (no
    value: a counted ciphertext) ``bits`` bits of zero filler."""
    if value is None:
        return [((bits // 8,), np.dtype(np.uint8), 8), ((bits % 8,), np.dtype(np.uint8), 1)]
    per, rest = divmod(bits, max(value.size, 1))
    if rest or not 1 <= per <= 64:
        raise WireError(f"a message of {bits} bits cannot carry {value.size} elements at one "
                        "width")
    return [(value.shape, value.dtype, per)]


class WireLedger(Ledger):
    """The ledger of one party's process: books every message as the simulation does and
    carries it over ``wire`` (module docstring). ``me``: ``"client"`` or ``"server"``."""

    def __init__(self, parties, wire: Wire, me: str):
        super().__init__(parties)
        if me not in parties:
            raise ValueError(f"me must be one of {parties}, got {me!r}")
        self.wire, self.me = wire, me
        self._staged: dict[str, np.ndarray] = {}
        self._reads_later = False  # a receive that is read was deferred to the round's end

    def send(self, sender, receiver, bits, what="", value=None):
        msg = super().send(sender, receiver, bits, what, value)
        if sender != self.DEALER:  # dealer material arrives through _receive_material
            staged = self._staged.pop(what, None)
            if callable(staged):  # computed now, from what the block received before
                staged = np.asarray(staged())
            self._cross(msg, None, staged)
        return msg

    @contextlib.contextmanager
    def staged(self, frames: dict):
        """Within the block, the booked message named ``what`` (a key of ``frames``) carries
        ``frames[what]`` instead of zero filler: the sender's process sends that array at the
        booked width, the receiver's receives into it (deferred like any receive of a round,
        so read it after the round). In the sender's process ``frames[what]`` may be a
        function of no argument, called when the message is sent (a message computed from
        one received earlier in the block: the OT answers from the receiver columns, which
        it must then receive itself, ``Wire.settle``). For messages that code booking through
        :meth:`Ledger.send` builds (the garbled circuit's, :mod:`.delphi_gc`). Every staged
        message must be booked in the block (a :class:`WireError` names the others)."""
        if self._staged:
            raise WireError(f"messages staged but never booked: {sorted(self._staged)}")
        self._staged = {w: a if callable(a) else np.asarray(a) for w, a in frames.items()}
        try:
            yield self
        except BaseException:
            self._staged = {}
            raise
        left, self._staged = self._staged, {}
        if left:
            raise WireError(f"messages staged but never booked: {sorted(left)}")

    def transmit(self, sender, receiver, bits, what, value):
        msg = Ledger.send(self, sender, receiver, bits, what)
        return self._cross(msg, np.asarray(value))

    @contextlib.contextmanager
    def round(self):
        """:meth:`Ledger.round`; at the end of the outermost online round the process waits
        for the deferred receives (:meth:`_cross`), having sent all of its own, if the round
        deferred one that is read (filler, which nothing reads, stays deferred otherwise)."""
        with Ledger.round(self):
            yield self
        if self._round_depth == 0 and self.phase == "online" and self._reads_later:
            self._reads_later = False
            self.wire.settle()

    def _cross(self, msg, value, into=None):
        """Send or receive one booked message. A receive is deferred (``Wire.expect``) when
        nothing reads it (a counted ciphertext's filler) or it is booked inside a round
        (read after the round: Tabula's exchange of ``x_trunc_i + s_i``), so the process
        sends every message of a round before it waits for the round's receives. ``into``:
        a staged array (:meth:`staged`), sent from or received into."""
        w = self.wire
        online = msg.phase == "online"
        cls = "online" if online else "offline setup"
        if online:
            w.enter_round(msg.round)
        step = f"{msg.label}::{msg.what}"
        if into is not None:
            value = into
        layout = _layout(value, msg.bits)
        if self.me == msg.sender:
            parts = [(np.zeros(s, t) if value is None else value, b) for s, t, b in layout]
            w.send(ROLE_OF[msg.receiver], parts, step, cls, round=msg.round if online else None)
            return value
        if self.me == msg.receiver:
            peer = ROLE_OF[msg.sender]
            if value is None or self._round_depth:  # filler, or read after the round
                self._reads_later |= value is not None
                got = w.expect(peer, layout, step, cls, into=None if into is None else [into])
            else:
                got = w.recv(peer, layout, step, cls)
                if into is not None:
                    into[...] = got[0]
                    got = [into]
            return None if value is None else got[0]
        raise WireError(f"{self.me} is neither sender nor receiver of '{step}'")


# -- the parties' material ----------------------------------------------------------------
class _PartyMaterial:
    """In a party's process: Delphi's masks and Tabula's tables, booked as the simulation
    books them, received from the dealer (the other party's part: garbage)."""

    def __init__(self, wire: Wire, me: str):
        self.wire, self.me = wire, me

    def masks(self, layer, W, in_shape, out_shape, ring, rng, ledger, parties):
        # the simulation's own code on the garbage generator: books the counted HE
        m = dl.delphi_preprocess(layer, W, in_shape, out_shape, ring, rng, ledger, parties)
        if self.me == "client":
            m.r_client[...], m.client_share[...] = self.wire.recv(
                "dealer", [(m.r_client.shape, np.uint64, ring.bits),
                           (m.client_share.shape, np.uint64, ring.bits)],
                f"{ledger.current_label}::Delphi masks (client)", "offline ideal")
        else:
            (m.r_server[...],) = self.wire.recv(
                "dealer", [(m.r_server.shape, np.uint64, ring.bits)],
                f"{ledger.current_label}::Delphi masks (server)", "offline ideal")
        return m

    def tables(self, F_table, n, rng, ring, ledger):
        b = int(F_table.size).bit_length() - 1
        p, g = 1 << b, self.wire.garbage
        _book_dealer(ledger, tn.PARTIES, n, b, ring)
        s, T = self.wire.recv("dealer", [((n,), np.uint64, b), ((n, p), np.uint64, ring.bits)],
                              f"{ledger.current_label}::Tabula table ({self.me})",
                              "offline dealer")
        other_s = g.integers(0, p, n, dtype=np.uint64)
        other_T = ring.random(g, (n, p))
        if self.me == "client":
            return TabulaTables(b, ring, T, other_T, s, other_s)
        return TabulaTables(b, ring, other_T, T, other_s, s)


class _RecordingTables(LazyTables):
    """The simulation's lazy tables, recording the public ``y`` and the client's share
    ``r`` of each lookup (the dealer process builds the real tables from them)."""

    def lookup(self, y):
        r, rest = super().lookup(y)
        self.y, self.r = np.asarray(y, dtype=np.uint64).copy(), r
        return r, rest


def _dealer_run(plan, x, seed):
    """The in-process run (the simulation's draws) and each party's material in the order
    the parties consume it: ``[("masks", (LinearMasks, ring bits)) | ("tables",
    _RecordingTables)]``."""
    events: list = []

    def masks(layer, W, in_shape, out_shape, ring, rng, ledger, parties=tn.PARTIES):
        m = dl.delphi_preprocess(layer, W, in_shape, out_shape, ring, rng, ledger, parties)
        events.append(("masks", (m, ring.bits)))
        return m

    def tables(F_table, n, rng, ring, ledger):
        t = _RecordingTables(F_table, n, rng, ring, ledger)
        events.append(("tables", t))
        return t

    led = Ledger(tn.PARTIES)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    logits = tn.secure_inference(plan.impl, x, rng, led, linear="delphi", tables=tables,
                                 preprocess=masks)
    return logits, led, events


def _materialise(t: _RecordingTables, g: np.random.Generator):
    """Tables ``T[y'] = F(y' - s)`` shared uniformly, the client's share at the looked-up
    ``y`` being the simulation's ``r`` (see the module docstring)."""
    ring, p, n = t.ring, t.p, t.n
    idx = (np.arange(p, dtype=np.uint64)[None, :] - t.secret()[:, None]) & np.uint64(p - 1)
    full = t.F_table[idx.astype(np.int64)]
    client = ring.random(g, (n, p))
    client[np.arange(n), t.y.astype(np.int64)] = t.r
    return client, ring.sub(full, client)


def send_masks(wire: Wire, m: dl.LinearMasks, bits: int) -> None:
    """The dealer's process sends one linear layer's Delphi masks, each party its part, as
    ``bits``-bit ring elements (class ``offline ideal``: the counted HE's result)."""
    wire.send("P0", [(m.r_client, bits), (m.client_share, bits)], "Delphi masks (client)",
              "offline ideal")
    wire.send("P1", [(m.r_server, bits)], "Delphi masks (server)", "offline ideal")


def _send_material(wire: Wire, events, g: np.random.Generator) -> None:
    for kind, m in events:
        if kind == "masks":
            send_masks(wire, *m)
        else:
            if not hasattr(m, "y"):
                raise WireError("a table layer was built but never looked up")
            client, server = _materialise(m, g)
            wire.send("P0", [(m.s_client, m.b), (client, m.ring.bits)], "Tabula table (client)",
                      "offline dealer")
            wire.send("P1", [(m.s_server, m.b), (server, m.ring.bits)], "Tabula table (server)",
                      "offline dealer")


# -- jobs run in each process ---------------------------------------------------------------
def _garbage_plan(impl: tn.Plan, g: np.random.Generator) -> tn.Plan:
    """The client's copy of the plan: the server's weights and biases replaced by garbage
    of their (public) shapes; everything else (layers, shifts, tables of F) is public."""
    ring = impl.cfg.ring

    def garbage(steps):
        return [dataclasses.replace(
            st, W_int=None if st.W_int is None else g.integers(-(1 << 12), 1 << 12,
                                                               st.W_int.shape),
            bias=None if st.bias is None else ring.random(g, np.shape(st.bias)),
            body=None if st.body is None else garbage(st.body),
            shortcut=None if st.shortcut is None else garbage(st.shortcut))
            for st in steps]

    return dataclasses.replace(impl, steps=garbage(impl.steps))


def delphi_job(wire: Wire, task: dict) -> dict:
    """What each process of a Delphi + Tabula wire run does (module-level for pickling)."""
    if wire.role == "dealer":
        _, led, events = _dealer_run(task["plan"], task["x"], task["seed"])
        _send_material(wire, events, np.random.default_rng(np.random.SeedSequence()))
        return {"output": None, "ledger": led}
    me = _PARTY_OF[wire.role]
    g = wire.garbage
    impl, x = task["plan"], task.get("x")
    if me == "server":
        x = g.uniform(0.0, 1.0, task["x_shape"])
    mat = _PartyMaterial(wire, me)
    led = WireLedger(tn.PARTIES, wire, me)
    with reading_client_share(task.get("broken", False)):
        out = tn.secure_inference(impl, x, _fresh(g), led, linear="delphi",
                                  tables=mat.tables, preprocess=mat.masks)
    return {"output": out if me == "client" else None, "ledger": led}


def _fresh(g: np.random.Generator) -> np.random.Generator:
    return np.random.Generator(np.random.SFC64(int(g.integers(1 << 62))))


# -- the deliberately broken step ---------------------------------------------------------
def delphi_online_reading_client_share(x, layer, W, bias, masks, ledger, parties=tn.PARTIES):
    """A broken Delphi online step: it sends and books what the real one does, but the server
    computes on ``[x]_c + R_c`` from the client's *local* share and mask -- reading what it
    should have received."""
    ring = x.ring
    masks.consume()
    local = ring.add(x.shares[0], masks.r_client)
    ledger.transmit(parties[0], parties[1], int(np.prod(x.shape)) * ring.bits, "[x]_c + R_c",
                    local)
    y_s = ring.add(dl.linear_ring(layer, W, ring.add(local, x.shares[1]), ring),
                   masks.r_server)
    if bias is not None:
        y_s = ring.add(y_s, np.asarray(bias, dtype=np.uint64))
    from ppnn.core import AdditiveShares

    return AdditiveShares(np.stack([masks.client_share, y_s]), ring)


def reading_client_share(on: bool = True):
    """Within the block, Delphi's online step is :func:`delphi_online_reading_client_share`
    (in process: the same logits; in wire mode: the garbage test fails)."""
    return swapped(dl, "delphi_online", delphi_online_reading_client_share, on)


# -- the run ------------------------------------------------------------------------------
def run_plan(plan, x, seed=0, *, timeout: float = 30.0, deadline: float | None = 600.0,
             broken: bool = False):
    """``ppnn.run(plan, x, seed, transport="tcp")`` for Delphi + Tabula: a
    :class:`~ppnn.protocols.api.Result` whose ``extra["wire"]`` is
    :func:`~ppnn.wire.summary.wire_summary`. ``broken``: the parties run
    :func:`delphi_online_reading_client_share` (the garbage test's negative control)."""
    x = checked_images(plan, x, DELPHI_FAMILIES)
    if plan.impl.cfg.nonlinear != "table":
        raise InvalidArgument(f"transport='tcp' runs Delphi + Tabula with tables; this plan "
                              f"was compiled with nonlinear={plan.impl.cfg.nonlinear!r}: use "
                              "the simulator (transport='sim')")
    g = np.random.default_rng(np.random.SeedSequence())
    tasks = {"P0": {"plan": _garbage_plan(plan.impl, g), "x": x, "broken": bool(broken)},
             "P1": {"plan": plan.impl, "x_shape": x.shape, "broken": bool(broken)},
             "dealer": {"plan": plan, "x": x, "seed": seed}}
    launched = launch(delphi_job, tasks, timeout=timeout, deadline=deadline)
    prov = {"communication": "measured on a wire: client, server and dealer as processes "
            "over loopback TCP; ledger booked by both parties' processes and the "
            "dealer's in-process run (equal); Delphi's HE ciphertexts: zero filler of their "
            "booked size",
            "compute": "measured: the slower party's process (SPMD with garbage: each computes "
            "both parties' shares, like the simulator)",
            "randomness": "Delphi's masks R_c, R_s, the tables' secrets and the shares of the "
            "table entries read: "
            + ("OS entropy in the dealer's process (seed=None)" if seed is None else
               "the run seed in the dealer's process (the simulation's draws, so that the "
               "logits -- each party truncates its own share -- equal the in-process run's; "
               "whoever knows the seed knows both parties' masks: simulation only, seed=None "
               "draws them from OS entropy)")
            + "; the other table entries' shares: OS entropy in the dealer's process; the run "
            "seed reaches no party's process"}
    return collect(plan, launched, prov)


def collect(plan, launched, prov: dict, timings: list | None = None):
    """The :class:`~ppnn.protocols.api.Result` of a wire run whose client is ``P0``, server
    ``P1`` and dealer ``dealer`` (each returning ``{"output", "ledger"}``): the client's
    logits, the dealer's in-process ledger (checked equal to both parties'), ``timings``
    rows ``(phase, layer, seconds)`` before the slower party's total, and ``extra["wire"]``
    (:func:`~ppnn.wire.summary.wire_summary`)."""
    import pandas as pd

    from ppnn.protocols.api import Result

    from .summary import wire_summary

    led = launched["dealer"][0]["ledger"]
    for role in ("P0", "P1"):
        if launched[role][0]["ledger"].messages != led.messages:
            raise WireError(f"{_PARTY_OF[role]}'s process booked a different ledger than the "
                            "dealer's in-process run")
    summary = wire_summary(led, launched)
    seconds = max(summary["party seconds"][r] for r in ("P0", "P1"))
    rows = [*(timings or []), ("online", "input, all layers, output", seconds)]
    frame = pd.DataFrame(rows, columns=["phase", "layer", "seconds"])
    return Result(plan.family, "sim", np.asarray(launched["P0"][0]["output"]), led, frame,
                  prov, {"wall_s": launched.seconds, "wire": summary, "transport": "tcp"})
