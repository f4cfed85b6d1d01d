"""SHE's gate circuits on encrypted integers (she.txt §3.1-3.3, Fig. 2 and Fig. 3).

A :class:`Word` is an array of integers held bit by bit: ``planes[i]`` is one
:class:`~ppnn.he.bitsim.Bits` array with bit ``i`` (LSB first) of every element, so each gate
call works on that bit of *all* elements at once (one call per circuit level, never per
element). Signed words are two's complement; the top plane is the sign.

Circuits (gate counts are for fully encrypted inputs; :func:`closed_forms` has them all):

* :func:`add` -- ripple-carry adder; full-adder cell with a single AND
  (``t1 = a^c, t2 = b^c, s = t1^b, m = t1&t2, c' = c^m``), a half adder at bit 0.
  A widening w-bit add costs ``5w - 3`` gates and has multiplicative depth ``w``.
* :func:`accumulate` -- the **mixed-bitwidth accumulator** (Fig. 3c): an adder tree whose level
  n adds (b+n)-bit words. :func:`accumulate_fixed` is the baseline with one fixed width.
* :func:`shift_right` -- arithmetic shift by a public, per-element amount: *no gates*, the bits
  (and copies of the sign bit) are routed to their new positions (Fig. 3a).
* :func:`relu_unit` and :func:`max_unit` -- Fig. 2; :func:`relu_saturate` fuses the ReLU unit
  with the saturation back to a-bit activations; :func:`saturate_signed` clips signed words.
* :func:`multiply` -- an array multiplier (the TCN baseline's PC/CC multiplication).
* :func:`shift_accumulate` -- the power-of-two-weight dot product of §3.2:
  ``sum_i sign_i * (x_i >> e_i) + bias``; negative terms use the one's complement (free NOTs)
  and their ``+1`` corrections are folded into the public bias.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ppnn.he.bitsim import Bits, GateBackend

__all__ = [
    "Word", "encrypt_word", "decrypt_word", "constant_word", "word_range", "to_signed",
    "extend", "truncate", "shift_right", "shift_left", "gather", "ones_complement", "add",
    "add_constant", "accumulate", "accumulate_fixed", "less_than", "relu_unit",
    "relu_saturate", "saturate_signed", "max_unit", "max_reduce", "multiply",
    "shift_accumulate", "closed_forms",
]


@dataclass(frozen=True)
class Word:
    """Integers held as bit planes (LSB first); ``signed`` means two's complement."""

    planes: tuple[Bits, ...]
    signed: bool

    def __post_init__(self) -> None:
        if not self.planes:
            raise ValueError("a Word needs at least one bit plane")
        shape, be = self.planes[0].shape, self.planes[0].backend
        for i, p in enumerate(self.planes):
            if p.shape != shape or p.backend is not be:
                raise ValueError(f"plane {i} has shape {p.shape} / another backend; all planes "
                                 f"of a Word share shape {shape} and backend")

    @property
    def width(self) -> int:
        return len(self.planes)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.planes[0].shape

    @property
    def size(self) -> int:
        return self.planes[0].size

    @property
    def backend(self) -> GateBackend:
        return self.planes[0].backend

    @property
    def sign(self) -> Bits:
        if not self.signed:
            raise ValueError("an unsigned Word has no sign plane")
        return self.planes[-1]

    def md(self) -> int:
        """Multiplicative depth of the deepest bit."""
        return max(int(p.md.max(initial=0)) for p in self.planes)

    def gd(self) -> int:
        """Bootstrap depth of the deepest bit."""
        return max(int(p.gd.max(initial=0)) for p in self.planes)

    def __repr__(self) -> str:
        kind = "signed" if self.signed else "unsigned"
        return f"Word({kind}, width={self.width}, shape={self.shape}, md={self.md()})"


