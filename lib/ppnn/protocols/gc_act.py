"""Garbled-circuit activation layers for the HE-GC families (Delphi, GAZELLE, GALA).

Built from the public pieces of :mod:`ppnn.he.gc` (``CircuitBuilder``, ``garble``,
``input_labels``, ``evaluate``, ``decode``, ``gc_cost``). One circuit instance per activation
output does, on k-bit additive shares (client = evaluator, server = garbler):

1. ``x_j = c_j + s_j mod 2^k`` for the ``m`` inputs of a max-pool window (``m = 1``: no pool);
2. ``v = max_j x_j`` (signed; ``m - 1`` comparators);
3. ``y = ReLU(v) >> d`` -- ReLU and the fixed-point truncation together, exact (a floor of a
   non-negative value is a wire selection; ``max`` and ``floor`` commute with ReLU);
4. ``z = y - r mod 2^k`` with the server's fresh mask ``r``: the client learns ``z``, the
   server keeps ``r`` -- shares of the output.

This is Delphi's garbled ReLU (Mishra et al. 2020, §4.2: the GC computes ReLU and the
truncation of the linear layer's shares and re-shares the result) with the following max-pool
folded into the same circuit (MiniONN / Delphi evaluate ReLU + max-pool in one GC).

AND gates per instance (XOR and NOT are free), checked against the built circuit by the tests:
``m (k - 1)`` adders + ``(m - 1) (2k - 1)`` comparators + ``k - 1 - d`` selects
+ ``k - 1`` for the mask subtraction (:func:`act_and_gates`).

Bookings (:func:`book_gc`), sizes from :func:`ppnn.he.gc.gc_cost`:

* ``split="delphi"``: the client's inputs are its shares of the linear layer's output, which
  Delphi's preprocessing fixes offline -- OT, garbled tables and decoding bits move offline;
  online the server sends only the labels of its own inputs (``GCCost.online_delphi``);
* ``split="online"``: everything online in two rounds (OT request; answers, tables, labels,
  decoding), exactly as :func:`ppnn.he.gc.gc_relu` books it (GAZELLE-style, and the GALA
  module's projections).
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass

import numpy as np

from ppnn.core import Ledger
from ppnn.he import gc as gcmod

__all__ = ["ActSpec", "act_circuit", "act_and_gates", "garbled_activation", "book_gc",
           "plain_act", "SPLITS"]

SPLITS = ("delphi", "online")


def _full_add(cb: gcmod.CircuitBuilder, a: int, b: int, c: int) -> tuple[int, int]:
    """Sum and carry of a + b + c: one AND (carry = c ^ ((a ^ c) & (b ^ c)))."""
    t = cb.xor(a, c)
    return cb.xor(t, b), cb.xor(c, cb.and_(t, cb.xor(b, c)))


def _add(cb, x: list[int], y: list[int]) -> list[int]:
    """x + y mod 2^k, LSB first, ripple carry: k - 1 ANDs."""
    out, c = [cb.xor(x[0], y[0])], cb.and_(x[0], y[0])
    for i in range(1, len(x)):
        if i == len(x) - 1:
            out.append(cb.xor(cb.xor(x[i], y[i]), c))
        else:
            s, c = _full_add(cb, x[i], y[i], c)
            out.append(s)
    return out


def _sub(cb, x: list[int], y: list[int]) -> list[int]:
    """x - y = x + NOT y + 1 mod 2^k: k - 1 ANDs."""
    out = [cb.xor(x[0], y[0])]
    c = cb.not_(cb.and_(cb.not_(x[0]), y[0]))  # carry out of bit 0: x0 OR NOT y0
    for i in range(1, len(x)):
        ny = cb.not_(y[i])
        if i == len(x) - 1:
            out.append(cb.xor(cb.xor(x[i], ny), c))
        else:
            s, c = _full_add(cb, x[i], ny, c)
            out.append(s)
    return out


def _max(cb, a: list[int], b: list[int]) -> list[int]:
    """Signed max(a, b) for |a|, |b| < 2^(k-2): a - b (k - 1 ANDs), then a select (k ANDs)."""
    ge = cb.not_(_sub(cb, a, b)[-1])  # a >= b
    return [cb.xor(bi, cb.and_(ge, cb.xor(ai, bi))) for ai, bi in zip(a, b)]


@dataclass(frozen=True)
class ActSpec:
    """One garbled activation: shares mod ``2^k`` (``p = None``) or mod a prime ``p``
    (``k = p.bit_length()``), truncation ``d``, window size ``m``, optional clip bound."""

    k: int
    d: int = 0
    m: int = 1
    p: int | None = None
    clip: int | None = None

    def __post_init__(self) -> None:
        for name in ("k", "d", "m"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | np.integer):
                raise TypeError(f"{name} must be an int, got {type(v).__name__}")
        if self.p is not None:
            if isinstance(self.p, bool) or not isinstance(self.p, int) or self.p < 3:
                raise ValueError(f"p must be an int >= 3 or None, got {self.p!r}")
            if self.k != int(self.p).bit_length():
                raise ValueError(f"k must be p.bit_length() = {int(self.p).bit_length()} for "
                                 f"p = {self.p}, got {self.k}")
        if not 4 <= self.k <= 64 - (self.p is not None):
            raise ValueError(f"share bits k must be in 4..64, got {self.k}")
        if not 0 <= self.d <= self.k - 2:
            raise ValueError(f"truncation d must be in 0..{self.k - 2}, got {self.d}")
        if not 1 <= self.m <= 64:
            raise ValueError(f"window size m must be in 1..64, got {self.m}")
        if self.clip is not None and not 0 < self.clip < 1 << (self.k - 1):
            raise ValueError(f"clip must be in 1..2^{self.k - 1} - 1, got {self.clip}")

    @property
    def modulus(self) -> int:
        return self.p if self.p is not None else 1 << self.k


def act_and_gates(spec: ActSpec) -> int:
    """Closed form: AND gates of :func:`act_circuit` for ``spec``."""
    k, d, m = spec.k, spec.d, spec.m
    if spec.p is None:
        return m * (k - 1) + (m - 1) * (2 * k - 1) + (k - 1 - d) + (k - 1)
    w = k + 1  # signed internal width
    per_input = (w - 1) + (w - 1) + w + (w - 1) + (w - 1) + w  # add, -p, mux, centre
    clip = (w - 1) + w if spec.clip is not None else 0
    return m * per_input + (m - 1) * (2 * w - 1) + (w - 1 - d) + clip + (w - 1) + (w - 1) + w


def _const(cb, zero: int, one: int, value: int, width: int) -> list[int]:
    return [one if (value >> i) & 1 else zero for i in range(width)]


def _mux(cb, cond: int, a: list[int], b: list[int]) -> list[int]:
    """cond ? a : b, one AND per bit."""
    return [cb.xor(bi, cb.and_(cond, cb.xor(ai, bi))) for ai, bi in zip(a, b)]


@functools.cache
def act_circuit(spec: ActSpec) -> gcmod.Circuit:
    """``z = min(ReLU(max_j (c_j + s_j)) >> d, clip) - r`` mod ``2^k`` or mod ``p``.

    Mod ``p`` the shares are first added and reduced (``c + s - p`` when that is >= 0) and
    centred to signed values in ``(-p/2, p/2]`` on ``k + 1`` bits (GAZELLE's ReLU circuit);
    the mask subtraction adds ``p`` back when it goes negative. Evaluator (client) inputs:
    ``c_1 .. c_m``; garbler (server) inputs: ``s_1 .. s_m`` then ``r``; outputs: ``z`` (k wires,
    to the client). LSB first."""
    if not isinstance(spec, ActSpec):
        raise TypeError(f"spec must be an ActSpec, got {type(spec).__name__}")
    k, d, m, p = spec.k, spec.d, spec.m, spec.p
    cb = gcmod.CircuitBuilder()
    cs = [cb.inputs(k) for _ in range(m)]
    ss = [cb.inputs(k) for _ in range(m)]
    r = cb.inputs(k)
    zero = cb.xor(cs[0][0], cs[0][0])  # constant wires (free gates)
    one = cb.not_(zero)
    if p is None:
        w = k
        xs = [_add(cb, c, s) for c, s in zip(cs, ss)]
    else:
        w = k + 1
        P = _const(cb, zero, one, p, w)
        H = _const(cb, zero, one, p // 2 + 1, w)
        xs = []
        for c, s in zip(cs, ss):
            t = _add(cb, c + [zero], s + [zero])  # c + s < 2p (k + 1 bits)
            u = _sub(cb, t, P)
            x = _mux(cb, u[-1], t, u)  # t < p ? t : t - p
            neg = cb.not_(_sub(cb, x, H)[-1])  # x > p / 2: a negative value
            xs.append(_mux(cb, neg, _sub(cb, x, P), x))
    while len(xs) > 1:  # pairwise tree of comparators
        xs = [_max(cb, xs[i], xs[i + 1]) for i in range(0, len(xs) - 1, 2)] + (
            [xs[-1]] if len(xs) % 2 else [])
    v = xs[0]
    keep = cb.not_(v[w - 1])  # NOT sign
    y = [cb.and_(v[j + d], keep) if j + d <= w - 2 else zero for j in range(w)]
    if spec.clip is not None:
        C = _const(cb, zero, one, spec.clip, w)
        y = _mux(cb, _sub(cb, y, C)[-1], y, C)  # y < clip ? y : clip
    if p is None:
        z = _sub(cb, y, r)
    else:
        u = _sub(cb, y, r + [zero])
        z = _mux(cb, u[-1], _add(cb, u, P), u)[:k]  # u < 0 ? u + p : u
    return cb.build([wi for s in ss for wi in s] + r, [wi for c in cs for wi in c], z)


def plain_act(values: np.ndarray, spec: ActSpec) -> np.ndarray:
    """The oracle: ``min(ReLU(max over the last axis) >> d, clip)`` on signed integers."""
    v = np.maximum(np.asarray(values, dtype=np.int64).max(axis=-1), 0) >> spec.d
    return np.minimum(v, spec.clip) if spec.clip is not None else v


def _random_mod(rng: np.random.Generator, modulus: int, n: int) -> np.ndarray:
    if modulus == 1 << 64:
        return rng.integers(0, np.iinfo(np.uint64).max, size=n, dtype=np.uint64, endpoint=True)
    return rng.integers(0, modulus, size=n, dtype=np.uint64)


def garbled_activation(client: np.ndarray, server: np.ndarray, spec: ActSpec,
                       rng: np.random.Generator, label_rng: np.random.Generator | None = None,
                       chunk: int = 1024) -> tuple[np.ndarray, np.ndarray, dict]:
    """Run the circuit for real: the server garbles, the client evaluates.

    ``client`` / ``server``: ``(n, m)`` shares mod ``spec.modulus`` (uint64). Returns the
    client's output share ``z``, the server's mask ``r`` (both ``(n,)``, ``z + r = y`` mod the
    modulus) and measured seconds ``{"garble_s", "evaluate_s"}``. Labels come from
    ``os.urandom`` unless ``label_rng``; ``rng`` draws the mask (outputs are deterministic per
    ``rng``).
    """
    client = np.asarray(client, dtype=np.uint64)
    server = np.asarray(server, dtype=np.uint64)
    if client.ndim != 2 or client.shape != server.shape or client.shape[1] != spec.m:
        raise ValueError(f"client and server shares must both be (n, {spec.m}), got "
                         f"{client.shape} and {server.shape}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy.random.Generator (seed it explicitly)")
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk}")
    if spec.p is not None and (client.max(initial=0) >= spec.p or
                               server.max(initial=0) >= spec.p):
        raise ValueError(f"shares must be residues mod p = {spec.p}")
    n, m, k = client.shape[0], spec.m, spec.k
    c = act_circuit(spec)
    r = _random_mod(rng, spec.modulus, n)
    z = np.empty(n, dtype=np.uint64)
    t_g = t_e = 0.0
    for j0 in range(0, n, chunk):  # batches of instances (memory), each its own garbling
        sl = slice(j0, min(n, j0 + chunk))
        t0 = time.perf_counter()
        g = gcmod.garble(c, sl.stop - sl.start, label_rng)  # server
        t_g += time.perf_counter() - t0
        ev_bits = np.concatenate([gcmod.bits_of(client[sl, j], k) for j in range(m)])
        gb_bits = np.concatenate([gcmod.bits_of(server[sl, j], k) for j in range(m)]
                                 + [gcmod.bits_of(r[sl], k)])
        client_labels = gcmod.input_labels(g, c.evaluator_inputs, ev_bits)  # via OT
        server_labels = gcmod.input_labels(g, c.garbler_inputs, gb_bits)
        t0 = time.perf_counter()
        out, _ = gcmod.evaluate(c, g.tables, server_labels, client_labels)  # client
        z[sl] = gcmod.from_bits(gcmod.decode(out, g.decoding))
        t_e += time.perf_counter() - t0
    return z, r, {"garble_s": t_g, "evaluate_s": t_e}


def book_gc(ledger: Ledger, n: int, circuit: gcmod.Circuit, split: str,
            parties=("client", "server")) -> None:
    """Book ``n`` instances of ``circuit`` (see the module docstring for the two splits)."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    n = int(n)
    if n < 0:
        raise ValueError(f"number of instances n must be >= 0, got {n}")
    client, server = parties
    cost = gcmod.gc_cost(circuit)
    if split == "delphi":
        with ledger.offline():
            with ledger.round():
                ledger.send(client, server, n * cost.ot_receiver,
                            "IKNP OT: receiver columns (client's share fixed offline)")
            with ledger.round():
                ledger.send(server, client, n * (cost.ot_sender + cost.tables + cost.decoding),
                            "OT answers, garbled tables, decoding bits")
            ledger.count("garble", n * circuit.n_and, server)
            ledger.count("ot", n * circuit.evaluator_inputs.size, client)
        ledger.send(server, client, n * cost.online_delphi, "labels of the server's inputs")
        ledger.count("and_gate", n * circuit.n_and, client)
        return
    with ledger.round():
        ledger.send(client, server, n * cost.ot_receiver, "IKNP OT: receiver columns")
    with ledger.round():
        ledger.send(server, client, n * (cost.ot_sender + cost.tables + cost.garbler_labels
                                         + cost.decoding), "OT answers, tables, labels")
    ledger.count("garble", n * circuit.n_and, server)
    ledger.count("and_gate", n * circuit.n_and, server)
    ledger.count("ot", n * circuit.evaluator_inputs.size, client)
