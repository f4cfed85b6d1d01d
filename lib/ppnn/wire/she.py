"""SHE (TFHE Boolean gates) in wire mode: the client and the server as processes, each holding
only what its party holds (the ``she`` family, :mod:`ppnn.protocols.she`).

SHE is non-interactive: per image the client (``P0``) encrypts its pixels bit by bit and
sends them, the server (``P1``) evaluates every layer as gate circuits and returns the
encrypted logits, which the client decrypts. The processes run the parties' steps of
:func:`ppnn.protocols.she.network.encrypted_inference`; the client's process holds a garbage
model of the public shapes, the server's a garbage image, and each replaces its stand-in by
the ciphertexts it received. The client expects the logits in the model's public output
format (:func:`public_output`, computed by the launcher on the bit simulator); the gate
counts are the server's, so the run's ledger is the server process's.

``backend="sim"`` (the bit simulator): each message is a frame of its booked size carrying
the plaintext bits of its encrypted entries: data flow, not confidentiality.
``backend="real"`` (tfhe-rs, :mod:`ppnn.he.tfhe`): the client's process generates the keys
and keeps the client key, sends the server key once (class ``unbooked keys``) and its
ciphertexts as their serialized bytes, checked against the booked size; the server's process
evaluates with the server key only (:class:`~ppnn.he.tfhe.TfheServerBackend`: no encrypt, no
decrypt). ``result.extra["she"]`` gives the key's measured bytes beside the family's formula.

Main names: :func:`run_plan`, :func:`she_job`, :func:`garbage_model`, :func:`public_output`,
:data:`ROLE_OF`; :data:`BROKEN` names deliberately broken steps (the server evaluates its
own copy of the encrypted image; the client decrypts its own stand-in for the logits) that
the garbage test catches.

See also
--------
docs/wire.md : the honesty argument, and SHE in "Family by family".
"""

from __future__ import annotations

import dataclasses
import struct
import time

import numpy as np

from ppnn.core import Ledger
from ppnn.he.bitsim import Bits, BitSimulator
from ppnn.he.tfhe import TfheBackend, TfheServerBackend
from ppnn.protocols.she import circuits as C
from ppnn.protocols.she import network as N
from ppnn.protocols.she.quant import QLinear, QResidual, QuantNet

from .launch import checked_images, launch
from .transport import Wire, WireError

__all__ = ["SHE_FAMILIES", "BACKENDS", "ROLE_OF", "BROKEN", "run_plan", "she_job",
           "public_output", "garbage_model"]

#: the SHE families that run with ``transport="tcp"``
SHE_FAMILIES = ("she",)
#: the backends of a wire run ("sim": the bit simulator; "real": tfhe-rs, keys separated)
BACKENDS = ("sim", "real")
#: the launcher's role of each party (only these two processes are started)
ROLE_OF = {"client": "P0", "server": "P1"}
_PARTY_OF = {r: p for p, r in ROLE_OF.items()}
#: deliberately broken steps (the garbage test's negative controls): ``"server reads x"`` --
#: the server evaluates its own copy of the encrypted image instead of the one it received;
#: ``"client reads logits"`` -- the client decrypts its own stand-in for the encrypted
#: logits instead of the ones it received
BROKEN = ("server reads x", "client reads logits")
#: the largest serialized server key the server's process accepts (512 MiB; the default
#: parameters' key is about 130 MB)
KEY_LIMIT = 1 << 29
#: what ``BitArray.to_bytes`` puts before the ciphertexts of a 1-D array (bincode): the tag's
#: length and the tag, the key id, the shape (length 1, the size) and the ciphertext count
_CONTAINER = struct.Struct("<Q8sQQQQ")
_TAG = b"BitArray"
_PARTIES = ("client", "server")


def _container(key_id: int, n: int) -> bytes:
    return _CONTAINER.pack(len(_TAG), _TAG, int(key_id), 1, n, n)


