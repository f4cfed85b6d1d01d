"""Delphi + garbled ReLU in wire mode: the client, the server and the dealer as processes,
SPMD with garbage (the ``delphi_gc`` family, :mod:`ppnn.protocols.delphi_gc`).

The client and the server each run the *same* protocol code as the in-process simulation
(:func:`ppnn.protocols.delphi_gc.secure_inference`) with a
:class:`~ppnn.wire.delphi.WireLedger`, two hooks changing only where values come from:

* **What a process holds is real; everything else is garbage.** The client holds the image
  and its share of every value; the server holds the model (the integer weights and biases
  of the fixed-point plan; the shifts and the circuits' parameters are public) and its share.
  The client's plan gets garbage weights and biases of the public shapes, the server a
  garbage image; the other party's share is garbage wherever it would have come from the
  other party.
* **Linear layers: Delphi, as** :mod:`.delphi` **runs them.** The dealer process sends each
  party its Delphi masks (client: ``R_c`` and ``-(W R_c + R_s)``, server: ``R_s``; class
  ``offline ideal``: the result of the counted HE, which is not run); the two counted HE
  messages cross between client and server as zero filler of their booked size; online the
  client sends ``[x]_c + R_c`` and the server computes on what it received.
* **Garbled ReLU (+ max-pool, truncation), real.** The server's process garbles the circuit
  of :func:`ppnn.protocols.gc_act.act_circuit` (half-gates, free-XOR, fixed-key AES; labels
  and ``Delta`` from the OS CSPRNG) with its share and its fresh output mask ``r`` (OS
  CSPRNG, :class:`~ppnn.core.randomness.SecureRandom`, as in process) as garbler inputs, and
  sends what Delphi's split books (:func:`ppnn.he.gc.book_delphi_split`), each message a
  frame of exactly its booked bits: in preprocessing (class ``offline setup``) the IKNP OT
  of the client's input labels, run for real (:mod:`ppnn.he.ot`,
  :class:`~ppnn.wire.ot.WireOT`): the client's receiver columns for the bits of its share
  (fixed by the linear layer's preprocessing), then the two IKNP answers of each of its
  input wires (the labels ``(W0, W0 ^ Delta)`` masked, 2 x 128 bits), the garbled tables
  (two 128-bit rows per AND gate), the labels of ``r`` and the decoding bits; online only
  the labels of its share (``k`` labels of 16 bytes per ReLU input). The client unmasks the
  answer of its own bit (the other stays pseudorandom to it: one label per wire, never
  ``Delta``) and evaluates from these frames alone. The server computes the answers when it
  sends them, from the columns it has just received
  (:meth:`~ppnn.wire.delphi.WireLedger.staged` takes a function). The 128 base OTs run
  once per run, in the unbooked class ``unbooked base OT``: the server's first message (128
  group elements, 49,152 bytes) at the start, the client's reply (384 bytes) just before its
  first columns. The garbling and the evaluation are split with
  :func:`ppnn.wire.hegc.garble_frames` and :func:`ppnn.wire.hegc.evaluate_frames`; in
  process :func:`ppnn.he.gc.garble_and_evaluate` still does both in one call, so the
  in-process results and ledger are unchanged.
* **Output.** The server sends its share of the logits (``k`` bits per element); the client
  adds its own.

So if the client's logits equal the in-process run's, the client's computation used no
weight, bias, share, mask or garbler label of the server except through what it received,
and the server's used no image or client share except through the received
``[x]_c + R_c``. :data:`BROKEN` names deliberately broken steps that the in-process
simulation cannot tell from the real ones (there every copy is the real value) and that the
garbage test catches.

**Rounds.** Every online message depends on the one before it (``[x]_c + R_c`` -> the
server's share -> the labels of ``x_s`` -> the client's evaluated share -> the next
``[x]_c + R_c`` ... -> the server's share of the logits), so for a network that ends with a
linear layer (MiniONN) the causal depth measured on the wire equals the ledger's online
rounds. A network that ends with an activation layer (Falcon's LeNet: ``fc2``, ReLU) has
one measured round fewer: the server's share of the logits is then the output mask ``r`` of
the last garbled layer, drawn before that layer's labels of ``x_s`` are sent and dependent on
nothing the server receives after the last ``[x]_c + R_c``; the ledger books it one round
after the labels, on the wire both leave the server together (as in :mod:`.hegc`). The
preprocessing frames are sent where the SPMD program reaches them (the garbled circuit of a
layer after the preceding ``[x]_c + R_c``): they carry depth 0 and depend on no online value
(the tables, the pairs and the labels of ``r`` do not depend on the server's share, the
receiver columns only on the client's share, fixed by the linear layer's preprocessing),
so a deployment sends them ahead.

**Waits.** No process waits twice in a ledger round: the client's receives of the
garbled-circuit frames are deferred to the end of the online round that carries the labels
of ``x_s`` (:meth:`~ppnn.wire.delphi.WireLedger.staged`), the filler of the counted HE is
never waited for, and the server reads a layer's receiver columns (and, the first time, the
base OTs' reply before them) in the same wait as the preceding ``[x]_c + R_c``, which the
client sent just before them. The client waits once more than before the OT was run: for
the base OTs' first message, before its first columns; the server sent it at the start of
the run, so that wait costs no latency (and is in a round in which the client waits for
nothing else).

What the honesty proof covers, precisely: data flow -- which values each process's
computation depends on and that they crossed in frames of the booked size. The garbled
circuits' part is also confidential: the OT is run (semi-honest IKNP, base OTs in the
3072-bit MODP group), so the client's process holds one label of each of its wires and a
pseudorandom string in the other place (the wire test checks it from what the client's
process received), and the server's process sees only the receiver columns; the garbled
tables, the server's labels and the decoding bits are the real garbler's. Not carried: the
garbling session's hash nonce (64 bits per activation layer, unbooked) is the public index
of the layer, as in :mod:`.hegc` (each chunk's fresh ``Delta`` keeps every tweak unique per
``Delta``).

**The dealer process** is the simulation's ideal dealer: it runs the in-process protocol
with the run's seed, but draws Delphi's masks ``R_c``, ``R_s`` from the OS CSPRNG
(:class:`~ppnn.core.randomness.SecureRandom`) and sends each linear layer's masks as they
are drawn; the logits and the ledger do not depend on them, and no party's process gets the
seed. It garbles nothing: in its run the garbled circuit is replaced by its ideal
functionality (:func:`_ideal_activation`: the circuit's oracle on the two shares, re-shared
with a fresh mask, booked exactly as the circuit is).

Processes: three, the launcher's roles ``P0`` (the client), ``P1`` (the server) and
``dealer`` (no ``P2``). What is real: the processes, the sockets, the bytes of every booked
message at its booked size, the rounds (causal depth), the garbled circuits, their OT
(IKNP and its base OTs) and the wall time. What is simulated: the dealer (trusted: Delphi's
HE preprocessing is not run; its ciphertexts are filler of their booked size).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from ppnn.core import Ledger, Ring
from ppnn.core.randomness import SecureRandom
from ppnn.he import gc as gcmod
from ppnn.protocols import delphi as dl
from ppnn.protocols import delphi_gc as dgc
from ppnn.protocols import gc_act

from .delphi import (
    ROLE_OF,
    WireLedger,
    _PartyMaterial,
    collect,
    reading_client_share,
    send_masks,
)
from .falcon import _fresh
from .hegc import GarblerFrames, evaluate_frames, garble_frames, share_bits
from .launch import checked_images, launch
from .ot import WireOT
from .transport import Wire, WireError

__all__ = ["DELPHI_GC_FAMILIES", "ROLE_OF", "BROKEN", "GCParty", "run_plan", "delphi_gc_job"]

#: the Delphi + GC families that run with ``transport="tcp"``
DELPHI_GC_FAMILIES = ("delphi_gc",)
_PARTY_OF = {r: p for p, r in ROLE_OF.items()}
#: deliberately broken steps (the garbage test's negative controls), each one the simulation
#: cannot tell from the real step: ``"server reads client share"`` -- Delphi's online step
#: computes on the client's local share and mask instead of the received ``[x]_c + R_c``
#: (:func:`ppnn.wire.delphi.delphi_online_reading_client_share`); ``"server selects client
#: labels"`` -- the garbler picks the client's active labels with its own copy of the
#: client's share (the OT done by reading the client's input) and sends them in both places
#: of each pair (through the OT); ``"client encodes server share"`` -- the garbler sends the
#: zero labels of its share's wires and the client selects the active ones with its own
#: copy of the server's share and ``Delta`` from a pair instead of using the received labels
#: (on the wire the real OT leaves the client no ``Delta`` either: the xor of its pair is
#: its label and a pseudorandom string, so this step fails for that reason too; in one
#: process, on the garbler's pairs, it gives the circuit's output)
BROKEN = ("server reads client share", "server selects client labels",
          "client encodes server share")

# the messages of Delphi's split (ppnn.he.gc.book_delphi_split) whose content the garbler
# builds: the booked ``what`` -> the part of the garbler's frames it carries
_COLUMNS = "IKNP OT: receiver columns (client's share fixed offline)"
_PAIRS = "IKNP OT: 2 masked labels per bit"
_TABLES = "garbled tables (2 per AND)"
_MASK_LABELS = "labels of r"
_DECODING = "output decoding bits"
_SHARE_LABELS = "labels of x_s"


def _frames(f: GarblerFrames, n_share: int) -> dict[str, np.ndarray]:
    """The booked messages of Delphi's split and the arrays they carry (views of ``f``)."""
    return {_PAIRS: f.pairs, _TABLES: f.tables, _MASK_LABELS: f.labels[n_share:],
            _DECODING: f.decoding, _SHARE_LABELS: f.labels[:n_share]}


