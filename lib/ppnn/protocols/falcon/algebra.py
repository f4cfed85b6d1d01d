"""The three algebras Falcon computes in, and exact helpers on them (Falcon §3.1).

* ``Z_L`` with ``L = 2^ell`` (``ell = 32``): fixed-point values, shares of the network state;
* ``Z_2``: shares of bits (DReLU outputs, wrap bits) -- ``Ring(1)``, where ``+`` is XOR;
* ``Z_p`` for a small prime ``p`` (``p = 37``): shares of the *bits* of a secret, used by
  private compare (Algorithm 1).

``ppnn.core.ReplicatedShares`` holds the 2-out-of-3 shares of all three: its ``ring`` is a
``Ring`` for ``Z_L``/``Z_2`` and a :class:`Zp` (a ``PrimeField`` that can also sum) for ``Z_p``.

:func:`ring_matmul` (from :mod:`ppnn.core.ring`, which ``Ring.matmul`` uses whenever it is
exact) multiplies matrices in ``Z_2^k`` (``k <= 32``) with BLAS in float64 on 16-bit limbs,
or in uint64 when a product has few multiply-adds per element (a matrix times a vector); both
are exact, with the same bits.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ppnn.core import PrimeField, Ring
from ppnn.core import bits as core_bits
from ppnn.core.ring import MAX_EXACT_INNER, ring_matmul

__all__ = ["Zp", "Z2", "ring_matmul", "wrap2", "wrap3", "bits_of", "MAX_EXACT_INNER"]

def _uint_for(max_value: int) -> np.dtype:
    """The smallest unsigned dtype that holds ``max_value``."""
    for dt in (np.uint8, np.uint16, np.uint32, np.uint64):
        if max_value <= np.iinfo(dt).max:
            return np.dtype(dt)
    raise ValueError(f"{max_value} does not fit in 64 bits")


@dataclass(frozen=True)
class Zp(PrimeField):
    """``Z_p`` usable as the ``ring`` of :class:`ppnn.core.ReplicatedShares` (adds ``sum``).

    Elements are held in the smallest unsigned dtype that holds ``p - 1`` (``uint8`` for
    Falcon's ``p = 37``); sums of a few products are formed in :attr:`wide` (``uint16`` for
    ``p = 37``) and reduced once. Additions reduce without a division: for ``s < 2p``,
    ``min(s, s - p)`` is ``s mod p`` in unsigned arithmetic (``s - p`` wraps above ``s`` when
    ``s < p``)."""

    @cached_property
    def dtype(self) -> np.dtype:
        return _uint_for(self.p - 1)

    @cached_property
    def wide(self) -> np.dtype:
        """Holds ``3 (p - 1)^2 + 2 p``: a resharing sum before its one reduction."""
        return _uint_for(3 * (self.p - 1) ** 2 + 2 * self.p)

    @cached_property
    def _sum_dtype(self) -> np.dtype:
        """Holds ``2 (p - 1)``: the sum of two reduced elements."""
        return _uint_for(2 * (self.p - 1))

    def _u(self, a) -> np.ndarray:
        """``a`` as reduced elements of :attr:`dtype` (reducing only what is not already)."""
        a = np.asarray(a)
        dt = self.dtype
        if a.dtype == dt:  # our own elements: already reduced
            return a
        if a.dtype.kind not in "uib":
            raise TypeError(f"Z_{self.p}: expected integers, got dtype {a.dtype}")
        if a.size and (a.min() < 0 or a.max() >= self.p):
            return np.mod(a.astype(np.int64), self.p).astype(dt)
        return a.astype(dt)

    def _fold(self, s: np.ndarray) -> np.ndarray:
        """``s mod p`` for ``0 <= s < 2p`` (unsigned), in :attr:`dtype`."""
        s = np.minimum(s, s - s.dtype.type(self.p))
        return s if s.dtype == self.dtype else s.astype(self.dtype)

    def mod(self, s: np.ndarray) -> np.ndarray:
        """``s mod p`` for unsigned ``s`` in place (a division by a constant, which numpy
        turns into a multiplication, is several times faster than ``%``)."""
        p = s.dtype.type(self.p)
        q = np.floor_divide(s, p)
        q *= p
        return np.subtract(s, q, out=s)

    def reduce(self, x) -> np.ndarray:
        return self._u(_as_ints(x, "Zp.reduce"))

    def add(self, a, b) -> np.ndarray:
        return self._fold(np.add(self._u(a), self._u(b), dtype=self._sum_dtype))

    def sub(self, a, b) -> np.ndarray:
        p = self.dtype.type(self.p)
        return self._fold(np.add(self._u(a), p - self._u(b), dtype=self._sum_dtype))

    def neg(self, a) -> np.ndarray:
        return self._fold(self.dtype.type(self.p) - self._u(a))

    def mul(self, a, b) -> np.ndarray:
        return self.mod(np.multiply(self._u(a), self._u(b), dtype=self.wide)).astype(self.dtype)

    def sum(self, a, axis=None) -> np.ndarray:
        s = np.sum(self._u(a), axis=axis, dtype=np.uint64) % np.uint64(self.p)
        return np.asarray(s).astype(self.dtype)

    def random(self, rng: np.random.Generator, shape=()) -> np.ndarray:
        if not isinstance(rng, np.random.Generator):
            raise TypeError("rng must be a numpy.random.Generator (seed it explicitly)")
        return self._draw(rng, 0, shape)

    def _draw(self, rng: np.random.Generator, low: int, shape, cast: bool = True
              ) -> np.ndarray:
        # numpy's bounded draws are faster in 16 bits than in 8; ``cast=False`` keeps them
        # there (the same values, for a caller that sums them in a wider dtype anyway)
        dt = np.uint16 if self.dtype == np.uint8 else self.dtype
        out = rng.integers(low, self.p, size=shape, dtype=dt)
        return out if out.dtype == self.dtype or not cast else out.astype(self.dtype)

    def random_nonzero(self, rng: np.random.Generator, shape=()) -> np.ndarray:
        if not isinstance(rng, np.random.Generator):
            raise TypeError("rng must be a numpy.random.Generator (seed it explicitly)")
        return self._draw(rng, 1, shape)

    def __repr__(self) -> str:
        return f"Zp({self.p})"


@dataclass(frozen=True)
class Z2(Ring):
    """``Z_2`` (bits) held as ``uint8`` 0/1: ``+`` is XOR, ``*`` is AND. ``Ring(1)`` holds the
    same bits as ``uint64``; this one is eight times smaller and needs no masking."""

    k: int = 1

    def __post_init__(self) -> None:
        if self.k != 1:
            raise ValueError(f"Z2 is the ring of bits (k = 1), got k={self.k}")

    @property
    def mask(self) -> np.uint8:
        return np.uint8(1)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(np.uint8)

    def __repr__(self) -> str:
        return "Z2"

    def reduce(self, x) -> np.ndarray:
        a = _as_ints(x, "Z2.reduce")
        return (a if a.dtype == np.uint8 else a.astype(np.uint8)) & np.uint8(1)

    def check(self, x, what: str = "value") -> np.ndarray:
        a = _as_ints(x, what)
        if a.size and (a.min() < 0 or a.max() > 1):
            raise ValueError(f"{what}: bits must be 0 or 1, got values in "
                             f"[{a.min()}, {a.max()}]")
        return a.astype(np.uint8, copy=False)

    def add(self, a, b) -> np.ndarray:
        return np.bitwise_xor(self.reduce(a), self.reduce(b))

    sub = add

    def neg(self, a) -> np.ndarray:
        return self.reduce(a).copy()

    def mul(self, a, b) -> np.ndarray:
        return np.bitwise_and(self.reduce(a), self.reduce(b))

    def sum(self, a, axis=None) -> np.ndarray:
        return np.bitwise_xor.reduce(self.reduce(a), axis=axis)

    def matmul(self, a, b) -> np.ndarray:
        raise NotImplementedError("Z2 has no matrix product here")

    def random(self, rng: np.random.Generator, shape=()) -> np.ndarray:
        """Uniform bits, eight per random byte."""
        if not isinstance(rng, np.random.Generator):
            raise TypeError("rng must be a numpy.random.Generator (seed it explicitly)")
        shape = (int(shape),) if isinstance(shape, int | np.integer) else tuple(shape)
        n = int(np.prod(shape, dtype=np.int64))
        raw = np.frombuffer(rng.bytes(-(-n // 8)), dtype=np.uint8)
        return np.unpackbits(raw, count=n).reshape(shape)


def _as_ints(x, what: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype.kind not in "uib":
        raise TypeError(f"{what}: expected an integer array, got dtype {arr.dtype}")
    return arr


def wrap2(ring: Ring, a, b) -> np.ndarray:
    """Falcon Eq. 2: 1 if ``a + b >= 2^k`` as integers (a carry out of the ring), else 0."""
    s = np.asarray(a, dtype=np.uint64) + np.asarray(b, dtype=np.uint64)  # < 2^33, no overflow
    return (s >> np.uint64(ring.k)).astype(np.uint64) & np.uint64(1)


def wrap3(ring: Ring, a0, a1, a2, exact: bool = False) -> np.ndarray:
    """Falcon Eq. 3/4: number of times ``a0 + a1 + a2`` wraps ``2^k`` (exact: 0, 1 or 2),
    reduced mod 2 unless ``exact`` (the paper's "wrap function" is the reduced one, Eq. 4)."""
    s = (np.asarray(a0, dtype=np.uint64) + np.asarray(a1, dtype=np.uint64)
         + np.asarray(a2, dtype=np.uint64))
    w = s >> np.uint64(ring.k)
    return w if exact else (w & np.uint64(1))


def bits_of(ring: Ring, x, dtype=np.uint64) -> np.ndarray:
    """Bits of ring elements, least significant first: shape ``(*x.shape, k)``."""
    return core_bits.bits_of(x, ring.k, axis=-1, dtype=dtype)
