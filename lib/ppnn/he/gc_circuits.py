"""Boolean circuits for garbling: the builder, integer arithmetic, and the activation circuits.

* :class:`CircuitBuilder` builds a circuit gate by gate (XOR, AND, NOT) and levels it
  (:class:`Circuit`): each level is garbled and evaluated for all gates of the level and all
  instances at once by :mod:`ppnn.he.gc`.
* Integer blocks on LSB-first wire lists: ripple-carry :func:`add` / :func:`sub` (``k - 1``
  ANDs each), signed :func:`max_` (``2k - 1``), :func:`mux` (one AND per bit).
* **The activation circuit** -- one family for every garbled nonlinear layer of the toolkit
  (:func:`act_circuit`, parameters in :class:`ActSpec`): on additive shares mod ``2^k`` or mod a
  prime ``p`` (client = evaluator, server = garbler)

  1. ``x_j = c_j + s_j`` for the ``m`` inputs of a max-pool window (``m = 1``: no pool);
  2. ``v = max_j x_j`` (signed; ``m - 1`` comparators);
  3. ``y = min(ReLU(v) >> d, clip)`` -- ReLU and the fixed-point truncation together, exact;
  4. ``z = y - r`` with the server's fresh mask ``r``: the client learns ``z``, the server
     keeps ``r`` -- shares of the output.

  Delphi's garbled ReLU (Mishra et al. 2020, §4.2) with the max-pool folded in (MiniONN /
  Delphi evaluate ReLU + max-pool in one GC), GAZELLE's mod-p ReLU, and the plain b-bit ReLU
  Tabula compares with (:func:`relu_circuit` = ``act_circuit(ActSpec(b))``: ``3 (b - 1)``
  ANDs) are all this one circuit. AND gates in closed form: :func:`act_and_gates`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

__all__ = ["XOR", "AND", "NOT", "Circuit", "CircuitBuilder", "add", "sub", "max_", "mux",
           "const", "ActSpec", "act_circuit", "act_and_gates", "plain_act", "relu_circuit",
           "relu_and_gates", "quant_relu_circuit", "plain_quant_relu"]

XOR, AND, NOT = 0, 1, 2


@dataclass(frozen=True)
class Circuit:
    """A levelled Boolean circuit. Wire ids are ints; gates are parallel arrays."""

    n_wires: int
    garbler_inputs: np.ndarray
    evaluator_inputs: np.ndarray
    outputs: np.ndarray
    op: np.ndarray
    a: np.ndarray
    b: np.ndarray
    out: np.ndarray
    levels: tuple  # per level: (xor gate idx, not gate idx, and gate idx)
    and_index: np.ndarray  # position of each AND gate among the ANDs (-1 otherwise)

    @property
    def n_and(self) -> int:
        return int((self.op == AND).sum())

    @property
    def n_xor(self) -> int:
        return int((self.op == XOR).sum())

    @property
    def n_not(self) -> int:
        return int((self.op == NOT).sum())

    @property
    def depth(self) -> int:
        return len(self.levels)

class CircuitBuilder:
    """Build a circuit gate by gate (the adders' builders loop over bits once; garbling and
    evaluation work level by level on whole arrays)."""

    def __init__(self):
        self._n = 0
        self._gates: list[tuple[int, int, int, int]] = []

    def inputs(self, count: int) -> list[int]:
        ids = list(range(self._n, self._n + count))
        self._n += count
        return ids

    def _gate(self, op: int, a: int, b: int) -> int:
        out = self._n
        self._n += 1
        self._gates.append((op, a, b, out))
        return out

    def xor(self, a: int, b: int) -> int:
        return self._gate(XOR, a, b)

    def and_(self, a: int, b: int) -> int:
        return self._gate(AND, a, b)

    def not_(self, a: int) -> int:
        return self._gate(NOT, a, a)

    def build(self, garbler_inputs, evaluator_inputs, outputs) -> Circuit:
        g = np.array(self._gates, dtype=np.int64).reshape(-1, 4)
        op, a, b, out = g.T
        level = np.zeros(self._n, dtype=np.int64)
        for _ in range(len(g) + 1):  # relax all gates at once; converges after depth passes
            new = level.copy()
            new[out] = 1 + np.maximum(level[a], level[b])
            if np.array_equal(new, level):
                break
            level = new
        glev = level[out] if len(g) else np.zeros(0, np.int64)
        levels = tuple(
            (np.flatnonzero((glev == L) & (op == XOR)), np.flatnonzero((glev == L) & (op == NOT)),
             np.flatnonzero((glev == L) & (op == AND)))
            for L in range(1, int(glev.max(initial=0)) + 1))
        and_index = np.full(len(g), -1, dtype=np.int64)
        and_index[op == AND] = np.arange(int((op == AND).sum()))
        return Circuit(self._n, np.asarray(garbler_inputs, np.int64),
                       np.asarray(evaluator_inputs, np.int64), np.asarray(outputs, np.int64),
                       op, a, b, out, levels, and_index)


def _full_add(cb: CircuitBuilder, a: int, b: int, c: int) -> tuple[int, int]:
    """Sum and carry of a + b + c: one AND (carry = c ^ ((a ^ c) & (b ^ c)))."""
    t = cb.xor(a, c)
    return cb.xor(t, b), cb.xor(c, cb.and_(t, cb.xor(b, c)))


def add(cb, x: list[int], y: list[int]) -> list[int]:
    """x + y mod 2^k, LSB first, ripple carry: k - 1 ANDs."""
    out, c = [cb.xor(x[0], y[0])], cb.and_(x[0], y[0])
    for i in range(1, len(x)):
        if i == len(x) - 1:
            out.append(cb.xor(cb.xor(x[i], y[i]), c))
        else:
            s, c = _full_add(cb, x[i], y[i], c)
            out.append(s)
    return out


def sub(cb, x: list[int], y: list[int]) -> list[int]:
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


def max_(cb, a: list[int], b: list[int]) -> list[int]:
    """Signed max(a, b) for |a|, |b| < 2^(k-2): a - b (k - 1 ANDs), then a select (k ANDs)."""
    ge = cb.not_(sub(cb, a, b)[-1])  # a >= b
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
        if not 2 <= self.k <= 64 - (self.p is not None):
            raise ValueError(f"share bits k must be in 2..64, got {self.k}")
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


def const(cb, zero: int, one: int, value: int, width: int) -> list[int]:
    return [one if (value >> i) & 1 else zero for i in range(width)]


def mux(cb, cond: int, a: list[int], b: list[int]) -> list[int]:
    """cond ? a : b, one AND per bit."""
    return [cb.xor(bi, cb.and_(cond, cb.xor(ai, bi))) for ai, bi in zip(a, b)]


@functools.cache
def act_circuit(spec: ActSpec) -> Circuit:
    """``z = min(ReLU(max_j (c_j + s_j)) >> d, clip) - r`` mod ``2^k`` or mod ``p``.

    Mod ``p`` the shares are first added and reduced (``c + s - p`` when that is >= 0) and
    centred to signed values in ``(-p/2, p/2]`` on ``k + 1`` bits (GAZELLE's ReLU circuit);
    the mask subtraction adds ``p`` back when it goes negative. Evaluator (client) inputs:
    ``c_1 .. c_m``; garbler (server) inputs: ``s_1 .. s_m`` then ``r``; outputs: ``z`` (k wires,
    to the client). LSB first."""
    if not isinstance(spec, ActSpec):
        raise TypeError(f"spec must be an ActSpec, got {type(spec).__name__}")
    k, d, m, p = spec.k, spec.d, spec.m, spec.p
    cb = CircuitBuilder()
    cs = [cb.inputs(k) for _ in range(m)]
    ss = [cb.inputs(k) for _ in range(m)]
    r = cb.inputs(k)
    zero = cb.xor(cs[0][0], cs[0][0])  # constant wires (free gates)
    one = cb.not_(zero)
    if p is None:
        w = k
        xs = [add(cb, c, s) for c, s in zip(cs, ss)]
    else:
        w = k + 1
        P = const(cb, zero, one, p, w)
        H = const(cb, zero, one, p // 2 + 1, w)
        xs = []
        for c, s in zip(cs, ss):
            t = add(cb, c + [zero], s + [zero])  # c + s < 2p (k + 1 bits)
            u = sub(cb, t, P)
            x = mux(cb, u[-1], t, u)  # t < p ? t : t - p
            neg = cb.not_(sub(cb, x, H)[-1])  # x > p / 2: a negative value
            xs.append(mux(cb, neg, sub(cb, x, P), x))
    while len(xs) > 1:  # pairwise tree of comparators
        xs = [max_(cb, xs[i], xs[i + 1]) for i in range(0, len(xs) - 1, 2)] + (
            [xs[-1]] if len(xs) % 2 else [])
    v = xs[0]
    keep = cb.not_(v[w - 1])  # NOT sign
    y = [cb.and_(v[j + d], keep) if j + d <= w - 2 else zero for j in range(w)]
    if spec.clip is not None:
        C = const(cb, zero, one, spec.clip, w)
        y = mux(cb, sub(cb, y, C)[-1], y, C)  # y < clip ? y : clip
    if p is None:
        z = sub(cb, y, r)
    else:
        u = sub(cb, y, r + [zero])
        z = mux(cb, u[-1], add(cb, u, P), u)[:k]  # u < 0 ? u + p : u
    return cb.build([wi for s in ss for wi in s] + r, [wi for c in cs for wi in c], z)


def plain_act(values: np.ndarray, spec: ActSpec) -> np.ndarray:
    """The oracle: ``min(ReLU(max over the last axis) >> d, clip)`` on signed integers."""
    v = np.maximum(np.asarray(values, dtype=np.int64).max(axis=-1), 0) >> spec.d
    return np.minimum(v, spec.clip) if spec.clip is not None else v


def relu_circuit(b: int) -> Circuit:
    """ReLU on b-bit additive shares, re-shared with the garbler's mask r (LSB first):
    ``act_circuit(ActSpec(b))``. Evaluator input ``x_c`` (b wires); garbler ``x_s`` then ``r``;
    output ``z = ReLU(x_c + x_s) - r mod 2^b`` to the evaluator. ``3 (b - 1)`` ANDs."""
    return act_circuit(ActSpec(_check_bits(b)))


def relu_and_gates(b: int) -> int:
    """Closed form: AND gates of :func:`relu_circuit` (add, select, subtract: b - 1 each)."""
    return act_and_gates(ActSpec(_check_bits(b)))


def _check_bits(b) -> int:
    if not isinstance(b, int | np.integer) or isinstance(b, bool):
        raise TypeError(f"GC input bits b must be an int, got {type(b).__name__}")
    if not 2 <= int(b) <= 64:
        raise ValueError(f"GC input bits b must be in 2..64, got b={b}")
    return int(b)


def _or(cb, a: int, b: int) -> int:
    """a OR b = NOT (NOT a AND NOT b): one AND."""
    return cb.not_(cb.and_(cb.not_(a), cb.not_(b)))


@functools.cache
def quant_relu_circuit(b: int, k: int, t: int = 0) -> Circuit:
    """``z = rint(ReLU(c + s mod 2^b) * 2^t) - r mod 2^k``: a ReLU on b-bit quantized inputs
    whose output is re-shared in the ``2^k`` ring of the linear layers.

    The garbled counterpart of one Tabula ReLU table (``encode_table(relu, b, ...)`` with an
    output step ``2^-t`` times the input step): the same inputs, the same function, the
    same output. Evaluator (client) input ``c`` (b wires); garbler (server) ``s`` (b) then
    its mask ``r`` (k); output ``z`` (k wires, to the client), LSB first. ``t < 0`` rounds
    half to even, as ``numpy.rint`` does. AND gates: ``2 (b - 1) + (k - 1)``, plus
    ``b - 1`` for the rounding when ``t < 0`` (``b - 2`` at ``t = -(b - 1)``)."""
    b, k = _check_bits(b), _check_bits(k)
    if b > k:
        raise ValueError(f"input bits b must be <= ring bits k = {k}, got b={b}")
    if isinstance(t, bool) or not isinstance(t, int | np.integer) or not -(b - 1) <= t <= k - b:
        raise ValueError(f"output shift t must be an int in {-(b - 1)}..{k - b} for b={b}, "
                         f"k={k}, got {t!r}")
    cb = CircuitBuilder()
    c, s, r = cb.inputs(b), cb.inputs(b), cb.inputs(k)
    zero = cb.xor(c[0], c[0])
    v = add(cb, c, s)
    keep = cb.not_(v[b - 1])  # NOT sign
    y = [cb.and_(v[j], keep) for j in range(b - 1)]  # ReLU(v): b - 1 bits, non-negative
    if t >= 0:
        y = [zero] * t + y
    else:
        low, high = y[:-t], y[-t:]
        ties = low[:-1] + high[:1]  # round up past half, or at half to an even result
        up = zero
        if ties:
            acc = ties[0]
            for w in ties[1:]:
                acc = _or(cb, acc, w)
            up = cb.and_(low[-1], acc)
        y = []
        for w in high:  # high + up (the carry out stays below 2^(b - 1 + t))
            y.append(cb.xor(w, up))
            up = cb.and_(w, up)
        y.append(up)
    y = (y + [zero] * k)[:k]
    return cb.build(s + r, c, sub(cb, y, r))


def plain_quant_relu(c: np.ndarray, s: np.ndarray, b: int, t: int) -> np.ndarray:
    """The oracle of :func:`quant_relu_circuit` before the mask: ``rint(ReLU(q) 2^t)`` for
    the signed b-bit ``q = c + s mod 2^b``, as int64."""
    q = (np.asarray(c, np.uint64) + np.asarray(s, np.uint64)) & np.uint64((1 << b) - 1)
    q = q.astype(np.int64) - ((q >> np.uint64(b - 1)).astype(np.int64) << b)
    return np.rint(np.maximum(q, 0) * 2.0 ** t).astype(np.int64)
