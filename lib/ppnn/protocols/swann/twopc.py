"""The 2PC side of SwaNN: ABY-style arithmetic and Boolean (GMW) sharing between two parties.

SwaNN runs its non-linear layers in ABY [Demmler et al. 2015] with 32-bit shares (§5):

* **arithmetic sharing** over Z_2^k with Beaver multiplication -- used for ``x²`` in the
  hybrid setting;
* **Boolean sharing** (XOR shares, one AND gate = one Beaver bit triple) -- used for the
  comparisons of ReLU and max-pool.

Boolean values are *bit-sliced*: an m-bit vector of shape ``S`` is an :class:`XorShares` with
``k = 1`` and shape ``(m, *S)`` (bit 0 first), so all gates of one circuit level run as one
numpy call and one communication round. The circuits are the size-optimal ones
(ripple-carry: one AND per bit), stated with their AND counts:

=====================================  ===========================
circuit                                AND gates per value
=====================================  ===========================
A2B of the low ``m`` bits              ``m - 1``
ReLU on ``m`` bits                     ``m - 1``  (``x ∧ ¬msb``)
``a < b`` on ``m``-bit signed values   ``m``
``max(a, b)``                          ``2m``  (comparison + mux)
adder with carry-out, ``m`` bits       ``m``
=====================================  ===========================

**Offline cost.** Online, every AND costs each party 2 bits and every multiplication 2k bits
(the core Beaver routines book those). The triples themselves come from OT extension, as ABY
generates them; this module books their cost from the stated model :class:`OTCostModel`
instead of a trusted dealer's.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

import numpy as np

from ...core import Ledger, Ring
from ...core import bits as core_bits
from ...core.beaver import beaver_and, beaver_mul
from ...core.dealer import Dealer
from ...core.randomness import check_source
from ...core.sharing import AdditiveShares, XorShares
from ...core.timing import Timings
from ...core.transcript import SIZE_ONLY

__all__ = ["OTCostModel", "TwoPC", "bits_of", "from_bits", "bits_to_ints", "ints_to_bits"]


@dataclass(frozen=True)
class OTCostModel:
    """Offline communication of ABY's multiplication triples from IKNP OT extension.

    * a Boolean (AND) triple uses **2 random OTs** on 1-bit strings; with IKNP each costs the
      OT receiver one ``κ``-bit column: ``2κ`` bits per triple, ``κ`` sent by each party
      [ABY §III-B; Asharov et al. 2013];
    * an arithmetic triple in Z_2^ℓ uses **2ℓ correlated OTs** on ℓ-bit strings (Gilboa's
      multiplication, one per bit of each party's factor); each costs a ``κ``-bit column plus
      an ℓ-bit correction: ``2ℓ(κ + ℓ)`` bits per triple, half sent by each party.

    ``kappa`` is the symmetric security parameter of the OT extension (128 in ABY).
    """

    kappa: int = 128

    def __post_init__(self) -> None:
        if not isinstance(self.kappa, int) or self.kappa < 1:
            raise ValueError(f"kappa must be a positive int, got {self.kappa}")

    def and_triple_bits(self) -> int:
        return 2 * self.kappa

    def arith_triple_bits(self, ell: int) -> int:
        return 2 * ell * (self.kappa + ell)

    def ots_per_and(self) -> int:
        return 2

    def ots_per_arith(self, ell: int) -> int:
        return 2 * ell


def _bit(x: XorShares, i: int) -> XorShares:
    """Bit ``i`` of a bit-sliced sharing."""
    return XorShares(x.shares[:, i], 1)


def bits_of(values: np.ndarray, m: int) -> np.ndarray:
    """Low ``m`` bits of uint64 ``values`` as a ``(m, *shape)`` uint64 0/1 array (bit 0 first)."""
    return core_bits.bits_of(values, m, axis=0, dtype=np.uint64)


def from_bits(bits: np.ndarray) -> np.ndarray:
    """Inverse of :func:`bits_of` for up to 64 bits: ``Σ_j bits[j] 2^j`` as uint64."""
    return core_bits.from_bits(bits, axis=0)


class TwoPC:
    """Two-party ABY-style engine, simulated in one process, every message on ``ledger``.

    Parameters
    ----------
    ledger : Ledger
    parties : (str, str)
        Share order: ``shares[0]`` belongs to ``parties[0]``. In SwaNN the first is the
        party that helps (client, or the other server), the second the evaluating server.
    rng : numpy.random.Generator or SecureRandom
        Randomness of the shares and of the triples.
    ot : OTCostModel
        How the offline triple generation is booked.
    timings : Timings, optional
        The simulator computes both parties' shares at once; half the elapsed time is booked
        to each party under the operation name ``"ABY"``.
    """

    def __init__(self, ledger: Ledger, parties, rng: np.random.Generator,
                 ot: OTCostModel | None = None, timings: Timings | None = None):
        parties = tuple(parties)
        if len(parties) != 2:
            raise ValueError(f"2PC needs exactly two parties, got {parties}")
        for p in parties:
            if p not in ledger.parties:
                raise ValueError(f"party {p!r} is not on the ledger {ledger.parties}")
        check_source(rng)
        self.ledger, self.parties, self.rng = ledger, parties, rng
        self.ot = ot or OTCostModel()
        self.timings = timings
        # the dealer only *produces* correct triples; their cost is booked by the OT model
        # (its scratch ledger never keeps values, whatever the enclosing run records)
        self._scratch = Ledger(parties, record_values=False)
        self.dealer = Dealer(rng, self._scratch, parties)

    # -- bookkeeping ----------------------------------------------------------------------
    @contextlib.contextmanager
    def timed(self):
        """Book the block's wall time half to each party as ``ABY``."""
        if self.timings is None:
            yield
            return
        t0 = time.perf_counter()
        try:
            yield
        finally:
            dt = time.perf_counter() - t0
            for p in self.parties:
                self.timings.add(p, "ABY", dt / 2)

    def _offline_and(self, n_gates: int) -> None:
        if n_gates <= 0:
            return
        with self.ledger.offline(), self.ledger.round():
            a, b = self.parties
            self.ledger.send(a, b, n_gates * self.ot.kappa, "OT extension: AND triples",
                             value=SIZE_ONLY)
            self.ledger.send(b, a, n_gates * self.ot.kappa, "OT extension: AND triples",
                             value=SIZE_ONLY)
        for p in self.parties:
            self.ledger.count("ot", n_gates * self.ot.ots_per_and() // 2, p)
        self.ledger.count("and_gate", n_gates)

    def _offline_mul(self, n: int, ell: int) -> None:
        if n <= 0:
            return
        half = n * self.ot.arith_triple_bits(ell) // 2
        with self.ledger.offline(), self.ledger.round():
            a, b = self.parties
            self.ledger.send(a, b, half, f"OT extension: {ell}-bit arithmetic triples",
                             value=SIZE_ONLY)
            self.ledger.send(b, a, half, f"OT extension: {ell}-bit arithmetic triples",
                             value=SIZE_ONLY)
        for p in self.parties:
            self.ledger.count("ot", n * self.ot.ots_per_arith(ell) // 2, p)
        self.ledger.count("Mult", n)

    # -- sharing of private inputs ------------------------------------------------------
    def input_bits(self, owner: str, bits: np.ndarray, what: str) -> XorShares:
        """``owner`` XOR-shares its private bits ``(m, ...)`` and sends the other share."""
        if owner not in self.parties:
            raise ValueError(f"owner {owner!r} is not one of {self.parties}")
        bits = np.asarray(bits, dtype=np.uint64)
        other = self.parties[1 - self.parties.index(owner)]
        mask = self.rng.integers(0, 2, size=bits.shape, dtype=np.uint64)
        mask = self.ledger.transmit(owner, other, bits.size, what, mask)  # the other's share
        shares = np.stack([mask, bits ^ mask] if owner == self.parties[1]
                          else [bits ^ mask, mask])
        return XorShares(shares, 1)

    def local_bits(self, owner: str, bits: np.ndarray) -> XorShares:
        """Bits of ``owner``'s own share as a sharing with a zero share for the other party
        (no message: used by A2B, where each party inputs its own arithmetic share)."""
        bits = np.asarray(bits, dtype=np.uint64)
        zero = np.zeros_like(bits)
        return XorShares(np.stack([bits, zero] if owner == self.parties[0] else [zero, bits]), 1)

    @staticmethod
    def public_bits(bits: np.ndarray) -> XorShares:
        bits = np.asarray(bits, dtype=np.uint64)
        return XorShares(np.stack([bits, np.zeros_like(bits)]), 1)

    # -- gates ----------------------------------------------------------------------------
    def and_(self, a: XorShares, b: XorShares) -> XorShares:
        """All ANDs of ``a & b`` (same shape) in one round, from OT-generated bit triples."""
        n = int(np.prod(a.shape, dtype=np.int64))
        self._offline_and(n)
        with self.timed():
            return beaver_and(a, b, self.dealer, self.ledger)

    def mul(self, x: AdditiveShares, y: AdditiveShares) -> AdditiveShares:
        """Arithmetic product (Beaver), one round."""
        self._offline_mul(int(np.prod(x.shape, dtype=np.int64)), x.ring.k)
        with self.timed():
            return beaver_mul(x, y, self.dealer, self.ledger)

    def square(self, x: AdditiveShares) -> AdditiveShares:
        return self.mul(x, x)

    # -- circuits -------------------------------------------------------------------------
    def add(self, a: XorShares, b: XorShares, carry_out: bool = False,
            carry_in: int = 0) -> XorShares:
        """Ripple-carry adder of two m-bit sharings: ``m − 1`` ANDs (``m`` with carry-out).

        ``s_i = a_i ⊕ b_i ⊕ c_i``, ``c_{i+1} = c_i ⊕ ((a_i ⊕ c_i) ∧ (b_i ⊕ c_i))``; one
        round per bit position. The result has ``m`` bits (``m + 1`` with ``carry_out``).
        """
        a._compatible(b)
        m = a.shape[0]
        c = XorShares(np.zeros((2, *a.shape[1:]), dtype=np.uint64), 1) ^ np.uint64(carry_in)
        out = []
        for i in range(m):
            ai, bi = _bit(a, i), _bit(b, i)
            out.append(ai ^ bi ^ c)
            if i < m - 1 or carry_out:
                c = c ^ self.and_(ai ^ c, bi ^ c)
        if carry_out:
            out.append(c)
        return XorShares(np.stack([o.shares for o in out], axis=1), 1)

    def a2b(self, x: AdditiveShares, m: int) -> XorShares:
        """Boolean sharing of the low ``m`` bits of ``x`` (each party inputs its own share's
        bits, then one adder): ``m − 1`` ANDs."""
        if x.n_parties != 2:
            raise ValueError("A2B is a two-party conversion")
        if not 1 <= m <= x.ring.k:
            raise ValueError(f"m must be in 1..{x.ring.k}, got {m}")
        a = self.local_bits(self.parties[0], bits_of(x.shares[0], m))
        b = self.local_bits(self.parties[1], bits_of(x.shares[1], m))
        return self.add(a, b)

    def less_than(self, a: XorShares, b: XorShares) -> XorShares:
        """``[a < b]`` for m-bit two's-complement values: the sign of ``a − b`` computed on
        ``m + 1`` bits; only the carry chain is needed (``m`` ANDs)."""
        a._compatible(b)
        m = a.shape[0]
        # a − b = a + ¬b + 1 on m+1 bits (sign-extended); sign = a_m ⊕ ¬b_m ⊕ c_m
        nb = b ^ np.uint64(1)
        c = XorShares(np.zeros((2, *a.shape[1:]), dtype=np.uint64), 1) ^ np.uint64(1)
        for i in range(m):
            ai, bi = _bit(a, i), _bit(nb, i)
            c = c ^ self.and_(ai ^ c, bi ^ c)
        return _bit(a, m - 1) ^ _bit(nb, m - 1) ^ c

    def mux(self, s: XorShares, a: XorShares, b: XorShares) -> XorShares:
        """``s ? b : a`` bitwise: ``a ⊕ (s ∧ (a ⊕ b))`` (m ANDs, one round)."""
        m = a.shape[0]
        sb = XorShares(np.broadcast_to(s.shares[:, None], (2, m, *s.shape)).copy(), 1)
        return a ^ self.and_(sb, a ^ b)

    def maximum(self, a: XorShares, b: XorShares) -> XorShares:
        """Elementwise ``max(a, b)`` of signed m-bit values: ``2m`` ANDs."""
        return self.mux(self.less_than(a, b), a, b)

    def relu(self, x: XorShares) -> XorShares:
        """``max(x, 0)``: every bit ANDed with ``¬msb`` (the msb of the result is 0):
        ``m − 1`` ANDs in one round."""
        m = x.shape[0]
        pos = _bit(x, m - 1) ^ np.uint64(1)
        low = XorShares(x.shares[:, : m - 1], 1)
        sb = XorShares(np.broadcast_to(pos.shares[:, None], (2, m - 1, *pos.shape)).copy(), 1)
        kept = self.and_(low, sb)
        zero = np.zeros((2, 1, *x.shape[1:]), dtype=np.uint64)
        return XorShares(np.concatenate([kept.shares, zero], axis=1), 1)

    def max_pool(self, x: XorShares, windows: np.ndarray) -> XorShares:
        """Max over each row of ``windows`` (positions in the flattened value axis), as a
        tree of pairwise maxima (``k² − 1`` maxima per window, ``⌈log₂ k²⌉`` levels)."""
        windows = np.asarray(windows)
        m = x.shape[0]
        flat = XorShares(x.shares.reshape(2, m, -1), 1)
        cur = [XorShares(flat.shares[:, :, windows[:, j]], 1) for j in range(windows.shape[1])]
        while len(cur) > 1:
            pairs = len(cur) // 2
            a = XorShares(np.concatenate([cur[2 * i].shares for i in range(pairs)], axis=2), 1)
            b = XorShares(np.concatenate([cur[2 * i + 1].shares for i in range(pairs)], axis=2),
                          1)
            mx = self.maximum(a, b)
            n = windows.shape[0]
            nxt = [XorShares(mx.shares[:, :, i * n:(i + 1) * n], 1) for i in range(pairs)]
            if len(cur) % 2:
                nxt.append(cur[-1])
            cur = nxt
        return cur[0]

    def b2a(self, x: XorShares, ring: Ring) -> AdditiveShares:
        """Boolean → arithmetic for m-bit two's-complement values (ABY's B2A, m C-OTs).

        ``x = Σ_j w_j (a_j + b_j − 2 a_j b_j)`` with ``w_j = 2^j`` (``−2^{m−1}`` for the sign
        bit), where ``a_j`` / ``b_j`` are the two parties' share bits. Each product ``a_j b_j``
        is one correlated OT: the evaluator (sender) picks ``s_j`` and offers
        ``(s_j, s_j + b_j)``; the helper (receiver, choice ``a_j``) learns
        ``t_j = s_j + a_j b_j``. Booked as a precomputed random OT (``κ`` bits, offline) that
        is derandomized online (1 choice bit one way, one k-bit correction the other).
        """
        m, n = self._b2a_offline(x, ring)
        helper, evaluator = self.parties
        with self.ledger.round():
            # the random OTs are not simulated, so neither are their derandomization messages
            self.ledger.send(helper, evaluator, m * n, "B2A: OT choice bits", value=SIZE_ONLY)
            self.ledger.send(evaluator, helper, m * n * ring.k, "B2A: OT corrections",
                             value=SIZE_ONLY)
        with self.timed():
            a = x.shares[0].astype(np.uint64)                 # helper's bits   (m, ...)
            b = x.shares[1].astype(np.uint64)                 # evaluator's bits
            s = ring.random(self.rng, a.shape)                # sender's OT masks
            t = ring.add(s, a & b)                            # receiver's OT output
            return self._b2a_shares(a, b, t, s, ring)

    def _b2a_offline(self, x: XorShares, ring: Ring) -> tuple[int, int]:
        """B2A's width check and its offline part: ``m * n`` random OTs (``κ`` bits each)
        booked and counted. Returns ``(m, n)``: bits per value, values."""
        m = x.shape[0]
        if m > ring.k:
            raise ValueError(f"{m}-bit values do not fit {ring!r}")
        n = int(np.prod(x.shape[1:], dtype=np.int64))
        helper, evaluator = self.parties
        with self.ledger.offline(), self.ledger.round():
            self.ledger.send(helper, evaluator, m * n * self.ot.kappa, "B2A: random OTs",
                             value=SIZE_ONLY)
        for p in self.parties:
            self.ledger.count("ot", m * n // 2 if p == helper else m * n - m * n // 2, p)
        return m, n

    @staticmethod
    def _b2a_shares(a, b, t, s, ring: Ring) -> AdditiveShares:
        """The two arithmetic shares from the share bits ``a`` (helper), ``b`` (evaluator)
        and the OT outputs ``t = s + a b`` (helper) and ``s`` (evaluator):
        ``Σ_j w_j (a_j − 2 t_j)`` and ``Σ_j w_j (b_j + 2 s_j)``, ``w_j = 2^j`` (the sign bit
        ``−2^{m−1}``)."""
        m = a.shape[0]
        w = (np.uint64(1) << np.arange(m, dtype=np.uint64)).reshape((m,) + (1,) * (a.ndim - 1))
        w[m - 1] = ring.neg(w[m - 1])                         # sign bit weighs −2^{m−1}
        w = ring.reduce(w)
        two = np.uint64(2)
        helper_sh = ring.sum(ring.mul(w, ring.sub(a, ring.mul(two, t))), axis=0)
        eval_sh = ring.sum(ring.mul(w, ring.add(b, ring.mul(two, s))), axis=0)
        return AdditiveShares(np.stack([helper_sh, eval_sh]), ring)

    @staticmethod
    def truncate(x: XorShares, d: int) -> XorShares:
        """Arithmetic shift right by ``d`` (floor division by 2^d): drop the low bits, free."""
        if not 0 <= d < x.shape[0]:
            raise ValueError(f"truncation by d={d} bits must be in [0, {x.shape[0] - 1}]")
        return XorShares(x.shares[:, d:], 1)

    def reveal_bits(self, x: XorShares) -> np.ndarray:
        """Reconstruct a bit-sliced value (≤ 64 bits) in the simulator, signed (tests)."""
        v = from_bits(x.reveal())
        m = x.shape[0]
        ring = Ring(m)
        return ring.to_signed(ring.reduce(v))


def bits_to_ints(bits: np.ndarray) -> np.ndarray:
    """``(m, *shape)`` 0/1 bits (any m) → Python ints ``Σ_j bits[j] 2^j`` (object array)."""
    bits = np.asarray(bits, dtype=np.uint64)
    m = bits.shape[0]
    out = np.zeros(bits.shape[1:], dtype=object)
    for lo in range(0, m, 63):
        chunk = from_bits(bits[lo:lo + 63]).astype(object)
        out = out + (chunk * (1 << lo) if lo else chunk)
    return out


def ints_to_bits(values, m: int) -> np.ndarray:
    """Non-negative Python ints ``< 2^m`` → ``(m, *shape)`` uint64 bits (any m)."""
    arr = np.asarray(values, dtype=object)
    flat = [int(v) for v in arr.ravel()]
    if flat and (min(flat) < 0 or max(flat) >> m):
        raise ValueError(f"values must be in [0, 2^{m})")
    out = np.zeros((m, len(flat)), dtype=np.uint64)
    mask63 = (1 << 63) - 1
    for lo in range(0, m, 63):
        words = np.array([(v >> lo) & mask63 for v in flat], dtype=np.uint64)
        out[lo:lo + 63] = bits_of(words, min(63, m - lo))
    return out.reshape((m, *arr.shape))
