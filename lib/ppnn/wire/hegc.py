"""GAZELLE / GALA + garbled ReLU in wire mode: the client and the server as processes, SPMD
with garbage (the ``gazelle_gc`` and ``gala_gc`` families, :mod:`ppnn.protocols.hegc`).

Each party's process (``P0`` the client, ``P1`` the server; no dealer) runs the steps of
:func:`ppnn.protocols.hegc.secure_inference` on its own copy of the slot simulator, booking
every message and HE operation as the in-process run does. The client holds the image, the
server the model; between layers each holds its share, and everything else is garbage. The
ciphertexts ``[x]_C`` and ``[y - r]_C`` cross as frames of their booked size that carry
their slot values (data flow, not confidentiality, on the simulator); the receiver replaces
its own ciphertexts by the received ones. The Galois keys cross as filler.

The garbled activations are real: the server garbles (:func:`garble_frames`), the client
evaluates from the frames it received (:func:`evaluate_frames`) after a real IKNP OT of its
input labels (:class:`~ppnn.wire.ot.WireOT`). Delphi + GC (:mod:`.delphi_gc`) uses the same
two halves. With ``backend="real"`` :mod:`.hegc_seal` replaces the simulator by SEAL through
the hooks :meth:`_Party.galois_keys`, :meth:`_Party.ciphertexts` and :meth:`_Party.decrypt`.

Main names: :func:`run_plan`, :func:`hegc_job`, :func:`launch_pair`, :class:`GarblerFrames`,
:func:`share_bits`, :data:`ROLE_OF`; :data:`BROKEN` names deliberately broken steps (the
server computes on its own copy of ``[x]_C``; the client reads the server's share of the
logits from its own copy) that the garbage test catches.

See also
--------
docs/wire.md : the honesty argument; GAZELLE and GALA, and the garbled circuits' OT, in
    "Family by family".
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from ppnn.core import Ledger
from ppnn.core.randomness import SecureRandom, mask_source
from ppnn.he import gc as gcmod
from ppnn.nn import Dense
from ppnn.protocols import gc_act
from ppnn.protocols import hegc as hg
from ppnn.protocols.gala import centered
from ppnn.protocols.gala.network import quantize_input
from ppnn.protocols.gala.protocol import check_plain_modulus

from .launch import checked_images, launch
from .ot import WireOT
from .transport import Wire, WireError

__all__ = ["HEGC_FAMILIES", "ROLE_OF", "BROKEN", "run_plan", "hegc_job", "GarblerFrames",
           "garble_frames", "evaluate_frames", "share_bits"]

#: the HE-GC families that run with ``transport="tcp"``
HEGC_FAMILIES = ("gazelle_gc", "gala_gc")
#: the launcher's role of each party (only these two processes are started)
ROLE_OF = {"client": "P0", "server": "P1"}
_PARTY_OF = {r: p for p, r in ROLE_OF.items()}
#: deliberately broken steps (the garbage test's negative controls): ``"server reads x"``
#: -- the server evaluates the kernel on its own copy of ``[x]_C`` instead of the one it
#: received; ``"client reads logits share"`` -- the client adds its own copy of the
#: server's share of the logits instead of the one it received
BROKEN = ("server reads x", "client reads logits share")
CHUNK = 1024  # instances per garbling (each its own Delta), as gc_act.garbled_activation


class _Party:
    """One party's process: its wire, its ledger's round offset and its broken step."""

    ot: WireOT | None = None  # the run's oblivious transfer (set by hegc_job)

    def __init__(self, wire: Wire, me: str, broken: str | None):
        self.wire, self.me, self.broken = wire, me, broken
        self.offset = 0  # online rounds of earlier images (the per-image ledgers restart)

    def cross(self, msg, parts, layout):
        """Send ``parts`` (sender's process) or receive ``layout`` (receiver's) for the booked
        ``msg``; returns what arrived, or None in the sender's process."""
        online = msg.phase == "online"
        cls = "online" if online else "offline setup"
        rnd = msg.round + self.offset if online else None
        if online:
            self.wire.enter_round(rnd)
        step = f"{msg.label}::{msg.what}"
        if self.me == msg.sender:
            bits = sum(int(np.size(a)) * b for a, b in parts)
            if bits != msg.bits:
                raise WireError(f"'{step}': the ledger books {msg.bits} bits, the frame has "
                                f"{bits}")
            self.wire.send(ROLE_OF[msg.receiver], parts, step, cls, round=rnd)
            return None
        if self.me == msg.receiver:
            return self.wire.recv(ROLE_OF[msg.sender], layout, step, cls)
        raise WireError(f"{self.me} is neither sender nor receiver of '{step}'")

    def galois_keys(self, he, steps, led: Ledger) -> None:
        """The client makes the Galois keys of the rotations ``steps`` it has no key for yet
        and sends them (booked; here zero filler: the simulator builds no key)."""
        new = he.keygen(steps)
        if new:
            client, server = hg.PARTIES
            self.filler(led.send(client, server, len(new) * he.galois_key_bits,
                                 f"Galois keys for {len(new)} rotations"))

    def decrypt(self, he, ct) -> np.ndarray:
        """The client's decryption (in the server's process: of its own copy, garbage)."""
        return he.decrypt(ct)

    def filler(self, msg) -> None:
        """A message whose content the simulation does not build: zeros of its booked size."""
        layout = _filler_layout(msg.bits)
        self.cross(msg, [(np.zeros(s, t), b) for s, t, b in layout], layout)

    def ciphertexts(self, msg, ct, he):
        """``ct`` as the receiver has it: the slot values in a frame of the booked size."""
        pbits = int(he.p - 1).bit_length()
        data = np.broadcast_to(ct.data, ct.shape + (he.n,))
        rest = msg.bits - data.size * pbits
        if rest < 0:
            raise WireError(f"'{msg.what}': {data.size} slots of {pbits} bits do not fit in the "
                            f"booked {msg.bits} bits")
        layout = [(data.shape, np.dtype(np.uint64), pbits), *_filler_layout(rest)]
        parts = [(data.astype(np.uint64), pbits)] + [(np.zeros(s, t), b)
                                                    for s, t, b in layout[1:]]
        got = self.cross(msg, parts, layout)
        if got is None:
            return ct
        return type(ct)(he, ct.shape, got[0].astype(np.int64), ct.noise, ct.ntt)


