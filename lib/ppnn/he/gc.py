"""Garbled circuits: half-gates + free-XOR + point-and-permute with fixed-key AES.

Boolean circuits (:class:`CircuitBuilder`, :mod:`ppnn.he.gc_circuits`) are garbled and
evaluated level by level, for all gates of a level and all circuit instances at once. An AND
costs two ciphertexts (half-gates, Zahur, Rosulek and Evans 2015), XOR and NOT are free
(free-XOR), and the hash is the tweakable circular correlation-robust hash of Guo, Katz, Wang
and Yu (2020) over AES-128 under a fixed public key, every tweak unique within a session.
Labels are uint64 arrays of shape ``(..., 2)`` (16-byte blocks).

* :func:`garble`, :func:`input_labels`, :func:`evaluate`, :func:`decode` -- the two sides;
  :func:`garble_and_evaluate` runs both on many instances in chunks (each its own ``Delta``);
* :func:`gc_relu` -- the ReLU on b-bit additive shares (:func:`relu_circuit`,
  :func:`relu_and_gates`): the baseline Tabula is compared with (Tabula §4), used by
  :mod:`ppnn.protocols.gc_act` too;
* :func:`gc_cost` / :class:`GCCost` -- the exact communication of a circuit (tables, garbler
  labels, the evaluator's labels by IKNP OT, decoding bits; base OTs amortised away);
* :data:`SPLITS` -- ``"delphi"`` (Delphi's ReLU protocol: circuits, OT and the mask's labels
  offline, only the labels of the server's share online; :func:`book_delphi_split` is its
  one booking) and ``"online"`` (everything online in two rounds, as GAZELLE runs it);
* :class:`GCWire` -- the bytes a garbler sent, for recorded transcripts.

See also
--------
docs/protocols.md : garbled circuits (the hash's tweaks, the activation circuit, the splits).
ppnn.he.ot : the oblivious transfer the evaluator's labels need.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from ppnn.core import AdditiveShares, Ledger, Ring
from ppnn.core import bits as core_bits
from ppnn.core.randomness import mask_source
from ppnn.core.transcript import SIZE_ONLY

from .gc_circuits import (
    AND,
    NOT,
    XOR,
    Circuit,
    CircuitBuilder,
    _check_bits,
    relu_and_gates,
    relu_circuit,
)

__all__ = [
    "KAPPA", "Circuit", "CircuitBuilder", "GarbledCircuit", "garble", "evaluate",
    "input_labels", "decode", "relu_circuit", "relu_and_gates", "gc_cost", "GCCost",
    "gc_relu", "plain_eval", "bits_of", "from_bits", "garble_and_evaluate", "AND", "XOR",
    "NOT", "SPLITS", "GCWire", "book_delphi_split",
]

KAPPA = 128
#: how :func:`gc_relu` books the circuit (see the module docstring)
SPLITS = ("delphi", "online")
_FIXED_KEY = hashlib.sha256(b"ppnn-lab fixed-key AES for half-gates").digest()[:16]

# ----------------------------------------------------------------------------- bits
def bits_of(v: np.ndarray, b: int) -> np.ndarray:
    """(b, N) bit matrix of the low b bits of v (flattened; LSB first), uint8."""
    return core_bits.bits_of(np.asarray(v).reshape(-1), b)


def from_bits(bits: np.ndarray) -> np.ndarray:
    """Inverse of :func:`bits_of` (uint64)."""
    return core_bits.from_bits(bits)


def plain_eval(c: Circuit, garbler_bits: np.ndarray, evaluator_bits: np.ndarray) -> np.ndarray:
    """Evaluate the circuit in the clear (oracle), level by level, all instances at once."""
    N = garbler_bits.shape[1]
    w = np.zeros((c.n_wires, N), dtype=np.uint8)
    w[c.garbler_inputs] = garbler_bits
    w[c.evaluator_inputs] = evaluator_bits
    for xi, ni, ai in c.levels:
        w[c.out[xi]] = w[c.a[xi]] ^ w[c.b[xi]]
        w[c.out[ni]] = w[c.a[ni]] ^ 1
        w[c.out[ai]] = w[c.a[ai]] & w[c.b[ai]]
    return w[c.outputs]

# ----------------------------------------------------------------------------- hashing
class _FixedKeyAES:
    def __init__(self, key: bytes = _FIXED_KEY):
        self._enc = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
        self.calls = 0  # AES block encryptions performed

    def _pi(self, X: np.ndarray) -> np.ndarray:
        X = np.ascontiguousarray(X)
        self.calls += X.size // 2
        return np.frombuffer(self._enc.update(X.tobytes()), dtype=np.uint64).reshape(X.shape)

    def hash(self, X: np.ndarray, tweak: np.ndarray, nonce: np.uint64) -> np.ndarray:
        """H(X, i) = pi(pi(X) ^ i) ^ pi(X) for blocks X (..., 2), with the 128-bit tweak
        i = (tweak, nonce): ``tweak`` (...) the low word, the session ``nonce`` the high."""
        P = self._pi(X)
        K = P.copy()
        K[..., 0] ^= tweak.astype(np.uint64)
        K[..., 1] ^= np.uint64(nonce)
        return self._pi(K) ^ P

def _random_blocks(shape, rng: np.random.Generator | None) -> np.ndarray:
    shape = (*shape, 2)
    n = int(np.prod(shape))
    if rng is None:  # labels from the OS CSPRNG (default)
        return np.frombuffer(os.urandom(8 * n), dtype=np.uint64).reshape(shape).copy()
    return rng.integers(0, np.iinfo(np.uint64).max, size=shape, dtype=np.uint64, endpoint=True)

def _lsb(X: np.ndarray) -> np.ndarray:
    return (X[..., 0] & np.uint64(1)).astype(bool)

def _lsb_mask(X: np.ndarray) -> np.ndarray:
    """All-ones block where lsb(X) = 1, zeros elsewhere: shape (..., 1) for broadcasting."""
    return (np.uint64(0) - (X[..., 0] & np.uint64(1)))[..., None]

# ----------------------------------------------------------------------------- garbling
@dataclass
class GarbledCircuit:
    """What the garbler produces for N instances of ``circuit``.

    ``tables`` (n_and, N, 2, 2): (T_G, T_E) per AND gate and instance -- sent to the evaluator.
    ``zero_labels`` (n_wires, N, 2) and ``delta`` (2,) stay with the garbler.
    ``decoding`` (n_outputs, N) permute bits of the output wires -- sent to the evaluator.
    ``tweak_start`` and ``nonce`` place its hash tweaks in the garbling session (public).
    """

    circuit: Circuit
    n: int
    tables: np.ndarray
    zero_labels: np.ndarray
    delta: np.ndarray
    decoding: np.ndarray
    aes_calls: int
    tweak_start: int = 0
    nonce: np.uint64 = np.uint64(0)

def _tweaks(c: Circuit, gates: np.ndarray, n: int, start: int) -> tuple[np.ndarray, np.ndarray]:
    """Unique tweaks j, j' per (AND gate, instance), counted from ``start`` (the tweaks of
    earlier chunks of the session come before)."""
    base = (c.and_index[gates][:, None] * n + np.arange(n)[None, :]).astype(np.uint64) * 2
    base += np.uint64(start)
    return base, base + np.uint64(1)


def tweaks_used(c: Circuit, n: int) -> int:
    """How many tweaks garbling ``n`` instances of ``c`` uses (two per AND gate and instance)."""
    return 2 * c.n_and * n


def _session_nonce(rng: np.random.Generator | None) -> np.uint64:
    """A random 64-bit word from the labels' source (the OS CSPRNG unless ``rng``)."""
    return _random_blocks((), rng)[0]