# ---------------------------------------------------------------------------------------------
# conversions
# ---------------------------------------------------------------------------------------------
def word_range(width: int, signed: bool) -> tuple[int, int]:
    """Smallest and largest integer a ``width``-bit word holds."""
    if signed:
        return -(1 << (width - 1)), (1 << (width - 1)) - 1
    return 0, (1 << width) - 1


def _check_width(width, what: str = "width", low: int = 1, high: int = 62) -> int:
    if isinstance(width, bool) or not isinstance(width, int | np.integer):
        raise TypeError(f"{what} must be an int in [{low}, {high}], got {type(width).__name__}")
    if not low <= width <= high:
        raise ValueError(f"{what} must be an int in [{low}, {high}], got {width}")
    return int(width)


def _to_bits(values, width: int, signed: bool, what: str) -> np.ndarray:
    v = np.asarray(values)
    if not np.issubdtype(v.dtype, np.integer):
        raise TypeError(f"{what} must be integers, got dtype {v.dtype}")
    v = v.astype(np.int64)
    lo, hi = word_range(width, signed)
    if v.size and (v.min() < lo or v.max() > hi):
        kind = "signed" if signed else "unsigned"
        raise ValueError(f"{what} must lie in [{lo}, {hi}] for a {width}-bit {kind} word, got "
                         f"values in [{v.min()}, {v.max()}] (bit-width overflow)")
    return ((v[None, ...] >> np.arange(width).reshape((-1,) + (1,) * v.ndim)) & 1).astype(
        np.uint8)


def _split(backend: GateBackend, bits: Bits, width: int, shape) -> tuple[Bits, ...]:
    n = int(np.prod(shape))
    return tuple(backend.take(bits, np.arange(i * n, (i + 1) * n).reshape(shape))
                 for i in range(width))


def encrypt_word(backend: GateBackend, values, width: int, signed: bool = True) -> Word:
    """Client: encrypt integers bit by bit (``width`` ciphertexts per integer)."""
    width = _check_width(width)
    bits = _to_bits(values, width, signed, "values")
    enc = backend.encrypt(bits)
    return Word(_split(backend, enc, width, bits.shape[1:]), signed)


def constant_word(backend: GateBackend, values, width: int, signed: bool = True) -> Word:
    """Server: public integers as constants of the backend (trivial or encrypted-zero copies)."""
    width = _check_width(width)
    bits = _to_bits(values, width, signed, "values")
    const = backend.constant(bits)
    return Word(_split(backend, const, width, bits.shape[1:]), signed)


def decrypt_word(backend: GateBackend, word: Word) -> np.ndarray:
    """Client: decrypt a word to int64 integers."""
    bits = backend.decrypt(backend.concat(list(word.planes))).reshape(
        (word.width,) + word.shape).astype(np.int64)
    weights = (np.int64(1) << np.arange(word.width, dtype=np.int64)).reshape(
        (-1,) + (1,) * len(word.shape))
    if word.signed:
        weights[-1] = -weights[-1]
    return (bits * weights).sum(axis=0)


def _zero_plane(word: Word) -> Bits:
    return word.backend.zeros(word.shape)


def to_signed(word: Word) -> Word:
    """Unsigned -> signed by appending a constant 0 sign plane (no gates)."""
    if word.signed:
        return word
    return Word(word.planes + (_zero_plane(word),), True)


def extend(word: Word, width: int) -> Word:
    """Sign- (or zero-) extend to ``width`` planes by copying the sign plane (no gates)."""
    width = _check_width(width, "width", word.width)
    if width == word.width:
        return word
    fill = word.sign if word.signed else _zero_plane(word)
    return Word(word.planes + (fill,) * (width - word.width), word.signed)


def truncate(word: Word, width: int) -> Word:
    """Keep the low ``width`` planes (modular reduction; the caller guarantees the range)."""
    width = _check_width(width, "width", 1, word.width)
    return Word(word.planes[:width], word.signed)


