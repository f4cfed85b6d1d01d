"""Rings Z_2^k (k <= 64) and prime fields Z_p on numpy arrays.

Elements of Z_2^k are stored as ``uint64``; arithmetic wraps modulo 2^64 in numpy and is then
masked to k bits, so every operation is exact. Signed values use two's complement: the
representative of ``x`` in ``[-2^(k-1), 2^(k-1))`` is ``x mod 2^k``.

Z_p is stored as ``int64`` and restricted to ``p < 2^31`` so that a product of two reduced
elements fits in int64 before reduction (vectorized, no Python big integers).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .randomness import check_source

__all__ = ["Ring", "PrimeField", "Z2_64", "Z2_32", "is_prime", "ring_matmul", "MAX_EXACT_INNER"]


def _as_int_array(x, what: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype == object:
        raise TypeError(f"{what}: object arrays are not supported; pass integer numpy arrays")
    if arr.dtype.kind == "f":
        raise TypeError(f"{what}: got floating-point values; encode them with FixedPoint first")
    if arr.dtype.kind not in "iub":
        raise TypeError(f"{what}: expected an integer array, got dtype {arr.dtype}")
    return arr


@dataclass(frozen=True)
class Ring:
    """The ring Z_2^k of integers modulo 2^k, 1 <= k <= 64.

    Parameters
    ----------
    k : int
        Bit width. ``k > 64`` raises ``ValueError`` (elements are held in uint64).
    """

    k: int

    def __post_init__(self) -> None:
        if not isinstance(self.k, int | np.integer) or isinstance(self.k, bool):
            raise TypeError(f"ring bit width k must be an int, got {type(self.k).__name__}")
        if not 1 <= int(self.k) <= 64:
            raise ValueError(f"ring bit width k must be in 1..64, got k={self.k}")

    # -- constants -----------------------------------------------------------------------
    @property
    def modulus(self) -> int:
        return 1 << self.k

    @property
    def mask(self) -> np.uint64:
        return np.uint64((1 << self.k) - 1)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(np.uint64)

    @property
    def bits(self) -> int:
        """Bits needed to send one element."""
        return self.k

    def __repr__(self) -> str:
        return f"Ring(Z_2^{self.k})"

    # -- conversions ---------------------------------------------------------------------
    def reduce(self, x) -> np.ndarray:
        """Reduce any integer array (signed or unsigned) to its representative mod 2^k."""
        arr = _as_int_array(x, "Ring.reduce")
        return arr.astype(np.uint64, copy=False) & self.mask

    def check(self, x, what: str = "value") -> np.ndarray:
        """Return ``x`` as uint64 after checking every element is already in [0, 2^k)."""
        arr = _as_int_array(x, what)
        if arr.dtype.kind == "i" and arr.size and arr.min() < 0:
            raise ValueError(f"{what}: negative element {arr.min()} is not in Z_2^{self.k}")
        u = arr.astype(np.uint64, copy=False)
        if self.k < 64 and u.size and u.max() > self.mask:
            raise ValueError(f"{what}: element {int(u.max())} is outside Z_2^{self.k}")
        return u

    def from_signed(self, x) -> np.ndarray:
        """Encode signed integers in [-2^(k-1), 2^(k-1)) in two's complement; others raise."""
        arr = _as_int_array(x, "Ring.from_signed").astype(np.int64, copy=False)
        if self.k < 64 and arr.size:
            lo, hi = -(1 << (self.k - 1)), (1 << (self.k - 1)) - 1
            if arr.min() < lo or arr.max() > hi:
                raise ValueError(
                    f"signed value out of range for Z_2^{self.k}: allowed [{lo}, {hi}], "
                    f"got [{arr.min()}, {arr.max()}]"
                )
        return arr.astype(np.uint64) & self.mask

    def to_signed(self, x) -> np.ndarray:
        """Decode two's complement representatives to int64."""
        u = self.reduce(x)
        if self.k == 64:
            return u.view(np.int64)
        half = np.uint64(1 << (self.k - 1))
        s = u.astype(np.int64)
        return np.where(u >= half, s - (1 << self.k), s)

    def msb(self, x) -> np.ndarray:
        """Most significant bit (the sign bit of the two's complement value)."""
        return ((self.reduce(x) >> np.uint64(self.k - 1)) & np.uint64(1)).astype(np.uint8)

    # -- arithmetic ----------------------------------------------------------------------
    def _wrap(self, x: np.ndarray) -> np.ndarray:
        """``x mod 2^k`` for a *fresh* uint64 result ``x`` (never an input: :meth:`reduce`
        must copy). For k = 64 the mask is the identity and is skipped, except on 0-d values
        where ``&`` also turns a 0-d array into a scalar."""
        return x if self.k == 64 and x.ndim else x & self.mask

    def add(self, a, b) -> np.ndarray:
        return self._wrap(np.asarray(a, dtype=np.uint64) + np.asarray(b, dtype=np.uint64))

    def sub(self, a, b) -> np.ndarray:
        return self._wrap(np.asarray(a, dtype=np.uint64) - np.asarray(b, dtype=np.uint64))

    def neg(self, a) -> np.ndarray:
        return self._wrap(np.uint64(0) - np.asarray(a, dtype=np.uint64))

    def mul(self, a, b) -> np.ndarray:
        return self._wrap(np.asarray(a, dtype=np.uint64) * np.asarray(b, dtype=np.uint64))

    def matmul(self, a, b) -> np.ndarray:
        """Matrix product mod 2^k, exact: with BLAS on 16-bit limbs (:func:`ring_matmul`) for
        ``k <= 32``, else uint64 products and sums that wrap mod 2^64."""
        a, b = np.asarray(a, dtype=np.uint64), np.asarray(b, dtype=np.uint64)
        if self.k <= 32 and a.ndim >= 1 and a.shape[-1] <= MAX_EXACT_INNER:
            return ring_matmul(self, a & self.mask, b & self.mask)  # only a, b mod 2^k matter
        return self._wrap(np.matmul(a, b))

    def sum(self, a, axis=None) -> np.ndarray:
        return self._wrap(np.sum(np.asarray(a, dtype=np.uint64), axis=axis, dtype=np.uint64))

    def random(self, rng: np.random.Generator, shape=()) -> np.ndarray:
        """Uniform elements of Z_2^k drawn from ``rng`` (a Generator or a SecureRandom)."""
        check_source(rng)
        return self._wrap(rng.integers(0, np.iinfo(np.uint64).max, size=shape, dtype=np.uint64,
                                       endpoint=True))