def garble(c: Circuit, n: int, rng: np.random.Generator | None = None, tweak_start: int = 0,
           nonce: np.uint64 | None = None) -> GarbledCircuit:
    """Garble ``n`` instances of ``c`` (half-gates). ``rng=None`` draws labels (and the session
    nonce) from os.urandom; pass a Generator only for reproducible demonstrations. The tweaks
    run from ``tweak_start`` under the session ``nonce`` (drawn here if None); the evaluator
    needs both (:attr:`GarbledCircuit.tweak_start`, :attr:`GarbledCircuit.nonce`)."""
    if n < 1:
        raise ValueError(f"number of circuit instances n must be >= 1, got {n}")
    if tweak_start < 0 or tweak_start + tweaks_used(c, n) > 2**64:
        raise ValueError(f"tweak_start must be in [0, 2^64 - {tweaks_used(c, n)}], got "
                         f"{tweak_start}")
    if nonce is None:
        nonce = _session_nonce(rng)
    aes = _FixedKeyAES()
    delta = _random_blocks((), rng)
    delta[0] |= np.uint64(1)  # lsb(Delta) = 1 for point-and-permute
    W = np.zeros((c.n_wires, n, 2), dtype=np.uint64)
    inputs = np.concatenate([c.garbler_inputs, c.evaluator_inputs])
    W[inputs] = _random_blocks((inputs.size, n), rng)
    tables = np.zeros((c.n_and, n, 2, 2), dtype=np.uint64)
    for xi, ni, ai in c.levels:  # loop over circuit levels; all gates x instances at once
        W[c.out[xi]] = W[c.a[xi]] ^ W[c.b[xi]]
        W[c.out[ni]] = W[c.a[ni]] ^ delta
        if ai.size == 0:
            continue
        Wa0, Wb0 = W[c.a[ai]], W[c.b[ai]]  # (G, n, 2)
        pa, pb = _lsb_mask(Wa0), _lsb_mask(Wb0)
        j, j2 = _tweaks(c, ai, n, tweak_start)
        H = aes.hash(np.stack([Wa0, Wa0 ^ delta, Wb0, Wb0 ^ delta]),
                     np.stack([j, j, j2, j2]), nonce)
        HA0, HA1, HB0, HB1 = H
        TG = HA0 ^ HA1 ^ (delta & pb)  # generator half gate
        WG0 = HA0 ^ (TG & pa)
        TE = HB0 ^ HB1 ^ Wa0  # evaluator half gate
        WE0 = HB0 ^ ((TE ^ Wa0) & pb)
        W[c.out[ai]] = WG0 ^ WE0
        tables[c.and_index[ai], :, 0] = TG
        tables[c.and_index[ai], :, 1] = TE
    decoding = _lsb(W[c.outputs]).astype(np.uint8)
    return GarbledCircuit(c, n, tables, W, delta, decoding, aes.calls, tweak_start,
                          np.uint64(nonce))