def _per_element(amount, shape, what: str) -> np.ndarray:
    a = np.asarray(amount)
    if not np.issubdtype(a.dtype, np.integer):
        raise TypeError(f"{what} must be integers, got dtype {a.dtype}")
    a = np.broadcast_to(a.astype(np.int64), shape)
    if a.size and a.min() < 0:
        raise ValueError(f"{what} must be >= 0, got {a.min()}")
    return a


def shift_right(word: Word, amount) -> Word:
    """Arithmetic right shift by public per-element amounts (Fig. 3a): floor(x / 2^amount).

    No gates: output bit i of element j is input bit ``min(i + amount_j, top)``, where the top
    is the sign plane (copied into the vacated positions) or, for unsigned words, a constant 0.
    """
    be = word.backend
    amt = _per_element(amount, word.shape, "amount")
    if not amt.any():
        return word
    w = word.width
    pool_planes = list(word.planes) + ([] if word.signed else [_zero_plane(word)])
    top = len(pool_planes) - 1
    pool = be.concat(pool_planes)
    n = word.size
    elem = np.arange(n).reshape(word.shape)
    planes = tuple(be.take(pool, np.minimum(i + amt, top) * n + elem) for i in range(w))
    return Word(planes, word.signed)


def shift_left(word: Word, amount: int) -> Word:
    """x * 2^amount: ``amount`` constant-0 planes below (the word grows; no gates)."""
    amount = _check_width(amount, "amount", 0)
    if amount == 0:
        return word
    return Word((_zero_plane(word),) * amount + word.planes, word.signed)


def gather(word: Word, index) -> Word:
    """Route elements: ``out[j] = word.flat[index[j]]`` (im2col, pooling windows; no gates)."""
    idx = np.asarray(index)
    return Word(tuple(p.take(idx) for p in word.planes), word.signed)


def ones_complement(word: Word, mask=None) -> Word:
    """Bitwise NOT where ``mask`` (all elements if None): ``-x - 1`` for signed words. Free."""
    be = word.backend
    if mask is None:
        return Word(tuple(be.not_(p) for p in word.planes), word.signed)
    m = np.broadcast_to(np.asarray(mask, bool), word.shape)
    if not m.any():
        return word
    n = word.size
    sel = np.arange(n).reshape(word.shape) + n * m
    return Word(tuple(be.take(be.concat([p, be.not_(p)]), sel) for p in word.planes),
                word.signed)


# ---------------------------------------------------------------------------------------------
# adders
# ---------------------------------------------------------------------------------------------
def _same_words(x: Word, y: Word) -> None:
    if x.backend is not y.backend:
        raise ValueError("x and y belong to different keys/backends")
    if x.width != y.width or x.signed != y.signed or x.shape != y.shape:
        raise ValueError(f"x and y must have equal width, signedness and shape; got {x!r} and "
                         f"{y!r} (use extend() to align widths)")