Z2_64 = Ring(64)
Z2_32 = Ring(32)


def is_prime(p: int) -> bool:
    if p < 2:
        return False
    if p % 2 == 0:
        return p == 2
    i = 3
    while i * i <= p:
        if p % i == 0:
            return False
        i += 2
    return True


@dataclass(frozen=True)
class PrimeField:
    """The field Z_p for a prime ``p < 2^31`` (elements held as int64)."""

    p: int

    def __post_init__(self) -> None:
        if not isinstance(self.p, int | np.integer) or isinstance(self.p, bool):
            raise TypeError(f"field modulus p must be an int, got {type(self.p).__name__}")
        if not 2 <= int(self.p) < (1 << 31):
            raise ValueError(f"field modulus p must be a prime in [2, 2^31), got p={self.p}")
        if not is_prime(int(self.p)):
            raise ValueError(f"field modulus p={self.p} is not prime")

    @property
    def bits(self) -> int:
        """Bits needed to send one element, ceil(log2 p)."""
        return int(self.p - 1).bit_length()

    def __repr__(self) -> str:
        return f"PrimeField(Z_{self.p})"

    def reduce(self, x) -> np.ndarray:
        return np.mod(_as_int_array(x, "PrimeField.reduce").astype(np.int64), self.p)

    def add(self, a, b) -> np.ndarray:
        return (np.asarray(a, np.int64) + np.asarray(b, np.int64)) % self.p

    def sub(self, a, b) -> np.ndarray:
        return (np.asarray(a, np.int64) - np.asarray(b, np.int64)) % self.p

    def neg(self, a) -> np.ndarray:
        return (-np.asarray(a, np.int64)) % self.p

    def mul(self, a, b) -> np.ndarray:
        return (np.asarray(a, np.int64) * np.asarray(b, np.int64)) % self.p

    def random(self, rng: np.random.Generator, shape=()) -> np.ndarray:
        check_source(rng)
        return rng.integers(0, self.p, size=shape, dtype=np.int64)

    def random_nonzero(self, rng: np.random.Generator, shape=()) -> np.ndarray:
        return rng.integers(1, self.p, size=shape, dtype=np.int64)


