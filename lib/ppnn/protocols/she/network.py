"""Encrypted inference of SHE's integer network on a gate backend (she.txt §2 threat model, §3).

The **client** encodes the image as unsigned 5-bit pixels, encrypts it bit by bit and sends the
ciphertexts; the **server** evaluates every layer with gate circuits on the encrypted bits
(:mod:`.circuits`) -- SHE layers as shift-accumulate + mixed-bitwidth accumulator, the TCN
baseline with multipliers + fixed-width adders -- and returns the encrypted logits; only the
client can decrypt them. The server never sees a plaintext: it only routes ciphertexts, calls
gates and uses its public weights.

:func:`encrypted_inference` runs a batch of images on any backend (the bit simulator for whole
networks, tfhe-rs for what fits in time) and reports per layer the paper's operation counts
(HOPs by kind), the gate operations and bootstraps counted by the backend, and the
multiplicative depth reached; it is the composition of the parties' steps
:func:`encrypt_input` (client), :func:`evaluate` and :func:`send_logits` (server) and
:func:`decrypt_logits` (client), which wire mode (:mod:`ppnn.wire.she`) runs in two processes.
:func:`encrypted_pool_slice` runs the first linear layer and the following activation and
pooling for a few pooled outputs only (the real-TFHE demonstration).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppnn.he.bitsim import Bits, GateBackend

from . import circuits as C
from .quant import QLinear, QPool, QResidual, QSum, QuantNet

__all__ = ["InferenceResult", "EncryptedInput", "encrypted_inference", "encrypt_input",
           "evaluate", "send_logits", "decrypt_logits", "encrypted_pool_slice", "tcn_acc_width",
           "LAYER_COLUMNS"]

LAYER_COLUMNS = ["layer", "kind", "outputs", "pc_shift", "pc_mult", "cc_add", "cc_com",
                 "hops", "hgops", "bootstraps", "md_linear", "md_out", "md_layer", "gd_out",
                 "width_out", "seconds"]


@dataclass
class InferenceResult:
    """Decrypted logits, client-side predictions and the per-layer cost frame (per image)."""

    logits: np.ndarray
    layers: pd.DataFrame
    input_bytes: int
    output_bytes: int
    encrypt_seconds: float
    decrypt_seconds: float

    @property
    def predictions(self) -> np.ndarray:
        return self.logits.argmax(axis=1)

    def totals(self) -> dict:
        t = {k: int(self.layers[k].sum()) for k in
             ("pc_shift", "pc_mult", "cc_add", "cc_com", "hops", "hgops", "bootstraps")}
        t["md"] = int(self.layers["md_out"].max())
        t["msize_bytes"] = self.input_bytes
        return t


def _batched(src: np.ndarray, n_in: int, batch: int) -> np.ndarray:
    """Index matrix of one image -> all images of the batch (flat index b * n_in + i)."""
    off = (np.arange(batch) * n_in)[:, None, None]
    return np.where(src[None] >= 0, src[None] + off, -1).reshape(-1, src.shape[1])


def _compact(src: np.ndarray, *others: np.ndarray):
    """Valid (>= 0) entries first in every row (stable); returns the arrays and the counts."""
    valid = src >= 0
    order = np.argsort(~valid, axis=1, kind="stable")
    out = [np.take_along_axis(np.where(valid, src, 0), order, 1)]
    out += [np.take_along_axis(np.broadcast_to(o, src.shape), order, 1) for o in others]
    return out, valid.sum(axis=1)


def tcn_acc_width(op: QLinear, weight_bits: int) -> int:
    """Fixed adder width of a TCN layer: 16 bits (she.txt §3.3) unless the sum needs more."""
    k = int(op.term_counts().max(initial=1))
    prod = op.in_bits + (0 if op.in_signed else 1) + weight_bits
    need = prod + int(np.ceil(np.log2(max(k, 1)))) + 1
    bias = int(np.abs(op.bias).max(initial=0)).bit_length() + 1
    return max(16, need, bias)


def _linear(op: QLinear, x: C.Word, batch: int, weight_bits: int, accumulator: str) -> C.Word:
    n_in = int(np.prod(op.in_shape))
    t = op.terms()
    src = _batched(t["src"], n_in, batch)
    bias = np.tile(op.bias, batch)
    if op.scheme == "she":
        e = np.tile(t["exponent"], (batch, 1))
        sign = np.tile(t["sign"], (batch, 1))
        return C.shift_accumulate(x, src, e, sign, bias, guard_bits=op.guard,
                                  accumulator=accumulator)
    # TCN: a multiplier per (nonzero, in-image) term, a fixed-width adder tree, the bias
    (s, w), counts = _compact(src, np.tile(t["w_int"], (batch, 1)))
    kmax, n_out = s.shape[1], s.shape[0]
    valid = np.arange(kmax)[None, :] < counts[:, None]  # (n_out, K) after compaction
    rows, cols = np.nonzero(valid.T)  # term slot (k, j) of every real term
    terms = C.gather(x, s.T[rows, cols])
    wq = C.constant_word(x.backend, w.T[rows, cols], weight_bits, signed=True)
    prods = C.multiply(terms, wq)  # only real terms get a multiplier
    width = tcn_acc_width(op, weight_bits)
    prods = C.extend(prods, width)
    slot = np.full((kmax, n_out), rows.size, np.int64)  # filler: a constant 0 (never added)
    slot[rows, cols] = np.arange(rows.size)
    be = x.backend
    zero = be.zeros((1,))
    table = C.Word(tuple(be.take(be.concat([p, zero]), slot) for p in prods.planes), True)
    acc = C.accumulate_fixed(table, width, counts)
    return C.add(acc, C.constant_word(be, bias, width, signed=True), widen=False)


def _residual_add(op: QResidual, body: C.Word, short: C.Word) -> C.Word:
    """The block's Add on the gate level: each branch shifted left by its lift (free wiring
    to the common scale), both sign-extended to one width, one ripple-carry adder."""
    b, s = (C.to_signed(C.shift_left(w, lift)) for w, lift in zip((body, short), op.lift))
    width = max(b.width, s.width)
    return C.add(C.extend(b, width), C.extend(s, width), widen=True)


def _sum_pool(op: QSum, x: C.Word, batch: int, n_in: int) -> C.Word:
    """A mean pool's window sums: the mixed-bitwidth adder tree over every window."""
    (s,), counts = _compact(_batched(op.src, n_in, batch))
    return C.accumulate(C.gather(x, s.T), counts)