def _filler_layout(bits: int):
    return [((bits // 8,), np.dtype(np.uint8), 8), ((bits % 8,), np.dtype(np.uint8), 1)]


# -- one linear layer (ppnn.protocols.gala.run_linear, split by party) ---------------------
def _linear(party: _Party, kern, he, W, a, a_srv, rng, led: Ledger, label: str, x_bound):
    client, server = hg.PARTIES
    if party.me == server:  # the modulus check reads the weights: the server's
        check_plain_modulus(kern, W, int(x_bound), he.p)
    with he.recording(led), led.label(label):
        with led.offline(), led.label("keys"):
            party.galois_keys(he, kern.rotation_steps(), led)
        ct_local = he.encrypt(kern.pack_input(a))  # 1. client (server's process: garbage)
        msg = led.send(client, server, ct_local.size * he.ciphertext_bits,
                       "[x]_C" if a_srv is None else "[x_C]_C (client's share)")
        ct_x = party.ciphertexts(msg, ct_local, he)
        if party.broken == "server reads x":
            ct_x = ct_local
        if a_srv is not None:  # server: [x]_C = [x_C]_C + x_S
            ct_x = he.add_plain(ct_x, he.encode(kern.pack_input(a_srv)))
        with led.label("eval"):  # 2. server: the kernel
            out = kern.evaluate(he, ct_x, W)
        # 3. server: mask r (on real SEAL from the OS CSPRNG, as in process), flood
        r = mask_source(rng, he.real).integers(0, he.p, size=out.shape + (he.n,), dtype=np.int64)
        masked = he.sub_plain(out, he.encode(r))
        if he.flood_bits:
            with led.label("flood"):
                masked = he.flood(masked)
        msg = led.send(server, client, masked.size * he.ciphertext_bits, "[y - r]_C")
        masked = party.ciphertexts(msg, masked, he)
        # 4. client: decrypt; both read out their shares
        client_share = kern.read_out(party.decrypt(he, masked), he.p, led, client)
        server_share = kern.read_out(r, he.p, led, server)
    return client_share, server_share


# -- a garbled circuit split between the garbler's and the evaluator's process -------------
@dataclasses.dataclass
class GarblerFrames:
    """What the garbler of ``n`` instances of a circuit ``c`` sends the evaluator, as arrays
    of 64-bit words (a 128-bit label is two):

    * ``pairs`` ``(evaluator inputs, n, 2, 2)``: both labels ``(W0, W0 ^ Delta)`` of each
      evaluator input wire (the garbler's side; on the wire they cross as the IKNP OT's two
      masked strings, :meth:`ppnn.he.ot.IKNPSender.answer`, and the evaluator's copy holds
      the answers unmasked with its pads: its label where its bit is, a pseudorandom string
      in the other place, :meth:`ppnn.he.ot.ReceiverBatch.unmask`);
    * ``tables`` ``(AND gates, n, 2, 2)``: the half-gates rows ``(T_G, T_E)``;
    * ``labels`` ``(garbler inputs, n, 2)``: the active labels of the garbler's inputs (its
      share, then its output mask ``r``);
    * ``decoding`` ``(outputs, n)`` uint8: the output decoding bits.

    GAZELLE / GALA send all four in one online message; Delphi (:mod:`.delphi_gc`) sends
    the pairs, the tables, the labels of ``r`` and the decoding bits in preprocessing and the
    labels of the share online."""

    pairs: np.ndarray
    tables: np.ndarray
    labels: np.ndarray
    decoding: np.ndarray

    @staticmethod
    def layout(c: gcmod.Circuit, n: int) -> list[tuple[tuple[int, ...], np.dtype, int]]:
        """The four parts' ``(shape, dtype, bits per element)`` for ``n`` instances of
        ``c`` (the receiver's :meth:`~ppnn.wire.transport.Wire.recv` layout)."""
        u64, u8 = np.dtype(np.uint64), np.dtype(np.uint8)
        return [((c.evaluator_inputs.size, n, 2, 2), u64, 64), ((c.n_and, n, 2, 2), u64, 64),
                ((c.garbler_inputs.size, n, 2), u64, 64), ((c.outputs.size, n), u8, 1)]

    def parts(self) -> list[tuple[np.ndarray, int]]:
        """The four arrays with their bits per element (the sender's frame parts)."""
        return [(self.pairs, 64), (self.tables, 64), (self.labels, 64), (self.decoding, 1)]


def garble_frames(c: gcmod.Circuit, garbler_bits: np.ndarray, nonce: int,
                  chunk: int = CHUNK) -> GarblerFrames:
    """The garbler's half: garble ``n`` instances of ``c`` (``garbler_bits``: ``(garbler
    inputs, n)`` 0/1) in chunks of ``chunk``, each with its own ``Delta`` and labels from the
    OS CSPRNG, tweaks counted across the chunks under the public ``nonce``."""
    garbler_bits = np.asarray(garbler_bits, dtype=np.uint8)
    if garbler_bits.ndim != 2 or garbler_bits.shape[0] != c.garbler_inputs.size:
        raise ValueError(f"garbler_bits must be ({c.garbler_inputs.size}, n), got "
                         f"{garbler_bits.shape}")
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk}")
    n = garbler_bits.shape[1]
    f = GarblerFrames(*(np.empty(s, t) for s, t, _ in GarblerFrames.layout(c, n)))
    tweak = 0
    for j0 in range(0, n, chunk):  # one garbling (all gates x instances at once) per chunk
        sl = slice(j0, min(n, j0 + chunk))
        gc = gcmod.garble(c, sl.stop - sl.start, None, tweak, np.uint64(nonce))
        tweak += gcmod.tweaks_used(c, gc.n)
        w0 = gc.zero_labels[c.evaluator_inputs]
        f.pairs[:, sl] = np.stack([w0, w0 ^ gc.delta], axis=2)
        f.tables[:, sl] = gc.tables
        f.labels[:, sl] = gcmod.input_labels(gc, c.garbler_inputs, garbler_bits[:, sl])
        f.decoding[:, sl] = gc.decoding
    return f


def evaluate_frames(c: gcmod.Circuit, f: GarblerFrames, evaluator_bits: np.ndarray,
                    nonce: int, chunk: int = CHUNK) -> np.ndarray:
    """The evaluator's half, from what it received: picks the label of its bit from each
    pair (``evaluator_bits``: ``(evaluator inputs, n)`` 0/1; the pairs as the OT left them:
    only the place of its bit holds a label), evaluates chunk by chunk with the garbler's
    tweaks and decodes; returns the output bits ``(outputs, n)``."""
    n = f.tables.shape[1]
    evaluator_bits = np.asarray(evaluator_bits)
    if evaluator_bits.shape != (c.evaluator_inputs.size, n):
        raise ValueError(f"evaluator_bits must be ({c.evaluator_inputs.size}, {n}), got "
                         f"{evaluator_bits.shape}")
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk}")
    out = np.empty((c.outputs.size, n), dtype=np.uint8)
    tweak = 0
    for j0 in range(0, n, chunk):
        sl = slice(j0, min(n, j0 + chunk))
        mine = np.take_along_axis(f.pairs[:, sl],
                                  evaluator_bits[:, sl, None, None].astype(np.int64),
                                  axis=2)[:, :, 0]  # the label of its bit from each pair
        got, _ = gcmod.evaluate(c, f.tables[:, sl], f.labels[:, sl], mine, tweak,
                                np.uint64(nonce))
        tweak += gcmod.tweaks_used(c, sl.stop - sl.start)
        out[:, sl] = gcmod.decode(got, f.decoding[:, sl])
    return out


def share_bits(shares: np.ndarray, k: int) -> np.ndarray:
    """``(m k, n)`` bits of ``(n, m)`` k-bit shares, input by input (the circuit's order)."""
    return np.concatenate([gcmod.bits_of(shares[:, j], k) for j in range(shares.shape[1])])


# -- one garbled activation layer (gc_act.garbled_activation, split by party) --------------
def _activation(party: _Party, spec, cw, sw, led: Ledger, nonce: int):
    """The server garbles with its share ``sw`` and a fresh mask ``r``, the client
    evaluates with its share ``cw`` on what it received; the client's labels come by the
    IKNP OT (:class:`~ppnn.wire.ot.WireOT`: its receiver columns, then the garbler's pairs
    as the OT's answers in the booked frame). Returns ``(z, r, seconds)``."""
    c = gc_act.act_circuit(spec)
    n = cw.shape[0]
    gc_act.book_gc(led, n, c, "online", hg.PARTIES)
    ot_cols, answers = led.messages[-2], led.messages[-1]
    cols_layout = [((ot_cols.bits // 8,), np.dtype(np.uint8), 8)]  # kappa bits per OT
    layout = GarblerFrames.layout(c, n)
    g, t0 = party.wire.garbage, time.perf_counter()
    ot0 = party.ot.seconds
    party.ot.before_columns()  # the first time: the base OTs' second message
    if party.me == "server":  # the garbler
        r = gc_act._random_mod(SecureRandom(), spec.modulus, n)  # the real GC's mask: CSPRNG
        gb_bits = np.concatenate([share_bits(sw, spec.k), gcmod.bits_of(r, spec.k)])
        f = garble_frames(c, gb_bits, nonce)  # while the client's columns travel
        t = time.perf_counter() - t0
        (cols,) = party.cross(ot_cols, None, cols_layout)
        f.pairs = party.ot.answer(cols, f.pairs)  # the pairs masked: IKNP's answers
        party.cross(answers, f.parts(), layout)
        z = gc_act._random_mod(g, spec.modulus, n)  # the client's share: garbage here
        return z, r, {"garble_s": t, "evaluate_s": 0.0, "ot_s": party.ot.seconds - ot0}
    batch = party.ot.columns(share_bits(cw, spec.k))  # the evaluator: IKNP's receiver
    party.cross(ot_cols, [(batch.columns, 8)], cols_layout)
    f = GarblerFrames(*party.cross(answers, None, layout))
    f.pairs = party.ot.unmask(batch, f.pairs)  # its label where its bit is, else noise
    t1 = time.perf_counter()
    out = evaluate_frames(c, f, share_bits(cw, spec.k), nonce)
    r = gc_act._random_mod(g, spec.modulus, n)  # the server's mask: garbage here
    return gcmod.from_bits(out), r, {"garble_s": 0.0, "evaluate_s": time.perf_counter() - t1,
                                     "ot_s": party.ot.seconds - ot0}


# -- one image (hegc.secure_inference, split by party) -------------------------------------
def _inference(party: _Party, plan: hg.HEGCPlan, x, he, method, rng, led: Ledger):
    p = plan.p
    client, server = hg.PARTIES
    a = quantize_input(x[None], plan.f_x)[0]  # server's process: a garbage image's
    a_srv = None
    shares = None
    t = {"garble_s": 0.0, "evaluate_s": 0.0, "ot_s": 0.0}
    acts = 0
    for st in plan.steps:
        if st.kind == "linear":
            q, layer = st.q, st.layer
            if isinstance(layer, Dense):
                a = a.reshape(-1)
                a_srv = None if a_srv is None else a_srv.reshape(-1)
                bias = q.b
            else:
                bias = q.b.reshape(-1, 1, 1)
            kern = hg._kernel(method, st, a.shape, he.n)
            c_sh, s_sh = _linear(party, kern, he, q.W, a, a_srv, rng, led, st.name, q.x_bound)
            shares = (np.mod(c_sh, p), np.mod(s_sh + bias, p))
        elif st.kind == "act":
            with led.label(st.name):
                cw, sw = (hg._act_windows(s[None], st.pool, 0)[0] for s in shares)
                out_shape = cw.shape[:-1]
                z, r, tg = _activation(party, st.spec, cw.reshape(-1, st.spec.m),
                                       sw.reshape(-1, st.spec.m), led, acts)
            acts += 1
            t = {k: v + tg[k] for k, v in t.items()}
            a = (z.astype(np.int64) % p).reshape(out_shape)
            a_srv = (r.astype(np.int64) % p).reshape(out_shape)
            shares = (a, a_srv)  # a network may end in a ReLU: its output is the logits'
        else:
            a = a.reshape(-1)
            a_srv = None if a_srv is None else a_srv.reshape(-1)
    pbits = int(p).bit_length()
    with led.label("output"):
        msg = led.send(server, client, int(shares[1].size) * pbits,
                       "server's share of the logits")
        got = party.cross(msg, [(shares[1].astype(np.uint64), pbits)],
                          [(shares[1].shape, np.dtype(np.uint64), pbits)])
    if got is not None and party.broken != "client reads logits share":
        shares = (shares[0], got[0].astype(np.int64))
    party.offset += led.rounds("online")
    return centered(shares[0] + shares[1], p)[None], t


def _garbage_plan(hp: hg.HEGCPlan, g: np.random.Generator) -> hg.HEGCPlan:
    """The client's copy: the server's weights and biases replaced by garbage of their
    (public) shapes; scales, clips and bounds are the public fixed-point plan."""
    qs = {}
    for q in hp.qplan:
        qs[q.index] = dataclasses.replace(
            q, W=g.integers(-(1 << 10), 1 << 10, np.shape(q.W)).astype(np.asarray(q.W).dtype),
            b=g.integers(0, hp.p, np.shape(q.b)).astype(np.asarray(q.b).dtype))
    steps = [dataclasses.replace(st, q=qs[st.q.index]) if st.q is not None else st
             for st in hp.steps]
    return dataclasses.replace(hp, qplan=[qs[q.index] for q in hp.qplan], steps=steps)


def _fresh(g: np.random.Generator) -> np.random.Generator:
    return np.random.Generator(np.random.SFC64(int(g.integers(1 << 62))))


def hegc_job(wire: Wire, task: dict) -> dict:
    """What each process of a GAZELLE / GALA wire run does (module-level for pickling)."""
    from ppnn.protocols.api import family

    if wire.role not in _PARTY_OF:
        return {"output": None, "ledger": None}
    me, g = _PARTY_OF[wire.role], wire.garbage
    plan = task["plan"]
    fam = family(plan.family)
    if me == "server":
        x = g.uniform(0.0, 1.0, task["x_shape"])
        rng = np.random.default_rng(task["seed"])
    else:
        x, rng = task["x"], _fresh(g)  # the server's masks: garbage in the client's process
    party = _Party(wire, me, task.get("broken"))
    party.ot = WireOT(wire, me, record=bool(task.get("record_ot")))
    party.ot.start()  # the server's base-OT message leaves first
    he = fam.he_backend(plan)
    ledger, logits = Ledger(hg.PARTIES), []
    secs = {"garble_s": 0.0, "evaluate_s": 0.0, "ot_s": 0.0}
    for i in range(len(x)):
        led = Ledger(hg.PARTIES)
        z, t = _inference(party, plan.impl["plan"], x[i], he, fam.method, rng, led)
        ledger.merge(led)
        logits.append(z[0])
        secs = {k: secs[k] + t[k] for k in secs}
    return {"output": np.stack(logits) if me == "client" else None, "ledger": ledger,
            "gc": secs, "ot": party.ot.record}


# -- the run ------------------------------------------------------------------------------
def launch_pair(job, plan, x, seed: int | None, broken, timeout, deadline):
    """Start ``job`` as the client (``P0``: the image, the plan with garbage weights and
    biases, :func:`_garbage_plan`) and the server (``P1``: the plan, the image's shape, the
    seed of its masks on the slot simulator -- None on SEAL, where they come from the OS
    CSPRNG); returns ``(launched, client's result, server's result, ledger)`` after checking
    that both processes booked the same ledger."""
    g = np.random.default_rng(np.random.SeedSequence())
    client_plan = dataclasses.replace(
        plan, impl={**plan.impl, "plan": _garbage_plan(plan.impl["plan"], g)})
    tasks = {"P0": {"plan": client_plan, "x": x, "broken": broken},
             "P1": {"plan": plan, "x_shape": x.shape, "seed": seed, "broken": broken}}
    launched = launch(job, tasks, timeout=timeout, deadline=deadline)
    client, server = launched["P0"][0], launched["P1"][0]
    if server["ledger"].messages != client["ledger"].messages:
        raise WireError("the server's process booked a different ledger than the client's")
    return launched, client, server, client["ledger"]


def run_plan(plan, x, seed=0, *, backend: str = "sim", timeout: float | None = None,
             deadline: float | None = 600.0, broken: str | None = None):
    """``ppnn.run(plan, x, seed, backend, transport="tcp")`` for ``gazelle_gc`` /
    ``gala_gc``: a :class:`~ppnn.protocols.api.Result` whose ``extra["wire"]`` is
    :func:`~ppnn.wire.summary.wire_summary`. ``backend``: "sim" (the slot simulator, here;
    "real", SEAL with the secret key in the client's process, is
    :func:`ppnn.wire.hegc_seal.run_plan`, which :mod:`.dispatch` picks); ``timeout``: seconds
    a process waits for a message (None: 30 s); ``broken``: one of :data:`BROKEN` (the
    garbage test's negative controls)."""
    if backend == "real":
        raise ValueError("backend='real' runs on SEAL: ppnn.wire.hegc_seal.run_plan, or "
                         "ppnn.run(plan, x, seed, backend='real', transport='tcp')")
    if backend != "sim":
        raise ValueError(f"backend must be 'sim' or 'real', got {backend!r}")
    timeout = 30.0 if timeout is None else timeout
    import pandas as pd

    from ppnn.protocols.api import Result

    from .summary import wire_summary

    x = checked_images(plan, x, HEGC_FAMILIES)
    if broken is not None and broken not in BROKEN:
        raise ValueError(f"broken must be None or one of {BROKEN}, got {broken!r}")
    if isinstance(seed, np.random.Generator):
        raise TypeError("wire mode of the HE-GC families takes an int seed (it crosses to the "
                        "server's process)")
    launched, client, server, led = launch_pair(hegc_job, plan, x, seed, broken, timeout,
                                                deadline)
    summary = wire_summary(led, launched)
    seconds = max(summary["party seconds"][r] for r in ("P0", "P1"))
    ot_s = server["gc"]["ot_s"] + client["gc"]["ot_s"]
    timings = pd.DataFrame([("online", "garbling", server["gc"]["garble_s"]),
                            ("online", "evaluation", client["gc"]["evaluate_s"]),
                            ("online", "oblivious transfer (both parties)", ot_s),
                            ("online", "input, all layers, output", seconds)],
                           columns=["phase", "layer", "seconds"])
    prov = {"communication": "measured on a wire: client and server as processes over "
            "loopback TCP (two processes); ledger booked by both processes (equal); "
            "simulated ciphertexts: their slot values in frames of the booked size, zero "
            "filler after; Galois keys: zero filler; the OT real (IKNP: the client's receiver "
            "columns and the server's answers in their booked frames; 128 base OTs once per "
            "run, unbooked, in class 'unbooked base OT')",
            "compute": "measured: the slower party's process (SPMD with garbage: each runs "
            "every HE operation of the simulator; the server garbles, the client evaluates)",
            "randomness": "the server's share masks r: the run seed in the server's process "
            "(the slot simulator's ciphertexts carry their slots in the clear, so the masks "
            "protect nothing here; backend='real' draws them from the OS CSPRNG); "
            "garbled-circuit labels and output masks: the OS CSPRNG in the server's process; "
            "the client's process gets no seed"}
    return Result(plan.family, "sim", np.asarray(client["output"]), led, timings, prov,
                  {"wall_s": launched.seconds, "wire": summary, "transport": "tcp"})