def add(x: Word, y: Word, carry_in: int = 0, widen: bool = True) -> Word:
    """Ripple-carry adder ``x + y + carry_in`` (she.txt §3.3 "TFHE adder").

    Cells (``c`` the carry into bit i):
    ``t1 = a ^ c; t2 = b ^ c; s = t1 ^ b; m = t1 & t2; c' = c ^ m`` -- one AND per bit, so the
    carry chain adds one multiplicative level per bit. Bit 0 has no carry in: a half adder
    ``s = a ^ b, c' = a & b`` (or, with ``carry_in=1``, ``s = xnor(a, b), c' = a | b``).
    ``widen=True`` returns ``width + 1`` planes (the exact sum; the top is ``s ^ m`` for signed,
    the carry for unsigned words); ``widen=False`` returns the sum modulo ``2^width``.
    """
    _same_words(x, y)
    if carry_in not in (0, 1):
        raise ValueError(f"carry_in must be 0 or 1, got {carry_in!r}")
    be = x.backend
    w = x.width
    a, b = x.planes[0], y.planes[0]
    # bit 0: half adder (no carry in) or its carry-in-1 twin
    if carry_in == 0:
        s = be.xor(a, b)
    else:
        s = be.xnor(a, b)
    if w == 1 and not widen:
        return Word((s,), x.signed)
    if carry_in == 0:
        m = be.and_(a, b)
        c = m
    else:
        c = be.or_(a, b)
    out: list[Bits] = [s]
    if w == 1:  # top bit of the exact sum of two 1-bit words
        if not x.signed:
            out.append(c)
        else:  # a, b in {0, -1}: negative iff a|b (carry_in 0) or a&b (carry_in 1)
            out.append(be.xor(s, m) if carry_in == 0 else be.and_(a, b))
        return Word(tuple(out), x.signed)
    for i in range(1, w):
        a, b = x.planes[i], y.planes[i]
        last = i == w - 1
        if last and not widen:
            out.append(be.xor(be.xor(a, b), c))
            break
        t1 = be.xor(a, c)
        t2 = be.xor(b, c)
        s = be.xor(t1, b)
        m = be.and_(t1, t2)
        out.append(s)
        if last:  # exact sum: sign = a^b^c_out = s^m (signed); carry c^m (unsigned)
            out.append(be.xor(s, m) if x.signed else be.xor(c, m))
        else:
            c = be.xor(c, m)
    return Word(tuple(out), x.signed)


def add_constant(x: Word, k) -> Word:
    """``x + k`` for public per-element integers ``k`` (a bias): one adder with a constant word.

    Both operands are sign-extended to ``max(width(x), width(k))`` and added with a widening
    adder, so the result is exact. With ``public_constants`` the constant bits are trivial
    ciphertexts and tfhe-rs's shortcuts remove most gates; otherwise it costs a full adder.
    """
    if not x.signed:
        x = to_signed(x)
    k = np.broadcast_to(np.asarray(k, np.int64), x.shape)
    if not np.any(k):
        return x
    w = max(x.width, _bits_for(int(k.min())), _bits_for(int(k.max())))
    return add(extend(x, w), constant_word(x.backend, k, w, signed=True), widen=True)


def _bits_for(v: int) -> int:
    """Signed width holding v."""
    v = int(v)
    return (v.bit_length() + 1) if v >= 0 else ((-v - 1).bit_length() + 1)


def _counts(counts, shape, what: str = "counts") -> np.ndarray:
    k, rest = shape[0], shape[1:]
    if counts is None:
        return np.full(rest, k, np.int64)
    c = np.asarray(counts)
    if not np.issubdtype(c.dtype, np.integer):
        raise TypeError(f"{what} must be integers, got dtype {c.dtype}")
    c = np.broadcast_to(c.astype(np.int64), rest)
    if c.size and (c.min() < 0 or c.max() > k):
        raise ValueError(f"{what} must lie in [0, {k}] (rows of the leading axis), got "
                         f"[{c.min()}, {c.max()}]")
    return c