def _activate(op: QLinear | QResidual, acc: C.Word) -> C.Word:
    if op.act is None:
        return acc
    # requantize: arithmetic shift right (free); the top `shift` planes would only hold copies
    # of the sign, so the word shrinks by that much
    y = C.truncate(C.shift_right(acc, op.shift), acc.width - op.shift) if op.shift else acc
    if op.act == "relu":
        return C.relu_saturate(y, op.out_bits)
    return C.saturate_signed(y, op.out_bits)


def _pool(op: QPool, x: C.Word, batch: int, n_in: int) -> C.Word:
    (s,), counts = _compact(_batched(op.src, n_in, batch))
    return C.max_reduce(C.gather(x, s.T), counts)


def _hops(op, batch: int) -> dict:
    if isinstance(op, QPool):
        k = (op.src >= 0).sum(axis=1)
        return {"pc_shift": 0, "pc_mult": 0, "cc_add": 0, "cc_com": int((k - 1).sum())}
    if isinstance(op, QSum):
        k = (op.src >= 0).sum(axis=1)
        return {"pc_shift": 0, "pc_mult": 0, "cc_add": int(np.maximum(k - 1, 0).sum()),
                "cc_com": 0}
    if isinstance(op, QResidual):
        return {"pc_shift": 0, "pc_mult": 0, "cc_add": op.n_out,
                "cc_com": op.n_out if op.act == "relu" else 0}
    k = op.term_counts()
    terms = int(k.sum())
    return {"pc_shift": terms if op.scheme == "she" else 0,
            "pc_mult": terms if op.scheme == "tcn" else 0,
            "cc_add": int(np.maximum(k - 1, 0).sum()),
            "cc_com": op.n_out if op.act == "relu" else 0}


def _check_encoded(qnet: QuantNet, x_int) -> np.ndarray:
    x_int = np.asarray(x_int)
    if x_int.ndim != 2 or x_int.shape[1] != int(np.prod(qnet.input_shape)):
        raise ValueError(f"x_int must be (B, {int(np.prod(qnet.input_shape))}) encoded images, "
                         f"got {x_int.shape}")
    return x_int


@dataclass
class EncryptedInput:
    """What the client sends (:func:`encrypt_input`): the encrypted image bits and, on a
    backend without public constants, one encrypted 0 (the server's constants are copies of
    it and its free negation)."""

    word: C.Word
    zero: Bits | None
    nbytes: int
    seconds: float
    message: object = None  # the booked Message (with a ledger)

    @property
    def parts(self) -> list[Bits]:
        """The arrays of ciphertexts the message carries, in order."""
        return list(self.word.planes) + ([] if self.zero is None else [self.zero])


