"""The three algebras Falcon computes in, and exact helpers on them (Falcon §3.1).

* ``Z_L`` with ``L = 2^ell`` (``ell = 32``): fixed-point values, shares of the network state;
* ``Z_2``: shares of bits (DReLU outputs, wrap bits) -- ``Ring(1)``, where ``+`` is XOR;
* ``Z_p`` for a small prime ``p`` (``p = 37``): shares of the *bits* of a secret, used by
  private compare (Algorithm 1).

``ppnn.core.ReplicatedShares`` holds the 2-out-of-3 shares of all three: its ``ring`` is a
``Ring`` for ``Z_L``/``Z_2`` and a :class:`Zp` (a ``PrimeField`` that can also sum) for ``Z_p``.

:func:`ring_matmul` is an exact matrix product in ``Z_2^k`` (``k <= 32``) computed with BLAS in
float64 by splitting each operand into 16-bit limbs (every partial sum stays below 2^53).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ppnn.core import PrimeField, Ring
from ppnn.core import bits as core_bits

__all__ = ["Zp", "ring_matmul", "wrap2", "wrap3", "bits_of", "MAX_EXACT_INNER"]

# inner dimension up to which the float64 limb products are exact: n * (2^17-2)^2 < 2^53
MAX_EXACT_INNER = 1 << 19


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


def _limbs(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a, dtype=np.uint64)
    return (a & np.uint64(0xFFFF)).astype(np.float64), (a >> np.uint64(16)).astype(np.float64)


def ring_matmul(ring: Ring, a, b) -> np.ndarray:
    """Exact ``a @ b mod 2^k`` for ``k <= 32`` via three float64 BLAS products of 16-bit limbs.

    ``a = a_h 2^16 + a_l`` and likewise ``b``; modulo ``2^32`` the ``a_h b_h 2^32`` term vanishes,
    so ``a b = a_l b_l + 2^16 (a_h b_l + a_l b_h)``, and the middle term is obtained Karatsuba
    style as ``(a_l + a_h)(b_l + b_h) - a_l b_l - a_h b_h``. Every float product sums at most
    ``MAX_EXACT_INNER`` terms below ``2^34`` and is therefore exact.
    """
    if ring.k > 32:
        raise ValueError(f"ring_matmul supports Z_2^k with k <= 32, got k={ring.k}")
    a = np.asarray(a, dtype=np.uint64)
    b = np.asarray(b, dtype=np.uint64)
    if a.shape[-1] > MAX_EXACT_INNER:
        raise ValueError(f"inner dimension {a.shape[-1]} exceeds {MAX_EXACT_INNER} (float64 "
                         "limb products would no longer be exact)")
    al, ah = _limbs(a)
    bl, bh = _limbs(b)
    low = np.matmul(al, bl).astype(np.uint64)
    high = np.matmul(ah, bh).astype(np.uint64)
    mid = np.matmul(al + ah, bl + bh).astype(np.uint64) - low - high
    return (low + (mid << np.uint64(16))) & ring.mask


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
