"""The three algebras Falcon computes in, and exact helpers on them (Falcon §3.1).

* ``Z_L`` with ``L = 2^ell`` (``ell = 32``): fixed-point values, shares of the network state;
* ``Z_2``: shares of bits (DReLU outputs, wrap bits) -- ``Ring(1)``, where ``+`` is XOR;
* ``Z_p`` for a small prime ``p`` (``p = 37``): shares of the *bits* of a secret, used by
  private compare (Algorithm 1).

``ppnn.core.ReplicatedShares`` holds the 2-out-of-3 shares of all three: its ``ring`` is a
``Ring`` for ``Z_L``/``Z_2`` and a :class:`Zp` (a ``PrimeField`` that can also sum) for ``Z_p``.

:func:`ring_matmul` (from :mod:`ppnn.core.ring`, which ``Ring.matmul`` uses whenever it is
exact) multiplies matrices in ``Z_2^k`` (``k <= 32``) with BLAS in float64 on 16-bit limbs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ppnn.core import PrimeField, Ring
from ppnn.core import bits as core_bits
from ppnn.core.ring import MAX_EXACT_INNER, ring_matmul

__all__ = ["Zp", "ring_matmul", "wrap2", "wrap3", "bits_of", "MAX_EXACT_INNER"]

@dataclass(frozen=True)
class Zp(PrimeField):
    """``Z_p`` usable as the ``ring`` of :class:`ppnn.core.ReplicatedShares` (adds ``sum``)."""

    # uint64-native arithmetic (operands are reduced, so no intermediate exceeds p^2 * 3)
    def _u(self, a) -> np.ndarray:
        a = np.asarray(a)
        if a.dtype == np.uint64:
            return a
        if a.dtype.kind == "i" and a.size and a.min() < 0:
            return np.mod(a, self.p).astype(np.uint64)
        return a.astype(np.uint64)

    def add(self, a, b) -> np.ndarray:
        return (self._u(a) + self._u(b)) % np.uint64(self.p)

    def sub(self, a, b) -> np.ndarray:
        return (self._u(a) + (np.uint64(self.p) - self._u(b))) % np.uint64(self.p)

    def neg(self, a) -> np.ndarray:
        return (np.uint64(self.p) - self._u(a)) % np.uint64(self.p)

    def mul(self, a, b) -> np.ndarray:
        return (self._u(a) * self._u(b)) % np.uint64(self.p)

    def sum(self, a, axis=None) -> np.ndarray:
        return np.sum(self._u(a), axis=axis, dtype=np.uint64) % np.uint64(self.p)

    def __repr__(self) -> str:
        return f"Zp({self.p})"


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


def bits_of(ring: Ring, x) -> np.ndarray:
    """Bits of ring elements, least significant first: shape ``(*x.shape, k)`` (uint64)."""
    return core_bits.bits_of(x, ring.k, axis=-1, dtype=np.uint64)
