"""Fixed-point encoding of real numbers into Z_2^k.

A real ``x`` is encoded as ``round(x * 2^f) mod 2^k`` (two's complement). Values whose scaled
magnitude does not fit in ``k - 1`` bits raise ``ValueError``; nothing wraps silently.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .ring import Ring

__all__ = ["FixedPoint"]


@dataclass(frozen=True)
class FixedPoint:
    """Fixed-point format with ``frac_bits`` fractional bits in ``ring``.

    The representable range is ``[-2^(k-1-f), 2^(k-1-f) - 2^-f]``; the encoding error of a
    value inside it is at most ``2^-(f+1)`` (round to nearest).
    """

    ring: Ring
    frac_bits: int

    def __post_init__(self) -> None:
        if not isinstance(self.ring, Ring):
            raise TypeError("FixedPoint.ring must be a ppnn.core.Ring")
        f = self.frac_bits
        if not isinstance(f, int | np.integer) or not 0 <= f < self.ring.k:
            raise ValueError(
                f"frac_bits must be an int in [0, {self.ring.k - 1}] for {self.ring!r}, "
                f"got {self.frac_bits}"
            )

    @property
    def scale(self) -> int:
        return 1 << self.frac_bits

    @property
    def max_value(self) -> float:
        return ((1 << (self.ring.k - 1)) - 1) / self.scale

    @property
    def min_value(self) -> float:
        return -(1 << (self.ring.k - 1)) / self.scale

    @property
    def resolution(self) -> float:
        return 1.0 / self.scale

    def encode(self, x) -> np.ndarray:
        """Encode reals to ring elements; NaN/inf or out-of-range values raise ValueError."""
        arr = np.asarray(x, dtype=np.float64)
        if not np.all(np.isfinite(arr)):
            raise ValueError("fixed-point encode: input contains NaN or infinity")
        scaled = np.rint(arr * self.scale)
        lo, hi = -float(1 << (self.ring.k - 1)), float((1 << (self.ring.k - 1)) - 1)
        if arr.size and (scaled.min() < lo or scaled.max() > hi):
            raise ValueError(
                f"fixed-point value out of range for k={self.ring.k}, f={self.frac_bits}: "
                f"allowed [{self.min_value}, {self.max_value}], "
                f"got [{arr.min()}, {arr.max()}]"
            )
        if self.ring.k == 64:
            # float64 -> int64 is exact for |v| < 2^63 that passed the check above
            return scaled.astype(np.int64).view(np.uint64) & self.ring.mask
        return self.ring.from_signed(scaled.astype(np.int64))

    def decode(self, x, frac_bits: int | None = None) -> np.ndarray:
        """Decode ring elements to float64 (optionally at another scale, e.g. after a product)."""
        f = self.frac_bits if frac_bits is None else frac_bits
        return self.ring.to_signed(x).astype(np.float64) / float(1 << f)

    def error_bound(self) -> float:
        """Maximum absolute encode/decode error for in-range values."""
        return 0.5 / self.scale