def input_labels(gc: GarbledCircuit, wires: np.ndarray, bits: np.ndarray) -> np.ndarray:
    """Active labels W^0 ^ bit * Delta for the given input wires (garbler side / OT result)."""
    bits = np.asarray(bits, dtype=np.uint8)
    if bits.shape != (len(wires), gc.n):
        raise ValueError(f"input bits must have shape ({len(wires)}, {gc.n}), got {bits.shape}")
    return gc.zero_labels[wires] ^ np.where(bits[..., None].astype(bool), gc.delta, np.uint64(0))

def evaluate(c: Circuit, tables: np.ndarray, garbler_labels: np.ndarray,
             evaluator_labels: np.ndarray, tweak_start: int = 0,
             nonce: int = 0) -> tuple[np.ndarray, int]:
    """Evaluate n instances from active input labels with the garbling's tweaks (its
    ``tweak_start`` and session ``nonce``, public); returns (output labels, AES calls)."""
    n = tables.shape[1]
    aes = _FixedKeyAES()
    W = np.zeros((c.n_wires, n, 2), dtype=np.uint64)
    W[c.garbler_inputs] = garbler_labels
    W[c.evaluator_inputs] = evaluator_labels
    for xi, ni, ai in c.levels:
        W[c.out[xi]] = W[c.a[xi]] ^ W[c.b[xi]]
        W[c.out[ni]] = W[c.a[ni]]
        if ai.size == 0:
            continue
        Wa, Wb = W[c.a[ai]], W[c.b[ai]]
        sa, sb = _lsb_mask(Wa), _lsb_mask(Wb)
        j, j2 = _tweaks(c, ai, n, tweak_start)
        HA, HB = aes.hash(np.stack([Wa, Wb]), np.stack([j, j2]), nonce)
        T = tables[c.and_index[ai]]
        WG = HA ^ (T[:, :, 0] & sa)
        WE = HB ^ ((T[:, :, 1] ^ Wa) & sb)
        W[c.out[ai]] = WG ^ WE
    return W[c.outputs], aes.calls

def decode(output_labels: np.ndarray, decoding: np.ndarray) -> np.ndarray:
    """Output bits = lsb(label) ^ decoding bit."""
    return (_lsb(output_labels).astype(np.uint8) ^ decoding).astype(np.uint8)

