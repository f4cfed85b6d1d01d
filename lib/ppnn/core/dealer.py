"""A trusted dealer of correlated randomness, booked as *offline* communication.

The dealer stands in for the preprocessing phase (OT/HE-based triple generation in the papers).
Each item it hands out is booked as dealer -> party messages in the offline phase, one round
per request, so offline bytes can be reported beside online bytes. Papers that state their
own offline cost (e.g. Tabula's preprocessing) implement that protocol instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .ledger import Ledger
from .randomness import check_source
from .ring import Ring
from .sharing import (
    AdditiveShares,
    ReplicatedShares,
    XorShares,
    share_additive,
    share_xor,
)
from .transcript import Parts

__all__ = ["Dealer", "ReplicatedDealer", "BeaverTriple", "MatrixTriple", "TruncationPair",
           "BitTriple"]


@dataclass
class BeaverTriple:
    a: AdditiveShares
    b: AdditiveShares
    c: AdditiveShares  # c = a * b


@dataclass
class MatrixTriple:
    a: AdditiveShares  # (m, n)
    b: AdditiveShares  # (n, p)
    c: AdditiveShares  # a @ b


@dataclass
class TruncationPair:
    r: AdditiveShares       # random r
    r_trunc: AdditiveShares  # r >> d (arithmetic, as a signed value)
    d: int


@dataclass
class BitTriple:
    a: XorShares
    b: XorShares
    c: XorShares  # c = a & b


class Dealer:
    """Trusted third party producing correlated randomness for ``parties``.

    Parameters
    ----------
    rng : numpy.random.Generator or SecureRandom
        Source of the dealer's randomness (seeded by the caller, or the OS CSPRNG).
    ledger : Ledger
        Where the material is booked (offline, sender ``"dealer"``).
    parties : sequence of str
        The receiving parties, in share order.
    """

    def __init__(self, rng: np.random.Generator, ledger: Ledger, parties):
        check_source(rng)
        parties = tuple(parties)
        for p in parties:
            if p not in ledger.parties:
                raise ValueError(f"dealer party {p!r} is not on the ledger {ledger.parties}")
        if len(parties) < 2:
            raise ValueError("the dealer serves at least two parties")
        self.rng, self.ledger, self.parties = rng, ledger, parties
        self._queue: list[tuple[int, str, list | None]] = []

    def _values(self, *shared, names=None) -> list | None:
        """Per party, its components of ``shared`` (flattened, concatenated; ``names``: what
        each sharing is): what the dealer sends it -- only when the ledger records values."""
        if not self.ledger.records_values:
            return None
        return [Parts([s.shares[i] if hasattr(s, "shares") else s.components[i]
                       for s in shared], np.uint64, names) for i in range(len(self.parties))]

    def _book(self, bits_per_party: int, what: str, values: list | None = None) -> None:
        """Book material for every party, one offline round per request; asked for inside an
        open (online) round, the booking waits until :meth:`flush` after the round closes
        (a ledger cannot switch phase inside a round)."""
        self._queue.append((bits_per_party, what, values))
        if getattr(self.ledger, "_round_depth", 0) == 0:
            self.flush()

    def flush(self) -> None:
        """Book every request that waited for an online round to close."""
        queue, self._queue = self._queue, []
        for bits, what, values in queue:
            with self.ledger.offline(), self.ledger.round():
                for i, p in enumerate(self.parties):
                    self.ledger.send(Ledger.DEALER, p, bits, what,
                                     value=None if values is None else values[i])

    def _share(self, x, ring: Ring) -> AdditiveShares:
        return share_additive(x, ring, self.rng, len(self.parties))

    def triple(self, ring: Ring, shape) -> BeaverTriple:
        """Elementwise Beaver triple of ``shape``."""
        a, b = ring.random(self.rng, shape), ring.random(self.rng, shape)
        n = int(np.prod(shape, dtype=np.int64))
        t = BeaverTriple(self._share(a, ring), self._share(b, ring),
                         self._share(ring.mul(a, b), ring))
        self._book(3 * n * ring.bits, "beaver triple",
                   self._values(t.a, t.b, t.c, names=("a", "b", "c")))
        return t

    def matrix_triple(self, ring: Ring, shape_a, shape_b) -> MatrixTriple:
        """Matrix Beaver triple: A (m, n), B (n, p), C = A @ B."""
        shape_a, shape_b = tuple(shape_a), tuple(shape_b)
        if len(shape_a) != 2 or len(shape_b) != 2 or shape_a[1] != shape_b[0]:
            raise ValueError(f"matrix triple shapes do not chain: {shape_a} @ {shape_b}")
        a, b = ring.random(self.rng, shape_a), ring.random(self.rng, shape_b)
        c = ring.matmul(a, b)
        n = a.size + b.size + c.size
        t = MatrixTriple(self._share(a, ring), self._share(b, ring), self._share(c, ring))
        self._book(n * ring.bits, "matrix triple",
                   self._values(t.a, t.b, t.c, names=("A", "B", "C")))
        return t

    def truncation_pair(self, ring: Ring, shape, d: int, r_bits: int | None = None
                        ) -> TruncationPair:
        """(r, r >> d) with r uniform in [0, 2^r_bits) (default: the full ring)."""
        if not 0 < d < ring.k:
            raise ValueError(f"truncation by d={d} bits is outside 1..{ring.k - 1}")
        r_bits = ring.k if r_bits is None else r_bits
        if not d <= r_bits <= ring.k:
            raise ValueError(f"r_bits must be in [{d}, {ring.k}], got {r_bits}")
        r = ring.random(self.rng, shape) & np.uint64((1 << r_bits) - 1 if r_bits < 64
                                                       else np.iinfo(np.uint64).max)
        # arithmetic shift of the signed representative (ABY3-style pair)
        r_trunc = ring.reduce(ring.to_signed(r) >> d)
        n = int(np.prod(shape, dtype=np.int64))
        pair = TruncationPair(self._share(r, ring), self._share(r_trunc, ring), d)
        self._book(2 * n * ring.bits, "truncation pair",
                   self._values(pair.r, pair.r_trunc, names=("r", "r >> d")))
        return pair

    def random_bits(self, ring: Ring, shape) -> tuple[AdditiveShares, XorShares]:
        """Random bits shared both arithmetically (in ``ring``) and as XOR shares."""
        bits = self.rng.integers(0, 2, size=shape, dtype=np.uint64)
        n = int(np.prod(shape, dtype=np.int64))
        arith, xor = self._share(bits, ring), share_xor(bits, 1, self.rng, len(self.parties))
        self._book(n * (ring.bits + 1), "random bits",
                   self._values(arith, xor, names=("r (arithmetic)", "r (XOR)")))
        return arith, xor

    def bit_triples(self, shape, k: int = 1) -> BitTriple:
        """Boolean (AND) triples on k-bit strings."""
        ring = Ring(k)
        a, b = ring.random(self.rng, shape), ring.random(self.rng, shape)
        n = int(np.prod(shape, dtype=np.int64))
        np_ = len(self.parties)
        t = BitTriple(share_xor(a, k, self.rng, np_), share_xor(b, k, self.rng, np_),
                      share_xor(a & b, k, self.rng, np_))
        self._book(3 * n * k, "bit triple", self._values(t.a, t.b, t.c, names=("a", "b", "c")))
        return t


class ReplicatedDealer(Dealer):
    """A dealer of 2-out-of-3 replicated sharings (three parties, Falcon's setting), with one
    seeded stream per kind of material (``rngs``: name -> Generator), so that how much of one
    kind is drawn never shifts another kind's randomness.

    The material itself (triples over rings or prime fields, truncation pairs with extra
    bits, shared bit decompositions) is protocol-specific: the protocol draws it from
    ``rngs[...]``, shares it with :meth:`share` and books it with :meth:`book`."""

    def __init__(self, rngs: dict[str, np.random.Generator], ledger: Ledger, parties):
        if not rngs or not all(isinstance(g, np.random.Generator) for g in rngs.values()):
            raise TypeError("rngs must map stream names to numpy.random.Generator objects")
        parties = tuple(parties)
        if len(parties) != 3:
            raise ValueError(f"replicated sharing needs three parties, got {parties}")
        super().__init__(next(iter(rngs.values())), ledger, parties)
        self.rngs = dict(rngs)

    def share(self, x, alg, stream: str) -> ReplicatedShares:
        """Replicated shares of ``x`` over ``alg`` (a ring or prime field), the randomness
        drawn from stream ``stream``."""
        if stream not in self.rngs:
            raise ValueError(f"unknown dealer stream {stream!r}; one of {sorted(self.rngs)}")
        x = np.asarray(x)
        r = alg.random(self.rngs[stream], (2, *x.shape))
        last = alg.sub(x, alg.add(r[0], r[1]))
        return ReplicatedShares(np.concatenate([r, np.asarray(last, dtype=r.dtype)[None]]),
                                alg)

    def book(self, bits_per_party: int, what: str) -> None:
        """Book ``bits_per_party`` of material sent to each party (offline)."""
        self._book(bits_per_party, what)