def encrypt_input(qnet: QuantNet, backend: GateBackend, x_int, ledger=None) -> EncryptedInput:
    """The client's first step: encrypt the encoded images ``x_int`` ``(B, n_in)`` bit by bit
    (``qnet.in_bits`` unsigned planes) and, without public constants, one encrypted 0 that
    the backend's constants are made from; with a ``ledger``, book what the client holds and
    the message ``client -> server`` ("encrypted image bits", the encrypted bits' tfhe-rs
    size, one 0 per image)."""
    x_int = _check_encoded(qnet, x_int)
    be = backend
    t0 = time.perf_counter()
    x = C.encrypt_word(be, x_int.reshape(-1), qnet.in_bits, signed=False)
    zero = None
    if not be.public_constants:
        zero = be.encrypt(np.zeros(1, np.uint8))
        be.set_encrypted_zero(zero)
    enc_s = time.perf_counter() - t0
    out = EncryptedInput(x, zero, 0, enc_s)
    out.nbytes = sum(be.message_bytes(p) for p in x.planes) + (
        0 if be.public_constants else be.ciphertext_bytes * x_int.shape[0])
    if ledger is not None:
        ledger.hold("client", "image (encoded pixels, its input)", x_int)
        # the ciphertexts themselves (tfhe-rs) or SIZE_ONLY (bit simulator), serialized only
        # when the ledger keeps values
        out.message = ledger.send("client", "server", out.nbytes * 8, "encrypted image bits",
                                  value=be.wire(out.parts) if ledger.records_values else None)
    return out


def evaluate(qnet: QuantNet, x: C.Word, ledger=None, accumulator: str = "mixed"
             ) -> tuple[C.Word, list[dict]]:
    """The server's step: every layer of ``qnet`` as gate circuits on the encrypted input
    word ``x`` (a batch of flat images, :func:`encrypt_input`) on ``x``'s backend. Returns the
    encrypted logits word and one cost row per layer (per image, :data:`LAYER_COLUMNS`); with
    a ``ledger`` the HOPs and depths are booked per layer label (the backend books its gates
    on its own ledger)."""
    n_in = int(np.prod(qnet.input_shape))
    if x.size % n_in:
        raise ValueError(f"x must hold whole images of {n_in} elements, got {x.size}")
    batch = x.size // n_in
    rows: list[dict] = []
    x, _ = _evaluate_ops(qnet, qnet.ops, x, batch, n_in, ledger, accumulator, rows, [0])
    return x, rows


def _evaluate_ops(qnet: QuantNet, ops, x: C.Word, batch: int, n_in: int, ledger,
                  accumulator: str, rows: list, md_prev: list) -> tuple[C.Word, int]:
    """The ops of one sequence (a residual block: its body, its shortcut, then its adder and
    unit, labelled ``<block>.add``); appends a cost row per op. Returns the output word and
    its elements per image."""
    be = x.backend
    for op in ops:
        if isinstance(op, QResidual):
            xb, _ = _evaluate_ops(qnet, op.body, x, batch, n_in, ledger, accumulator, rows,
                                  md_prev)
            xs, _ = _evaluate_ops(qnet, op.shortcut, x, batch, n_in, ledger, accumulator, rows,
                                  md_prev)
        before = be.counts()
        t = time.perf_counter()
        name = f"{op.name}.add" if isinstance(op, QResidual) else op.name
        label = ledger.label(name) if ledger is not None else _nullcontext()
        with label:
            if isinstance(op, QLinear):
                acc = _linear(op, x, batch, qnet.weight_bits, accumulator)
                md_linear = acc.md()  # depth after the accumulator and bias, before the unit
                x = _activate(op, acc)
                kind = op.kind
            elif isinstance(op, QResidual):
                acc = _residual_add(op, xb, xs)
                md_linear = acc.md()
                x = _activate(op, acc)
                kind = "add"
            elif isinstance(op, QSum):
                x = _sum_pool(op, x, batch, n_in)
                md_linear = x.md()
                kind = "meanpool"
            else:
                x = _pool(op, x, batch, n_in)
                md_linear = md_prev[0]
                kind = "maxpool"
            h = _hops(op, batch)
            if ledger is not None:
                for k in ("pc_shift", "pc_mult", "cc_add", "cc_com"):
                    if h[k]:
                        ledger.count(k.upper(), h[k] * batch, "server")
                ledger.depth("md", x.md())
        after = be.counts()
        md = x.md()
        rows.append({"layer": name, "kind": kind, "outputs": op.n_out, **h,
                     "hops": sum(h.values()),
                     "hgops": (after["hgops"] - before["hgops"]) / batch,
                     "bootstraps": (after["bootstraps"] - before["bootstraps"]) / batch,
                     "md_linear": md_linear, "md_out": md, "md_layer": md - md_prev[0],
                     "gd_out": x.gd(),
                     "width_out": x.width, "seconds": time.perf_counter() - t})
        md_prev[0] = md
        n_in = op.n_out
    return x, n_in