def garble_and_evaluate(c: Circuit, garbler_bits: np.ndarray, evaluator_bits: np.ndarray,
                        label_rng: np.random.Generator | None = None, chunk: int = 2048,
                        keep: bool = False) -> tuple[np.ndarray, dict]:
    """Both sides of ``n`` instances of ``c``: the garbler garbles (in chunks of ``chunk``
    instances, each with its own ``Delta``), the evaluator gets the labels of its bits (the
    OT's output; its cost is booked by the caller) and of the garbler's, evaluates and
    decodes. ``garbler_bits`` / ``evaluator_bits``: ``(inputs, n)`` 0/1. Returns the output
    bits ``(outputs, n)`` and measured seconds and AES calls per side; ``keep=True`` (a
    recorded transcript) also keeps, under ``info["sent"]``, the bytes the garbler sent, as a
    list with one ``bytes`` per chunk, in order: ``"tables"``, ``"share_labels"`` (the active
    labels of its inputs other than the mask), ``"mask_labels"`` (those of its last
    ``outputs`` inputs, the output mask ``r`` of the toolkit's circuits) and ``"decoding"``
    (packed bits)."""
    n = garbler_bits.shape[1]
    if evaluator_bits.shape[1] != n:
        raise ValueError(f"garbler and evaluator bits must cover the same {n} instances, got "
                         f"{evaluator_bits.shape[1]}")
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk}")
    out = np.empty((c.outputs.size, n), dtype=np.uint8)
    info = {"garble_s": 0.0, "evaluate_s": 0.0, "garble_aes": 0, "evaluate_aes": 0}
    sent: dict[str, list[bytes]] = {"tables": [], "share_labels": [], "mask_labels": [],
                                    "decoding": []}
    n_share = c.garbler_inputs.size - c.outputs.size  # the mask r: the last garbler inputs
    nonce, tweak = _session_nonce(label_rng), 0  # tweaks unique across the whole session
    for j0 in range(0, n, chunk):
        sl = slice(j0, min(n, j0 + chunk))
        t0 = time.perf_counter()
        gc = garble(c, sl.stop - sl.start, label_rng, tweak, nonce)  # garbler
        tweak += tweaks_used(c, gc.n)
        info["garble_s"] += time.perf_counter() - t0
        ev_labels = input_labels(gc, c.evaluator_inputs, evaluator_bits[:, sl])  # via OT
        gb_labels = input_labels(gc, c.garbler_inputs, garbler_bits[:, sl])
        t0 = time.perf_counter()
        labels, calls = evaluate(c, gc.tables, gb_labels, ev_labels, gc.tweak_start,
                                 gc.nonce)  # evaluator
        out[:, sl] = decode(labels, gc.decoding)
        info["evaluate_s"] += time.perf_counter() - t0
        info["garble_aes"] += gc.aes_calls
        info["evaluate_aes"] += calls
        if keep:
            sent["tables"].append(np.ascontiguousarray(gc.tables).tobytes())
            sent["share_labels"].append(np.ascontiguousarray(gb_labels[:n_share]).tobytes())
            sent["mask_labels"].append(np.ascontiguousarray(gb_labels[n_share:]).tobytes())
            sent["decoding"].append(np.packbits(gc.decoding).tobytes())
    if keep:
        info["sent"] = sent  # per field, one ``bytes`` per chunk (not joined)
    return out, info

# ----------------------------------------------------------------------------- costs
@dataclass(frozen=True)
class GCCost:
    """Exact per-instance communication of one garbled-circuit evaluation (bits)."""

    tables: int
    garbler_labels: int
    ot_receiver: int
    ot_sender: int
    decoding: int
    #: the part of ``garbler_labels`` that encodes the garbler's output mask r (one label per
    #: output wire); known in preprocessing
    mask_labels: int = 0

    @property
    def total(self) -> int:
        return self.tables + self.garbler_labels + self.ot_receiver + self.ot_sender + \
            self.decoding

    @property
    def evaluator_storage(self) -> int:
        """What the evaluator keeps after preprocessing: tables, its labels, decoding bits."""
        return self.tables + self.ot_sender // 2 + self.decoding

    @property
    def share_labels(self) -> int:
        """Labels of the garbler's share of the input (its inputs other than the mask r)."""
        return self.garbler_labels - self.mask_labels

    @property
    def online_delphi_relu(self) -> int:
        """Delphi's ReLU protocol online (Mishra et al. 2020, §4; ``online_server_protocol``
        of its code): only the labels of the server's share; the client decodes locally."""
        return self.share_labels

    @property
    def offline_delphi_relu(self) -> int:
        """Delphi's ReLU preprocessing: garbled tables and decoding bits, the labels of the
        server's mask r, and the IKNP OT of the client's labels -- everything but
        :attr:`online_delphi_relu` (the two add up to :attr:`total`)."""
        return self.total - self.online_delphi_relu

    @property
    def evaluator_storage_delphi_relu(self) -> int:
        """What the client keeps after Delphi's ReLU preprocessing: :attr:`evaluator_storage`
        plus the labels of the server's mask r received offline."""
        return self.evaluator_storage + self.mask_labels