def _tree_reduce(values: Word, counts, combine, grow: bool) -> Word:
    """Reduce axis 0 with a binary tree per column, pairing adjacent rows (2i, 2i+1).

    Column j uses its first ``counts[j]`` rows; each level is ONE call of ``combine`` on all
    pairs of all columns (widths grow by one per level if ``grow``); an unpaired row moves up
    (sign-extended if ``grow``, free). Columns with no rows give 0.
    """
    cur = values
    c = _counts(counts, values.shape).reshape(-1)
    rest = values.shape[1:]
    n = c.size
    be = values.backend
    col = np.arange(n)
    while cur.shape[0] > 1:
        k = cur.shape[0]
        pairs = c // 2
        # flat positions (row * n + col) of the pairs and of the odd rows out
        pi = np.concatenate([np.arange(p) for p in pairs]) if pairs.sum() else np.zeros(0, int)
        pj = np.repeat(col, pairs)
        odd = np.flatnonzero(c % 2)
        width = cur.width + (1 if grow else 0)
        parts: list[Word] = []
        if pi.size:
            left = gather(cur, (2 * pi) * n + pj)
            parts.append(combine(left, gather(cur, (2 * pi + 1) * n + pj)))
        if odd.size:
            single = gather(cur, (c[odd] - 1) * n + odd)
            parts.append(extend(single, width) if grow else single)
        # new layout: row i of column j = pair i (i < pairs_j), the odd row (i == pairs_j), else 0
        k2 = (k + 1) // 2
        c2 = (c + 1) // 2
        n_pairs, n_odd = int(pi.size), int(odd.size)
        filler = n_pairs + n_odd
        index = np.full((k2, n), filler, np.int64)
        index[pi, pj] = np.arange(n_pairs)
        index[pairs[odd], odd] = n_pairs + np.arange(n_odd)
        signed = parts[0].signed if parts else cur.signed
        zero = be.zeros((1,))
        planes = tuple(
            be.take(be.concat([w.planes[b] for w in parts] + [zero]), index.reshape((k2,) + rest))
            for b in range(width))
        cur = Word(planes, signed)
        c = c2
    return Word(tuple(p.reshape(rest) for p in cur.planes), cur.signed)


def accumulate(terms: Word, counts=None) -> Word:
    """Mixed-bitwidth accumulator (she.txt §3.3, Fig. 3c): sum over axis 0.

    Level n of the adder tree adds pairs of (b+n)-bit words with widening (b+n)-bit adders
    (b = ``terms.width``), so no adder is wider than the values it can hold; an odd word out is
    passed up sign-extended (free). ``K`` terms give a word of ``b + ceil(log2 K)`` planes and
    cost ``sum_n floor(K_n / 2) * (5 (b + n) - 3)`` gates (``K_{n+1} = ceil(K_n / 2)``).
    ``counts[j]`` (default: all rows) says how many leading rows column j sums.
    """
    if not terms.signed:
        terms = to_signed(terms)
    if len(terms.shape) < 1 or terms.shape[0] < 1:
        raise ValueError(f"terms must have a leading axis of length >= 1, got {terms.shape}")
    return _tree_reduce(terms, counts, lambda x, y: add(x, y, widen=True), grow=True)


def accumulate_fixed(terms: Word, width: int = 16, counts=None) -> Word:
    """Baseline accumulator: the same adder tree with every adder ``width`` bits (she.txt §3.3:
    "accumulating 5-bit shifted results through 16-bit TFHE adders"), modulo 2^width."""
    if not terms.signed:
        terms = to_signed(terms)
    width = _check_width(width, "width", terms.width)
    return _tree_reduce(extend(terms, width), counts, lambda x, y: add(x, y, widen=False),
                        grow=False)


# ---------------------------------------------------------------------------------------------
# comparison, ReLU, max (Fig. 2)
# ---------------------------------------------------------------------------------------------
def less_than(x: Word, y: Word) -> Bits:
    """Encrypted ``x < y`` from the borrow chain of ``x + ~y + 1`` (no sum bits computed).

    Unsigned: ``x < y`` iff there is no carry out. Signed: the sign of the exact difference,
    ``x_top ^ ~y_top ^ carry``.
    """
    _same_words(x, y)
    be = x.backend
    w = x.width
    c = None
    for i in range(w):
        a, nb = x.planes[i], be.not_(y.planes[i])
        last = i == w - 1
        if i == 0:
            if last and x.signed:  # 1-bit signed: x < y iff x = -1 and y = 0
                return be.and_(a, nb)
            c = be.or_(a, nb)  # carry of a + ~b + 1
            if last:
                return be.not_(c)
            continue
        t1 = be.xor(a, c)
        t2 = be.xor(nb, c)
        m = be.and_(t1, t2)
        if last and x.signed:
            # sign of the (w+1)-bit difference = a ^ ~b ^ c_out = (t1 ^ ~b) ^ m
            return be.xor(be.xor(t1, nb), m)
        c = be.xor(c, m)
    return be.not_(c)