class _Party:
    """One party's process: its wire, the ledger's round offset and its broken step."""

    def __init__(self, wire: Wire, me: str, broken: str | None, key_id: int | None):
        self.wire, self.me, self.broken, self.key_id = wire, me, broken, key_id
        self.offset = 0  # online rounds of earlier images (the per-image ledgers restart)

    def cross(self, msg, parts, layout):
        """Send ``parts`` (sender's process) or receive ``layout`` (receiver's) for the booked
        ``msg``; returns what arrived, or None in the sender's process."""
        rnd = msg.round + self.offset
        self.wire.enter_round(rnd)
        step = f"{msg.label}::{msg.what}" if msg.label else msg.what
        if self.me == msg.sender:
            bits = sum(int(np.size(a)) * b for a, b in parts)
            if bits != msg.bits:
                raise WireError(f"'{step}': the ledger books {msg.bits} bits, the frame has "
                                f"{bits}")
            self.wire.send(ROLE_OF[msg.receiver], parts, step, "online", round=rnd)
            return None
        if self.me == msg.receiver:
            return self.wire.recv(ROLE_OF[msg.sender], layout, step, "online")
        raise WireError(f"{self.me} is neither sender nor receiver of '{step}'")

    def ciphertexts(self, msg, parts: list[Bits]) -> list[Bits]:
        """The arrays of ``parts`` as the receiver's process has them after ``msg``: in the
        sender's process ``parts`` (sent), in the receiver's its own ``parts`` with every
        encrypted (non-trivial) entry replaced by the one received. Trivial entries are
        public constants and do not cross (the booked size counts the encrypted ones)."""
        be = parts[0].backend
        trivial = np.concatenate([p.trivial.reshape(-1) for p in parts])
        enc = np.flatnonzero(~trivial)
        real = not isinstance(be, BitSimulator)
        if real:
            if msg.bits % 8:
                raise WireError(f"'{msg.what}': {msg.bits} bits booked, not whole bytes")
            layout = [((msg.bits // 8,), np.dtype(np.uint8), 8)]
        else:
            if enc.size > msg.bits:
                raise WireError(f"'{msg.what}': {enc.size} encrypted bits do not fit in the "
                                f"booked {msg.bits} bits")
            layout = [((enc.size,), np.dtype(np.uint8), 1), *_filler_layout(msg.bits - enc.size)]
        if self.me == msg.sender:
            payload = be._take(be._concat([p.data for p in parts]), enc)
            if real:
                frame = [(_serialized(payload, msg), 8)]
            else:
                frame = [(np.asarray(payload, np.uint8), 1)] + [
                    (np.zeros(s, t), b) for s, t, b in layout[1:]]
            self.cross(msg, frame, layout)
            return parts
        got = self.cross(msg, None, layout)
        if real:
            raw = _container(self.key_id, enc.size) + got[0].tobytes()
            payload = be.binding.BitArray.from_bytes(raw)
        else:
            payload = got[0].astype(np.uint8)
        return _with_received(parts, enc, payload)


def _filler_layout(bits: int):
    return [((bits // 8,), np.dtype(np.uint8), 8), ((bits % 8,), np.dtype(np.uint8), 1)]


def _serialized(arr, msg) -> np.ndarray:
    """The bytes of the tfhe-rs ciphertexts of ``arr`` (a 1-D ``BitArray``) as they cross:
    the bincode of each ciphertext, in order (the array's container is public)."""
    raw = arr.to_bytes()
    head = _container(arr.key_id, arr.size)
    if raw[:len(head)] != head:
        raise WireError("the binding's BitArray serialization does not start with the "
                        "expected container (tag, key id, shape, count): was ppnn_tfhe changed?")
    body = np.frombuffer(raw, np.uint8, offset=len(head))
    if 8 * body.size != msg.bits:
        raise WireError(f"'{msg.what}': the ledger books {msg.bits // 8} bytes (tfhe-rs "
                        f"ciphertext size x {arr.size} encrypted bits), the serialized "
                        f"ciphertexts are {body.size} bytes")
    return body


def _with_received(parts: list[Bits], enc: np.ndarray, payload) -> list[Bits]:
    """``parts`` with the entries at flat positions ``enc`` (over all parts, in order) taken
    from ``payload`` (one routing call per part; the public metadata is the local copy's)."""
    be = parts[0].backend
    sizes = [p.size for p in parts]
    total = sum(sizes)
    src = np.arange(total)
    src[enc] = total + np.arange(enc.size)
    pool = be._concat([p.data for p in parts] + [payload])
    out, at = [], 0
    for p, n in zip(parts, sizes):
        data = be._reshape(be._take(pool, src[at:at + n]), p.shape)
        out.append(be._make(data, p.trivial, p.const, p.md, p.gd))
        at += n
    return out


# -- what each process holds -------------------------------------------------------------
def garbage_model(qnet: QuantNet, g: np.random.Generator) -> QuantNet:
    """``qnet`` with the server's secrets replaced by garbage of the same shapes and dtypes:
    every linear layer's weights (signs, exponents, zero pattern; TCN: integer weights) and
    biases. Shapes, bit widths, shifts, scales and pooling windows stay: they are public."""
    if not isinstance(qnet, QuantNet):
        raise TypeError(f"qnet must be a QuantNet (plan.impl of a SHE plan), got "
                        f"{type(qnet).__name__}")

    def like(a, lo, hi):
        return None if a is None else g.integers(lo, hi, np.shape(a)).astype(np.asarray(a).dtype)

    def garbage(ops):
        out = []
        for op in ops:
            if isinstance(op, QLinear):
                wb = qnet.weight_bits
                op = dataclasses.replace(
                    op, bias=like(op.bias, -(1 << 10), 1 << 10),
                    w_sign=None if op.w_sign is None else like(op.w_sign, 0, 2) * 2 - 1,
                    w_exp=like(op.w_exp, 0, 1 << (wb - 1)), w_zero=like(op.w_zero, 0, 2),
                    w_int=like(op.w_int, -(1 << (wb - 1)), 1 << (wb - 1)))
            elif isinstance(op, QResidual):
                op = dataclasses.replace(op, body=garbage(op.body),
                                         shortcut=garbage(op.shortcut))
            out.append(op)
        return out

    return dataclasses.replace(qnet, ops=garbage(qnet.ops))


def public_output(qnet: QuantNet) -> dict:
    """The public format of one image's encrypted logits: ``signed``, ``shape`` and per bit
    plane which bits are trivial and their constants (``trivial``, ``const``: ``(width,
    *shape)``) -- a dry run of one zero image on the bit simulator without public constants
    (the family's setting), as the family's ``count`` does. It depends on the model, not on
    the image."""
    be = BitSimulator(public_constants=False)
    sent = N.encrypt_input(qnet, be, np.zeros((1, int(np.prod(qnet.input_shape))), np.int64))
    word, _ = N.evaluate(qnet, sent.word)
    return {"signed": word.signed, "shape": word.shape,
            "trivial": np.stack([p.trivial for p in word.planes]),
            "const": np.stack([p.const for p in word.planes])}


def _stand_in(be, fmt: dict, g: np.random.Generator) -> C.Word:
    """The client's stand-in for the encrypted logits: encryptions of garbage bits with the
    public format's trivial bits and constants (replaced by what it receives)."""
    trivial, const = np.asarray(fmt["trivial"], bool), np.asarray(fmt["const"], np.uint8)
    width, shape = trivial.shape[0], tuple(fmt["shape"])
    enc = be.encrypt(g.integers(0, 2, trivial.shape, dtype=np.uint8))
    idx = np.arange(enc.size).reshape(width, -1)
    zero = np.zeros(shape, np.int32)
    planes = tuple(be._make(be._reshape(be._take(enc.data, idx[i]), shape), trivial[i],
                            const[i], zero, zero) for i in range(width))
    return C.Word(planes, bool(fmt["signed"]))


class _ServerTfhe(TfheServerBackend):
    """The server process's tfhe-rs backend: the server key only. Its stand-in for the
    encrypted image it does not hold (the encryption of its garbage image) is trivial
    ciphertexts of those bits -- it cannot encrypt; everything else is
    :class:`~ppnn.he.tfhe.TfheServerBackend` (decrypting raises)."""

    def _encrypt(self, bits):
        return self.key.trivial(bits)


# -- the two processes --------------------------------------------------------------------
def _client(wire: Wire, task: dict) -> dict:
    backend, x, fmt = task["backend"], task["x"], task["format"]
    qnet, g = task["qnet"], wire.garbage  # qnet: a garbage model (only public parts used)
    key, info = None, {}
    if backend == "real":
        from ppnn.he.tfhe import load_binding

        t0 = time.perf_counter()
        key = load_binding().BooleanKey.generate()
        info["keygen_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        sk = key.server_key().to_bytes()
        info["server_key_serialize_s"] = time.perf_counter() - t0
        info["server_key_bytes"] = len(sk)
        wire.send("P1", [(np.frombuffer(sk, np.uint8), 8)], "server key", "unbooked keys")
        del sk
    party = _Party(wire, "client", task.get("broken"), None if key is None else key.key_id)
    ledger, logits, times = Ledger(_PARTIES), [], []
    for i in range(len(x)):
        led = Ledger(_PARTIES)
        be = (TfheBackend(key, public_constants=False) if key is not None
              else BitSimulator(public_constants=False))
        be.ledger = led
        if key is not None:
            info["ciphertext_bytes"] = be.ciphertext_bytes
        sent = N.encrypt_input(qnet, be, qnet.encode_input(x[i:i + 1]), led)
        party.ciphertexts(sent.message, sent.parts)
        stand_in = _stand_in(be, fmt, g)
        _, msg = N.send_logits(stand_in, led)  # booked from the public output format
        planes = party.ciphertexts(msg, list(stand_in.planes))
        if party.broken == "client reads logits":
            planes = list(stand_in.planes)
        out, dec_s = N.decrypt_logits(C.Word(tuple(planes), stand_in.signed), 1, led)
        party.offset += led.rounds("online")
        ledger.merge(led)
        logits.append(out[0])
        times += [("client", "encrypt", sent.seconds), ("client", "decrypt", dec_s)]
    return {"output": np.stack(logits), "ledger": ledger, "times": times, "info": info}


def _server(wire: Wire, task: dict) -> dict:
    backend, qnet, g = task["backend"], task["qnet"], wire.garbage
    x = g.uniform(0.0, 1.0, task["x_shape"])  # the image: garbage here
    sk, info = None, {}
    if backend == "real":
        from ppnn.he.tfhe import load_binding
        from ppnn.protocols.she.family import tfhe_key_bytes

        raw = wire.recv_bytes("P0", "server key", "unbooked keys", KEY_LIMIT)
        t0 = time.perf_counter()
        sk = load_binding().BooleanServerKey.from_bytes(raw)
        info["server_key_load_s"] = time.perf_counter() - t0
        info["server_key_bytes_received"] = len(raw)
        info["server_key_bytes_formula"] = tfhe_key_bytes(sk.parameters)
        del raw
    party = _Party(wire, "server", task.get("broken"), None if sk is None else sk.key_id)
    ledger, times = Ledger(_PARTIES), []
    boots = 0
    for i in range(len(x)):
        led = Ledger(_PARTIES)
        be = (_ServerTfhe(sk, public_constants=False) if sk is not None
              else BitSimulator(public_constants=False))
        be.ledger = led
        sent = N.encrypt_input(qnet, be, qnet.encode_input(x[i:i + 1]), led)  # stand-ins
        parts = party.ciphertexts(sent.message, sent.parts)
        if party.broken == "server reads x":
            parts = sent.parts
        if sent.zero is not None:
            be.set_encrypted_zero(parts[-1])
        word = C.Word(tuple(parts[:sent.word.width]), sent.word.signed)
        out, rows = N.evaluate(qnet, word, led)
        _, msg = N.send_logits(out, led)
        party.ciphertexts(msg, list(out.planes))
        party.offset += led.rounds("online")
        ledger.merge(led)
        times += [("online", r["layer"], r["seconds"]) for r in rows]
        if sk is not None:  # what the server's process evaluated with
            boots += be.native_counts()["bootstraps"]  # tfhe-rs's own counter (this image)
            info["server_backend"] = ("TfheServerBackend" if isinstance(be, TfheServerBackend)
                                      else type(be).__name__)
            info["server_holds_secret_key"] = bool(be.holds_secret_key)
            info["server_key_type"] = type(be.key).__name__
    if sk is not None:
        info["tfhe_rs_bootstraps"] = int(boots)
    return {"output": None, "ledger": ledger, "times": times, "info": info}


def she_job(wire: Wire, task: dict) -> dict:
    """What each process of a SHE wire run does (module-level for pickling)."""
    if wire.role not in _PARTY_OF:
        return {"output": None, "ledger": None}
    return (_client if _PARTY_OF[wire.role] == "client" else _server)(wire, task)


# -- the run ------------------------------------------------------------------------------
def run_plan(plan, x, seed=0, *, backend: str = "sim", timeout: float | None = None,
             deadline: float | None = 600.0, broken: str | None = None):
    """``ppnn.run(plan, x, seed, backend, transport="tcp")`` for SHE: a
    :class:`~ppnn.protocols.api.Result` whose ``extra["wire"]`` is
    :func:`~ppnn.wire.summary.wire_summary` and ``extra["she"]`` the key separation's facts
    (``backend="real"``: the server key's measured bytes, the ciphertext size, the server's
    backend and whether it holds a secret key, tfhe-rs's own bootstrap count).

    Parameters
    ----------
    plan : a compiled plan of ``she``.
    x : images ``(N, *input_shape)`` (or one image).
    seed : unused -- SHE's run draws no simulation randomness (tfhe-rs encrypts with its own
        CSPRNG); accepted for the common interface.
    backend : ``"sim"`` (the bit simulator) or ``"real"`` (tfhe-rs; small networks only:
        several ms per bootstrapped gate).
    timeout : seconds a process waits for a message; None: 30 s, or 600 s on ``"real"``
        (the client waits while the server evaluates the whole network).
    deadline : seconds the whole run may take.
    broken : one of :data:`BROKEN` (the garbage test's negative controls), or None.
    """
    import pandas as pd

    from ppnn.protocols.api import Result

    from .summary import wire_summary

    x = checked_images(plan, x, SHE_FAMILIES)
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if broken is not None and broken not in BROKEN:
        raise ValueError(f"broken must be None or one of {BROKEN}, got {broken!r}")
    if timeout is None:
        timeout = 600.0 if backend == "real" else 30.0
    if backend == "real":
        from ppnn.he.tfhe import load_binding

        load_binding()  # a clear ImportError here, not in a child process
    qnet = plan.impl
    g = np.random.default_rng(np.random.SeedSequence())
    tasks = {"P0": {"backend": backend, "qnet": garbage_model(qnet, g), "x": x,
                    "format": public_output(qnet), "broken": broken},
             "P1": {"backend": backend, "qnet": qnet, "x_shape": x.shape, "broken": broken}}
    launched = launch(she_job, tasks, timeout=timeout, deadline=deadline)
    client, server = launched["P0"][0], launched["P1"][0]
    led = server["ledger"]  # the gates are the server's: its process books the whole ledger
    if client["ledger"].messages != led.messages:
        raise WireError("the client's process booked different messages than the server's "
                        "(is the public output format the model's?)")
    summary = wire_summary(led, launched)
    timings = pd.DataFrame(server["times"] + client["times"],
                           columns=["phase", "layer", "seconds"])
    info = {**server["info"], **client["info"], "backend": backend}
    comm = ("measured on a wire: client and server as processes over loopback TCP (two "
            "processes); ledger booked by the server's process (gates, messages), its "
            "messages also by the client's (equal); ")
    if backend == "real":
        comm += ("ciphertexts: their serialized tfhe-rs bytes (sizes measured, equal to the "
                 "booked); the server key: serialized, in the unbooked class 'unbooked keys'")
        compute = ("measured on tfhe-rs: the server's process evaluates every gate with the "
                   "server key only (no secret key); the client's encrypts and decrypts")
    else:
        comm += ("bit-simulator ciphertexts: their bits in frames of the booked size, zero "
                 "filler after; no key crosses (the simulator has none)")
        compute = ("counted gates and bootstraps on the bit simulator in the server's process "
                   "(its time is not a TFHE time)")
    rand = ("keys and encryptions: tfhe-rs's own CSPRNG in the client's process"
            if backend == "real" else "none: the bit simulator draws no randomness")
    return Result(plan.family, backend, np.asarray(client["output"]), led, timings,
                  {"communication": comm, "compute": compute,
                   "randomness": rand + "; the run seed is unused and reaches no process"},
                  {"wall_s": launched.seconds, "wire": summary, "transport": "tcp",
                   "she": info})
