"""Delphi + garbled ReLU in wire mode: the client, the server and the dealer as processes,
SPMD with garbage (the ``delphi_gc`` family, :mod:`ppnn.protocols.delphi_gc`).

The client (``P0``) and the server (``P1``) run the in-process protocol
(:func:`ppnn.protocols.delphi_gc.secure_inference`) with a
:class:`~ppnn.wire.delphi.WireLedger`. The linear layers run as in :mod:`.delphi` (Delphi's
masks from the dealer, its counted HE as filler). The garbled activations are real: the
server's process (:class:`GCParty`) garbles with its own labels and a fresh output mask from
the OS CSPRNG and sends, each as a frame of its booked size, what Delphi's split books
(:func:`ppnn.he.gc.book_delphi_split`): in preprocessing the IKNP OT of the client's input
labels (:class:`~ppnn.wire.ot.WireOT`), the garbled tables, the labels of its mask and the
decoding bits; online the labels of its share. The client evaluates from those frames alone
(:func:`ppnn.wire.hegc.garble_frames`, :func:`ppnn.wire.hegc.evaluate_frames`).

The dealer's process draws Delphi's masks from the OS CSPRNG and garbles nothing: in its run
the circuit is replaced by its ideal functionality, booked exactly as the circuit is.

Main names: :func:`run_plan`, :func:`delphi_gc_job`, :class:`GCParty`; :data:`BROKEN` names
deliberately broken steps that the in-process run cannot tell from the real ones and the
garbage test catches.

See also
--------
docs/wire.md : the honesty argument; Delphi + garbled ReLU, its rounds and waits, and the
    garbled circuits' OT in "Family by family".
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
    _fresh,
    _PartyMaterial,
    collect,
    reading_client_share,
    send_masks,
)
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
    :func:`~ppnn.wire.summary.wire_summary`.

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