def relu_unit(x: Word) -> Word:
    """The ReLU unit of Fig. 2: ``r_i = x_i AND NOT sign`` for the magnitude bits.

    Input: signed w-bit word. Output: unsigned (w-1)-bit word (ReLU values are >= 0, so the sign
    plane is dropped). ``w - 1`` AND gates, multiplicative depth 1.
    """
    if not x.signed:
        raise ValueError("relu_unit needs a signed word (the ReLU of an unsigned word is itself)")
    if x.width < 2:
        raise ValueError("relu_unit needs a width >= 2")
    be = x.backend
    k = x.width - 1
    ns = be.not_(x.sign)
    mags = be.concat(list(x.planes[:k]))
    nsk = be.concat([ns] * k)
    r = be.and_(mags, nsk)
    return Word(_split(be, r, k, x.shape), False)


def _or_reduce(be: GateBackend, planes: list[Bits]) -> Bits:
    """OR of a list of planes as a balanced tree (len-1 OR gates, depth ceil(log2 len))."""
    cur = list(planes)
    while len(cur) > 1:
        h = len(cur) // 2
        shape = cur[0].shape
        left = be.concat(cur[:h])
        right = be.concat(cur[h:2 * h])
        o = be.or_(left, right)
        nxt = list(_split(be, o, h, shape))
        if len(cur) % 2:
            nxt.append(cur[-1])
        cur = nxt
    return cur[0]


def relu_saturate(x: Word, out_bits: int) -> Word:
    """ReLU unit fused with saturation to an unsigned ``out_bits``-bit activation.

    ``r = min(max(x, 0), 2^out_bits - 1)``: with ``h`` magnitude bits above ``out_bits``,
    ``ovf = OR(x_high)`` (h-1 ORs), then ``r_i = (x_i OR ovf) AND NOT sign`` (2 gates per bit).
    """
    if not x.signed:
        raise ValueError("relu_saturate needs a signed word")
    out_bits = _check_width(out_bits, "out_bits")
    be = x.backend
    k = x.width - 1  # magnitude planes
    if k <= out_bits:
        r = relu_unit(x) if k >= 1 else None
        planes = (r.planes if r is not None else ()) + (be.zeros(x.shape),) * (out_bits - k)
        return Word(tuple(planes[:out_bits]), False)
    ovf = _or_reduce(be, list(x.planes[out_bits:k]))
    low = be.concat(list(x.planes[:out_bits]))
    v = be.or_(low, be.concat([ovf] * out_bits))
    r = be.and_(v, be.concat([be.not_(x.sign)] * out_bits))
    return Word(_split(be, r, out_bits, x.shape), False)


def saturate_signed(x: Word, out_bits: int) -> Word:
    """Clip a signed word to ``out_bits`` bits: ``min(max(x, -2^(b-1)), 2^(b-1) - 1)``.

    ``ovf = OR_i (x_i XOR sign)`` over the bits that must equal the sign, then
    ``r_i = MUX(ovf, NOT sign, x_i)`` for the low bits; the sign plane is kept.
    """
    if not x.signed:
        raise ValueError("saturate_signed needs a signed word")
    out_bits = _check_width(out_bits, "out_bits", 2)
    if x.width <= out_bits:
        return extend(x, out_bits)
    be = x.backend
    s = x.sign
    hi = list(x.planes[out_bits - 1:x.width - 1])
    n = len(hi)
    diff = be.xor(be.concat(hi), be.concat([s] * n))
    ovf = _or_reduce(be, list(_split(be, diff, n, x.shape)))
    k = out_bits - 1
    ns = be.not_(s)
    r = be.mux(be.concat([ovf] * k), be.concat([ns] * k), be.concat(list(x.planes[:k])))
    return Word(_split(be, r, k, x.shape) + (s,), True)