# inner dimension up to which the float64 limb products are exact: n * (2^17-2)^2 < 2^53
MAX_EXACT_INNER = 1 << 19


def _limbs(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bits 0-15 and 16-31 of ``a`` as float64 (higher bits vanish mod 2^32 anyway): the
    first two 16-bit words of each little-endian uint64, converted from uint16 (numpy's
    uint64 -> float64 conversion is an order of magnitude slower)."""
    words = np.ascontiguousarray(a, dtype="<u8").view("<u2").reshape(*np.shape(a), 4)
    return words[..., 0].astype(np.float64), words[..., 1].astype(np.float64)


#: the limb products cost about this many integer multiply-adds per element of ``a`` and ``b``
#: split into limbs (measured: a vector times an 800 x 500 matrix, 5.8 ms by limbs, 0.38 ms
#: in uint64); a product with fewer multiply-adds than that is formed in uint64 instead
LIMB_COST = 16


def ring_matmul(ring: Ring, a, b) -> np.ndarray:
    """Exact ``a @ b mod 2^k`` for ``k <= 32`` via three float64 BLAS products of 16-bit limbs.

    ``a = a_h 2^16 + a_l`` and likewise ``b``; modulo ``2^32`` the ``a_h b_h 2^32`` term vanishes,
    so ``a b = a_l b_l + 2^16 (a_h b_l + a_l b_h)``, and the middle term is obtained Karatsuba
    style as ``(a_l + a_h)(b_l + b_h) - a_l b_l - a_h b_h``. Every float product sums at most
    ``MAX_EXACT_INNER`` terms below ``2^34`` and is therefore exact.

    A product with few multiply-adds per element (a matrix-vector product: one image through
    a dense layer) is formed in uint64 instead, which wraps mod 2^64 and is exact too: both
    paths give the same bits (integer sums do not depend on their order), so the choice
    (:data:`LIMB_COST`) is only a matter of speed.
    """
    if ring.k > 32:
        raise ValueError(f"ring_matmul supports Z_2^k with k <= 32, got k={ring.k}")
    a = np.asarray(a, dtype=np.uint64)
    b = np.asarray(b, dtype=np.uint64)
    if a.shape[-1] > MAX_EXACT_INNER:
        raise ValueError(f"inner dimension {a.shape[-1]} exceeds {MAX_EXACT_INNER} (float64 "
                         "limb products would no longer be exact)")
    if a.ndim == 2 and b.ndim == 2 and a.size * b.shape[-1] <= LIMB_COST * (a.size + b.size):
        return np.matmul(a, b) & ring.mask
    al, ah = _limbs(a)
    bl, bh = _limbs(b)
    low = np.matmul(al, bl).astype(np.uint64)
    high = np.matmul(ah, bh).astype(np.uint64)
    mid = np.matmul(al + ah, bl + bh).astype(np.uint64) - low - high
    return (low + (mid << np.uint64(16))) & ring.mask