def gc_cost(c: Circuit, kappa: int = KAPPA) -> GCCost:
    """Communication of one instance of ``c`` under the module's cost model."""
    return GCCost(tables=2 * kappa * c.n_and,
                  garbler_labels=kappa * c.garbler_inputs.size,
                  ot_receiver=kappa * c.evaluator_inputs.size,
                  ot_sender=2 * kappa * c.evaluator_inputs.size,
                  decoding=c.outputs.size,
                  mask_labels=kappa * c.outputs.size)

# ----------------------------------------------------------------------------- booking
@dataclass(frozen=True)
class GCWire:
    """What the garbler of ``n`` circuit instances sent, as bytes, one per chunk in order
    (``info["sent"]`` of :func:`garble_and_evaluate` with ``keep=True``): the garbled tables
    (two 128-bit ciphertexts per AND gate and instance), the active labels of its share
    inputs, those of its output mask ``r`` (128 bits each) and the output decoding bits
    (packed). A recording ledger hashes the chunks in order, never joined."""

    tables: list[bytes]
    share_labels: list[bytes]
    mask_labels: list[bytes]
    decoding: list[bytes]

    @property
    def garbler_labels(self) -> list[bytes]:
        """The labels of all the garbler's inputs, chunk by chunk: its share, then r."""
        return [s + m for s, m in zip(self.share_labels, self.mask_labels)]


def book_delphi_split(ledger: Ledger, n: int, circuit: Circuit,
                      parties=("client", "server"), wire: GCWire | None = None) -> None:
    """Book ``n`` instances of ``circuit`` as Delphi's ReLU protocol sends them (Mishra et
    al. 2020, §4; the server garbles, the client evaluates) -- the one booking of that split,
    used by :func:`gc_relu` (Tabula's baseline), the ``delphi_gc`` family
    (:func:`ppnn.protocols.gc_act.book_gc`) and Tabula's counter
    (:func:`ppnn.protocols.tabula.network.count_network`).

    Preprocessing (booked offline), two rounds: the client's IKNP OT columns for its share
    (fixed by the linear layer's preprocessing); then the OT answers, the garbled tables, the
    labels of the server's output mask ``r`` (drawn in preprocessing) and the output
    decoding bits. Online, one round: the labels of the server's share only
    (:attr:`GCCost.online_delphi_relu`); the client evaluates and decodes locally.

    On a ledger that records values, ``wire`` (from :func:`garble_and_evaluate` with
    ``keep=True``) gives the garbler's messages their bytes; without it, and for the OT (not
    run: the simulator hands over the chosen labels), messages are recorded ``SIZE_ONLY``."""
    n = int(n)
    if n < 0:
        raise ValueError(f"number of instances n must be >= 0, got {n}")
    client, server = parties
    cost = gc_cost(circuit)
    tables = mask = share = decoding = SIZE_ONLY
    if wire is not None and ledger.records_values:
        tables, mask, share, decoding = (wire.tables, wire.mask_labels, wire.share_labels,
                                         wire.decoding)
    with ledger.offline():
        with ledger.round():
            ledger.send(client, server, n * cost.ot_receiver,
                        "IKNP OT: receiver columns (client's share fixed offline)",
                        value=SIZE_ONLY)
        with ledger.round():
            ledger.send(server, client, n * cost.ot_sender, "IKNP OT: 2 masked labels per bit",
                        value=SIZE_ONLY)
            ledger.send(server, client, n * cost.tables, "garbled tables (2 per AND)",
                        value=tables)
            ledger.send(server, client, n * cost.mask_labels, "labels of r", value=mask)
            ledger.send(server, client, n * cost.decoding, "output decoding bits",
                        value=decoding)
        ledger.count("garble", n * circuit.n_and, server)
        ledger.count("ot", n * circuit.evaluator_inputs.size, client)
    with ledger.round():
        ledger.send(server, client, n * cost.online_delphi_relu, "labels of x_s", value=share)
    ledger.count("and_gate", n * circuit.n_and, client)