def max_unit(x: Word, y: Word) -> Word:
    """The max-pooling unit of Fig. 2: ``z = y if x < y else x`` -- a comparator then one MUX
    per bit."""
    _same_words(x, y)
    be = x.backend
    lt = less_than(x, y)
    w = x.width
    z = be.mux(be.concat([lt] * w), be.concat(list(y.planes)), be.concat(list(x.planes)))
    return Word(_split(be, z, w, x.shape), x.signed)


def max_reduce(values: Word, counts=None) -> Word:
    """Max over axis 0 as a tree of max units (K-1 units, ceil(log2 K) levels); ``counts[j]``
    leading rows per column (a padded pooling window has fewer)."""
    return _tree_reduce(values, counts, max_unit, grow=False)


# ---------------------------------------------------------------------------------------------
# multiplication (TCN baseline) and the shift-accumulate dot product (SHE)
# ---------------------------------------------------------------------------------------------
def multiply(x: Word, w: Word) -> Word:
    """Array multiplier: ``x`` (a bits, unsigned or signed) times signed ``w`` (bw >= 2 bits).

    ``x*w = sum_{j<bw-1} (x AND w_j) 2^j - (x AND w_top) 2^(bw-1)``: a*bw ANDs for the partial
    products (rows), bw-2 widening adders that add row j to the running sum's bits j.., and one
    subtractor for the sign row (``+ ~row + 1``). Unsigned ``x``: a-bit adders and an (a+1)-bit
    subtractor, ``a*bw + (bw-2)(5a-3) + 5a-1`` gates in all. The result is exact and signed.
    ``w`` may be encrypted (CC_Mult) or public constants (PC_Mult; with ``public_constants``
    tfhe-rs skips the gates on 0/1 bits).
    """
    if not w.signed or w.width < 2:
        raise ValueError("w must be a signed word of width >= 2")
    if x.shape != w.shape or x.backend is not w.backend:
        raise ValueError(f"x and w must share shape and backend, got {x.shape} and {w.shape}")
    be = x.backend
    a, bw = x.width, w.width
    xs = be.concat(list(x.planes))
    pp = []
    for j in range(bw):  # partial products: one AND call per weight bit over all x bits
        wj = be.concat([w.planes[j]] * a)
        pp.append(Word(_split(be, be.and_(xs, wj), a, x.shape), x.signed))
    acc = pp[0]
    for j in range(1, bw - 1):
        hi = Word(acc.planes[j:], x.signed)  # floor(acc / 2^j); the low j bits are final
        width = max(hi.width, a)
        s = add(extend(hi, width), extend(pp[j], width), widen=True)
        acc = Word(acc.planes[:j] + s.planes, x.signed)
    # subtract the sign row at bit bw-1, in signed arithmetic
    acc = to_signed(acc)
    hi = Word(acc.planes[bw - 1:], True)
    row = to_signed(pp[bw - 1])
    width = max(hi.width, row.width)
    diff = add(extend(hi, width), ones_complement(extend(row, width)), carry_in=1,
               widen=x.signed)
    return Word(acc.planes[:bw - 1] + diff.planes, True)