class GCParty:
    """One party's half of Delphi's garbled activation layers, the ``activation`` hook of
    :func:`ppnn.protocols.delphi_gc.secure_inference` in a party's process.

    Parameters
    ----------
    me : ``"client"`` (the evaluator) or ``"server"`` (the garbler).
    garbage : the process's generator of garbage (the other party's output share).
    broken : None or one of :data:`BROKEN` (the GC's negative controls act here).
    ot : the run's oblivious transfer (:class:`~ppnn.wire.ot.WireOT`, started); needed to
        run a layer, not by :meth:`garble` and :meth:`evaluate`.
    """

    def __init__(self, me: str, garbage: np.random.Generator, broken: str | None = None,
                 ot: WireOT | None = None):
        if me not in dgc.PARTIES:
            raise ValueError(f"me must be one of {dgc.PARTIES}, got {me!r}")
        if broken is not None and broken not in BROKEN:
            raise ValueError(f"broken must be None or one of {BROKEN}, got {broken!r}")
        self.me, self.garbage, self.broken, self.ot = me, garbage, broken, ot
        self.layers = 0  # activation layers so far: the public hash nonce of the next one
        self.seconds = {"garble_s": 0.0, "evaluate_s": 0.0}  # this party's GC work

    def __call__(self, cw: np.ndarray, sw: np.ndarray, spec: gc_act.ActSpec, ledger: Ledger
                 ) -> tuple[np.ndarray, np.ndarray, dict]:
        """Run and book one layer of ``n`` instances (``cw`` / ``sw``: ``(n, m)`` shares,
        the other party's garbage); returns ``(z, r, seconds)``, the other party's part of
        ``(z, r)`` garbage."""
        if not isinstance(ledger, WireLedger):
            raise TypeError(f"ledger must be a WireLedger, got {type(ledger).__name__}")
        if self.ot is None:
            raise WireError("a garbled layer on the wire needs the run's WireOT")
        c = gc_act.act_circuit(spec)
        n, nonce = cw.shape[0], self.layers
        self.layers += 1
        n_share = c.garbler_inputs.size - c.outputs.size
        self.ot.before_columns()  # the first time: the base OTs' second message
        t0 = time.perf_counter()
        if self.me == "server":
            r = gc_act._random_mod(SecureRandom(), spec.modulus, n)  # as in process
            f = self.garble(c, spec, sw, r, nonce, cw)
            t = {"garble_s": time.perf_counter() - t0, "evaluate_s": 0.0}
            cols = np.empty(c.evaluator_inputs.size * n * gcmod.KAPPA // 8, np.uint8)

            def answers():  # the pairs masked as IKNP's answers to the received columns
                self.ot.wire.settle(ROLE_OF["client"])  # the columns (read now)
                return self.ot.answer(cols, f.pairs)

            with ledger.staged({**_frames(f, n_share), _COLUMNS: cols, _PAIRS: answers}):
                gc_act.book_gc(ledger, n, c, "delphi", dgc.PARTIES)
            z = gc_act._random_mod(self.garbage, spec.modulus, n)  # the client's: garbage
            return z, r, self._add(t)
        batch = self.ot.columns(share_bits(cw, spec.k))  # IKNP's receiver: its share's bits
        f = GarblerFrames(*(np.empty(s, t) for s, t, _ in GarblerFrames.layout(c, n)))
        with ledger.staged({**_frames(f, n_share), _COLUMNS: batch.columns}):
            gc_act.book_gc(ledger, n, c, "delphi", dgc.PARTIES)  # received into f by the
        f.pairs = self.ot.unmask(batch, f.pairs)  # round's end; its labels, else noise
        t0 = time.perf_counter()
        z = self.evaluate(c, spec, f, cw, nonce, sw)
        r = gc_act._random_mod(self.garbage, spec.modulus, n)  # the server's mask: garbage
        return z, r, self._add({"garble_s": 0.0, "evaluate_s": time.perf_counter() - t0})

    def _add(self, t: dict) -> dict:
        self.seconds = {k: v + t[k] for k, v in self.seconds.items()}
        return t

    def garble(self, c: gcmod.Circuit, spec: gc_act.ActSpec, sw: np.ndarray, r: np.ndarray,
               nonce: int, cw_copy: np.ndarray) -> GarblerFrames:
        """The garbler's frames for its share ``sw`` and mask ``r`` (``cw_copy``: its copy
        of the client's share, read only by the broken step ``"server selects client
        labels"``)."""
        mine = share_bits(sw, spec.k)
        if self.broken == "client encodes server share":
            mine = np.zeros_like(mine)  # the zero labels of its share's wires
        f = garble_frames(c, np.concatenate([mine, gcmod.bits_of(r, spec.k)]), nonce)
        if self.broken == "server selects client labels":
            bits = share_bits(cw_copy, spec.k).astype(np.int64)[:, :, None, None]
            f.pairs = np.repeat(np.take_along_axis(f.pairs, bits, axis=2), 2, axis=2)
        return f

    def evaluate(self, c: gcmod.Circuit, spec: gc_act.ActSpec, f: GarblerFrames,
                 cw: np.ndarray, nonce: int, sw_copy: np.ndarray) -> np.ndarray:
        """The client's share ``z`` from the received frames ``f`` and its share ``cw``
        (``sw_copy``: its copy of the server's share, read only by the broken step
        ``"client encodes server share"``)."""
        if self.broken == "client encodes server share":
            n_share = c.garbler_inputs.size - c.outputs.size
            delta = f.pairs[0, :, 1] ^ f.pairs[0, :, 0]  # (n, 2): each instance's Delta
            on = share_bits(sw_copy, spec.k).astype(bool)[:, :, None]
            f.labels[:n_share] ^= np.where(on, delta, np.uint64(0))
        return gcmod.from_bits(evaluate_frames(c, f, share_bits(cw, spec.k), nonce))


def _ideal_activation(cw, sw, spec: gc_act.ActSpec, ledger: Ledger):
    """The dealer's stand-in for a garbled layer: the circuit's oracle on ``cw + sw``
    (:func:`ppnn.protocols.gc_act.plain_act`), re-shared with a fresh mask, booked exactly
    as the circuit (:func:`ppnn.protocols.gc_act.book_gc`, Delphi's split)."""
    ring = Ring(spec.k)
    y = gc_act.plain_act(ring.to_signed(ring.add(cw, sw)), spec)
    r = gc_act._random_mod(np.random.default_rng(np.random.SeedSequence()), spec.modulus,
                           cw.shape[0])
    gc_act.book_gc(ledger, cw.shape[0], gc_act.act_circuit(spec), "delphi", dgc.PARTIES)
    return ring.sub(ring.from_signed(y), r), r, {"garble_s": 0.0, "evaluate_s": 0.0}


# -- jobs run in each process ---------------------------------------------------------------
def _garbage_plan(plan: dgc.DelphiGCPlan, g: np.random.Generator) -> dgc.DelphiGCPlan:
    """The client's copy of the plan: the server's weights and biases replaced by garbage of
    their (public) shapes; layers, shifts and circuits are public."""
    def garbage(steps):
        return [dataclasses.replace(
            st, W=None if st.W is None else g.integers(-(1 << 12), 1 << 12, st.W.shape),
            b=None if st.b is None else g.integers(-(1 << 20), 1 << 20, np.shape(st.b)),
            body=None if st.body is None else garbage(st.body),
            shortcut=None if st.shortcut is None else garbage(st.shortcut))
            for st in steps]

    return dataclasses.replace(plan, steps=garbage(plan.steps))


def _dealer(wire: Wire, task: dict) -> dict:
    """The dealer's process: the in-process protocol with the run's seed (the GC ideal),
    sending each linear layer's masks as they are drawn (from the OS CSPRNG)."""
    secure = SecureRandom()

    def masks(layer, W, in_shape, out_shape, ring, rng, ledger, parties=dgc.PARTIES):
        m = dl.delphi_preprocess(layer, W, in_shape, out_shape, ring, secure, ledger, parties)
        send_masks(wire, m, ring.bits)
        return m

    seed = task["seed"]
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    led = Ledger(dgc.PARTIES)
    dgc.secure_inference(task["plan"].impl, task["x"], rng, led, preprocess=masks,
                         activation=_ideal_activation)
    return {"output": None, "ledger": led}


def delphi_gc_job(wire: Wire, task: dict) -> dict:
    """What each process of a Delphi + GC wire run does (module-level for pickling)."""
    if wire.role == "dealer":
        return _dealer(wire, task)
    if wire.role not in _PARTY_OF:
        raise WireError(f"Delphi + GC has no role {wire.role!r}")
    me, g = _PARTY_OF[wire.role], wire.garbage
    plan, x, broken = task["plan"], task.get("x"), task.get("broken")
    if me == "server":
        x = g.uniform(0.0, 1.0, task["x_shape"])
    led = WireLedger(dgc.PARTIES, wire, me)
    ot = WireOT(wire, me, record=bool(task.get("record_ot")))
    ot.start()  # the server's base-OT message leaves first
    gc = GCParty(me, g, broken, ot)
    with reading_client_share(broken == "server reads client share"):
        out, _ = dgc.secure_inference(plan, x, _fresh(g), led,
                                      preprocess=_PartyMaterial(wire, me).masks, activation=gc)
    return {"output": out if me == "client" else None, "ledger": led,
            "gc": {**gc.seconds, "ot_s": ot.seconds}, "ot": ot.record}


# -- the run ------------------------------------------------------------------------------
def run_plan(plan, x, seed=0, *, timeout: float = 30.0, deadline: float | None = 600.0,
             broken: str | None = None):
    """``ppnn.run(plan, x, seed, transport="tcp")`` for Delphi + GC: a
    :class:`~ppnn.protocols.api.Result` whose ``extra["wire"]`` is
    :func:`~ppnn.wire.falcon.wire_summary`.

    Parameters
    ----------
    plan, x, seed
        A compiled ``delphi_gc`` plan, images in [0, 1] and the simulation's seed (an int
        or a Generator: only the dealer's process draws from it).
    timeout, deadline
        Seconds a receive may wait, and the whole run (:func:`ppnn.wire.launch.launch`).
    broken
        None, or one of :data:`BROKEN` (the garbage test's negative controls).
    """
    x = checked_images(plan, x, DELPHI_GC_FAMILIES)
    if broken is not None and broken not in BROKEN:
        raise ValueError(f"broken must be None or one of {BROKEN}, got {broken!r}")
    g = np.random.default_rng(np.random.SeedSequence())
    tasks = {"P0": {"plan": _garbage_plan(plan.impl, g), "x": x, "broken": broken},
             "P1": {"plan": plan.impl, "x_shape": x.shape, "broken": broken},
             "dealer": {"plan": plan, "x": x, "seed": seed}}
    launched = launch(delphi_gc_job, tasks, timeout=timeout, deadline=deadline)
    gc = {r: launched[r][0]["gc"] for r in ("P0", "P1")}
    timings = [("offline", "garbling", gc["P1"]["garble_s"]),
               ("offline", "oblivious transfer (both parties)",
                gc["P0"]["ot_s"] + gc["P1"]["ot_s"]),
               ("online", "evaluation", gc["P0"]["evaluate_s"])]
    prov = {"communication": "measured on a wire: client, server and dealer as processes "
            "over loopback TCP; ledger booked by both parties' processes and the dealer's "
            "in-process run (equal); garbled circuits real (tables, labels, decoding bits); "
            "the OT real (IKNP: the client's receiver columns and the server's answers in "
            "their booked frames; 128 base OTs once per run, unbooked, in class 'unbooked "
            "base OT'); Delphi's HE ciphertexts: zero filler of their booked size",
            "compute": "measured: the slower party's process (SPMD with garbage: each computes "
            "both parties' shares of the linear layers; the server garbles, the client "
            "evaluates)",
            "randomness": "Delphi's masks R_c, R_s: the OS CSPRNG in the dealer's process; "
            "garbled-circuit labels and output masks: the OS CSPRNG in the server's process; "
            "the run seed drives only the dealer's in-process simulation (nothing drawn from "
            "it is sent) and reaches no party's process"}
    return collect(plan, launched, prov, timings)