def send_logits(logits: C.Word, ledger=None) -> tuple[int, object]:
    """The server's last step: the encrypted logits' (non-trivial) bits go to the client.
    Returns their bytes (tfhe-rs size) and, with a ``ledger``, the booked message."""
    be = logits.backend
    nbytes = sum(be.message_bytes(p) for p in logits.planes)
    msg = None
    if ledger is not None:
        msg = ledger.send("server", "client", nbytes * 8, "encrypted logits",
                          value=be.wire(list(logits.planes)) if ledger.records_values else None)
    return nbytes, msg


def decrypt_logits(logits: C.Word, batch: int, ledger=None) -> tuple[np.ndarray, float]:
    """The client's last step: decrypt the logits word; returns ``(logits (batch, classes),
    seconds)`` and books them as the client's holding."""
    t0 = time.perf_counter()
    out = C.decrypt_word(logits.backend, logits).reshape(batch, -1)
    dec_s = time.perf_counter() - t0
    if ledger is not None:
        ledger.hold("client", "logits (decrypted, its output)", out)
    return out, dec_s


def encrypted_inference(qnet: QuantNet, backend: GateBackend, x_int, ledger=None,
                        accumulator: str = "mixed") -> InferenceResult:
    """Client encrypts ``x_int`` (encoded images, ``(B, n_in)``), server evaluates ``qnet``
    gate by gate on ``backend``, client decrypts the logits. Costs are reported per image.

    ``accumulator``: SHE layers' adder tree, ``"mixed"`` (she.txt §3.3) or ``"fixed"``
    (16-bit adders, the ablation). With a ``ledger`` (parties ``client``, ``server``) the
    messages, gate counts (per layer label, one booking per gate level as it runs) and HOPs
    are booked; a ledger that records values also keeps the ciphertexts that crossed
    (serialized tfhe-rs ciphertexts; ``SIZE_ONLY`` on the bit simulator) and the client's
    encoded image and decrypted logits as its holdings.

    The parties' steps are :func:`encrypt_input`, :func:`evaluate`, :func:`send_logits` and
    :func:`decrypt_logits` (client, server, server, client); wire mode
    (:mod:`ppnn.wire.she`) runs them in two processes.
    """
    x_int = _check_encoded(qnet, x_int)
    batch = x_int.shape[0]
    be = backend
    if ledger is not None and be.ledger is None:
        be.ledger = ledger
    sent = encrypt_input(qnet, be, x_int, ledger)  # client: encrypt, send
    x, rows = evaluate(qnet, sent.word, ledger, accumulator)  # server: the gate circuits
    out_bytes, _ = send_logits(x, ledger)  # server -> client: encrypted logits
    logits, dec_s = decrypt_logits(x, batch, ledger)  # client: decrypt
    return InferenceResult(logits, pd.DataFrame(rows, columns=LAYER_COLUMNS),
                           sent.nbytes // batch, out_bytes // batch, sent.seconds, dec_s)


class _nullcontext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def encrypted_pool_slice(qnet: QuantNet, backend: GateBackend, x_int, pooled=None,
                         rows=None) -> dict:
    """The first linear layer and its activation for a few outputs of one image, and the
    following max-pool for the pooled outputs ``pooled`` (flat indices into the pool's output;
    only the linear outputs those windows read are computed). With ``rows`` instead, just
    those linear outputs and their activations. Returns the decrypted values of every stage
    and the gate counts of the run.
    """
    lin = qnet.ops[0]
    if not isinstance(lin, QLinear) or lin.scheme != "she":
        raise ValueError("the network must start with a SHE linear layer")
    if (pooled is None) == (rows is None):
        raise ValueError("give exactly one of pooled (pool outputs) or rows (linear outputs)")
    x_int = np.asarray(x_int).reshape(-1)
    if pooled is not None:
        pool = qnet.ops[1]
        if not isinstance(pool, QPool):
            raise ValueError("pooled needs a max-pool right after the first linear layer")
        pooled = np.atleast_1d(np.asarray(pooled))
        win = pool.src[pooled]  # (P, K) flat indices into the linear layer's output
        rows = np.unique(win[win >= 0])
    rows = np.atleast_1d(np.asarray(rows))
    t = lin.terms()
    be = backend
    be.reset_counts()
    x = C.encrypt_word(be, x_int, qnet.in_bits, signed=False)
    t0 = time.perf_counter()
    acc = C.shift_accumulate(x, t["src"][rows], t["exponent"][rows], t["sign"][rows],
                             lin.bias[rows], guard_bits=lin.guard)
    act = _activate(lin, acc)
    out = {"rows": rows, "acc": C.decrypt_word(be, acc), "act": C.decrypt_word(be, act)}
    if pooled is not None:
        local = np.where(win >= 0, np.searchsorted(rows, np.maximum(win, 0)), -1)
        (s,), counts = _compact(local)
        pw = C.max_reduce(C.gather(act, s.T), counts)
        out["pooled"] = C.decrypt_word(be, pw)
    out.update({"seconds": time.perf_counter() - t0, **be.counts()})
    return out