def shift_accumulate(x: Word, src, exponent, sign, bias=None, guard_bits: int = 0,
                     accumulator: str = "mixed", fixed_width: int = 16) -> Word:
    """Power-of-two-weight dot products (she.txt §3.2): ``out[j] = sum_k sign[j,k] *
    floor(x[src[j,k]] * 2^(guard_bits - exponent[j,k])) + bias[j]``.

    ``src[j, k]`` is a flat index into ``x`` or -1 for no term (a pruned weight or a padding
    position). Steps, all on encrypted bits:

    1. *route* the inputs of every output (no gates);
    2. *shift* each term right by its public exponent (Fig. 3a; no gates), after ``guard_bits``
       constant-0 planes below the input (``guard_bits = 0`` is the paper's b-bit term);
    3. *negate* terms with a negative weight by one's complement (free NOTs) and fold their
       ``+1`` into the public bias;
    4. *accumulate* with the mixed-bitwidth adder tree (``accumulator="fixed"``: the same tree
       of ``fixed_width``-bit adders);
    5. add the public bias (one adder with a constant word).
    """
    src = np.asarray(src)
    if src.ndim != 2:
        raise ValueError(f"src must be 2-D (outputs, terms), got shape {src.shape}")
    if not np.issubdtype(src.dtype, np.integer):
        raise TypeError(f"src must be integers, got dtype {src.dtype}")
    n_out, k = src.shape
    if src.size and (src.max() >= x.size or src.min() < -1):
        raise ValueError(f"src must lie in [-1, {x.size}) (flat indices into x, -1 for none)")
    exponent = _per_element(exponent, (n_out, k), "exponent")
    sign = np.broadcast_to(np.asarray(sign), (n_out, k))
    valid = src >= 0
    if not np.isin(sign[valid], (-1, 1)).all():
        raise ValueError("sign must hold only -1 and +1 (power-of-two weights are +-2^-e)")
    if accumulator not in ("mixed", "fixed"):
        raise ValueError(f"accumulator must be 'mixed' or 'fixed', got {accumulator!r}")
    bias = np.zeros(n_out, np.int64) if bias is None else np.broadcast_to(
        np.asarray(bias, np.int64), (n_out,))
    guard_bits = _check_width(guard_bits, "guard_bits", 0, 16)
    # valid terms first in every row (stable), so each output's tree uses rows 0..count-1
    order = np.argsort(~valid, axis=1, kind="stable")
    src = np.take_along_axis(np.where(valid, src, 0), order, 1)
    exponent = np.take_along_axis(exponent, order, 1)
    neg = np.take_along_axis(valid & (sign < 0), order, 1)
    counts = valid.sum(axis=1)
    if k == 0:
        return constant_word(x.backend, bias, max(2, _bits_for(int(bias.min(initial=0))),
                                                  _bits_for(int(bias.max(initial=0)))))
    # 1. route: terms laid out (K, n_out) so that the tree adds along axis 0
    terms = gather(x, src.T)
    # 2. shift
    terms = shift_right(shift_left(terms, guard_bits), exponent.T)
    terms = to_signed(terms)
    # 3. negate
    terms = ones_complement(terms, neg.T)
    corr = bias + neg.sum(axis=1)
    # 4. accumulate
    if accumulator == "mixed":
        acc = accumulate(terms, counts)
        # 5. bias
        return add_constant(acc, corr)
    acc = accumulate_fixed(terms, fixed_width, counts)
    return add(acc, constant_word(acc.backend, corr, acc.width, signed=True), widen=False)


# ---------------------------------------------------------------------------------------------
# closed forms (fully encrypted inputs, every gate bootstrapped)
# ---------------------------------------------------------------------------------------------
def closed_forms(w: int) -> dict[str, int]:
    """Gate counts and multiplicative depths of the basic units on w-bit encrypted inputs.

    Derived from the cells above (a test checks each against the simulator):
    widening add ``5w - 3`` gates (w >= 2), depth ``w``; modular add ``5w - 6`` (w >= 2);
    signed comparator ``4w - 2``, unsigned ``4w - 3``; ReLU unit ``w - 1`` gates, depth 1;
    max unit = comparator + ``w`` MUX (2 bootstraps each).
    """
    w = _check_width(w, "w", 2)
    return {
        "add_widen_gates": 5 * w - 3,
        "add_widen_md": w,
        "add_mod_gates": 5 * w - 6,
        "lt_signed_gates": 4 * w - 2,
        "lt_unsigned_gates": 4 * w - 3,
        "lt_signed_md": w,
        "relu_gates": w - 1,
        "relu_md": 1,
        "max_signed_gates": 4 * w - 2 + w,
        "max_signed_bootstraps": 4 * w - 2 + 2 * w,
        "max_signed_md": w + 1,
    }