# ----------------------------------------------------------------------------- protocol
def gc_relu(x: AdditiveShares, ledger: Ledger, rng: np.random.Generator,
            parties=("client", "server"), label_rng: np.random.Generator | None = None,
            circuit: Circuit | None = None, chunk: int = 2048, split: str = "online"
            ) -> tuple[AdditiveShares, dict]:
    """ReLU of b-bit additive shares with a real garbled circuit (server garbles).

    Steps: (1) the server draws its output mask r and garbles the ReLU circuit for every
    element; (2) the client obtains the labels of its share bits by OT (IKNP cost booked;
    the simulator hands over the chosen labels); (3) the server sends the garbled tables, the
    labels of r and the decoding bits; (4) it sends the labels of its share; (5) the client
    evaluates and decodes ``z = ReLU(x) - r``. Output shares: client z, server r (over the
    same ring Z_2^b). ``r`` comes from the OS CSPRNG
    (:func:`ppnn.core.randomness.mask_source`), not from ``rng``.

    ``split="delphi"`` (Tabula's baseline, Tabula §4: Delphi, Mishra et al. 2020 §4): steps
    1-3 are preprocessing (booked offline: the client's share is fixed by the linear layer's
    preprocessing, r by the server's), online only step 4, one round of ``b kappa`` bits per
    element. ``split="online"`` (default; GAZELLE-style, as
    :func:`ppnn.protocols.gc_act.book_gc` books it): all of it online in two rounds. Both
    book the same messages in total (:attr:`GCCost.total`).

    Returns the output shares and a dict of measured times (s) and AES call counts.
    Elements are garbled in batches of ``chunk`` (each batch with its own Delta).
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")

    if not isinstance(x, AdditiveShares) or x.n_parties != 2:
        raise ValueError("gc_relu takes 2-party AdditiveShares")
    ring: Ring = x.ring
    b = _check_bits(ring.k)
    c = circuit or relu_circuit(b)
    if c.evaluator_inputs.size != b or c.outputs.size != b:
        raise ValueError(f"circuit does not match {b}-bit shares")
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy.random.Generator (seed it explicitly)")
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk}")
    client, server = parties
    n = int(np.prod(x.shape, dtype=np.int64))
    xc, xs = x.shares[0].reshape(-1), x.shares[1].reshape(-1)
    # server's output share: it hides ReLU(x) in a real garbled circuit -> OS CSPRNG
    r = mask_source(rng, real=True).integers(0, np.iinfo(np.uint64).max, size=n,
                                              dtype=np.uint64, endpoint=True) & ring.mask

    keep = split == "delphi" and ledger.records_values
    out, t = garble_and_evaluate(c, np.concatenate([bits_of(xs, b), bits_of(r, b)]),
                                 bits_of(xc, b), label_rng, chunk, keep=keep)  # 1., 4., 5.
    if split == "delphi":
        book_delphi_split(ledger, n, c, parties, GCWire(**t.pop("sent")) if keep else None)
    else:
        cost = gc_cost(c)
        with ledger.round():  # 2. OT extension: client's column messages
            ledger.send(client, server, n * cost.ot_receiver, "IKNP OT: receiver columns")
        with ledger.round():  # 3.-4. OT answers + garbled tables + server labels + decoding
            ledger.send(server, client, n * cost.ot_sender, "IKNP OT: 2 masked labels per bit")
            ledger.send(server, client, n * cost.tables, "garbled tables (2 per AND)")
            ledger.send(server, client, n * cost.garbler_labels, "labels of x_s and r")
            ledger.send(server, client, n * cost.decoding, "output decoding bits")
        ledger.count("garble", n * c.n_and, server)
        ledger.count("and_gate", n * c.n_and, server)
        ledger.count("ot", n * b, client)
    z = from_bits(out)
    shares = np.stack([z, r]).reshape(2, *x.shape)
    info = {**t, "n": n, "and_gates": c.n_and}
    return AdditiveShares(shares, ring), info
