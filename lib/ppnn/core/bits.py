"""Bit decomposition of unsigned integers: the one ``bits_of`` / ``from_bits`` of the toolkit.

Garbled circuits (:mod:`ppnn.he.gc`), SwaNN's Boolean sharing (:mod:`ppnn.protocols.swann.
twopc`) and Falcon's private compare (:mod:`ppnn.protocols.falcon.algebra`) all decompose ring
elements into bits, least significant first; they differ only in where the bit axis goes and
in the dtype they compute with, which are parameters here.
"""

from __future__ import annotations

import numpy as np

__all__ = ["bits_of", "from_bits"]


def _check_width(k) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise TypeError(f"bit width must be an int, got {type(k).__name__}")
    if not 1 <= int(k) <= 64:
        raise ValueError(f"bit width must be in 1..64, got {k}")
    return int(k)


def bits_of(values, k: int, axis: int = 0, dtype=np.uint8) -> np.ndarray:
    """The low ``k`` bits of unsigned ``values`` (LSB first) on a new axis ``0`` (shape
    ``(k, *values.shape)``) or ``-1`` (``(*values.shape, k)``), as 0/1 of ``dtype``."""
    k = _check_width(k)
    if axis not in (0, -1):
        raise ValueError(f"axis must be 0 or -1, got {axis}")
    v = np.asarray(values, dtype=np.uint64)
    if np.dtype(dtype).itemsize == 1:
        # bytes of the little-endian words, unpacked least significant bit first: one pass
        nbytes = -(-k // 8)
        raw = np.ascontiguousarray(v.astype("<u8", copy=False)).view(np.uint8)
        raw = raw.reshape(*v.shape, 8)[..., :nbytes]
        if axis == -1:
            out = np.unpackbits(raw, axis=-1, count=k, bitorder="little")
        else:  # bit i of every value from byte i // 8, a contiguous row at a time
            out = np.empty((k, *v.shape), dtype=np.uint8)
            flat = out.reshape(k, -1)
            rows = [np.ascontiguousarray(raw[..., b]).reshape(-1) for b in range(nbytes)]
            for i in range(k):
                np.right_shift(rows[i // 8], np.uint8(i % 8), out=flat[i])
                flat[i] &= np.uint8(1)
        return out if np.dtype(dtype) == np.uint8 else out.view(dtype)
    shifts = np.arange(k, dtype=np.uint64)
    if axis == 0:
        out = (v[None] >> shifts.reshape((k,) + (1,) * v.ndim)) & np.uint64(1)
    else:
        out = (v[..., None] >> shifts) & np.uint64(1)
    return out if np.dtype(dtype) == np.uint64 else out.astype(dtype)


def from_bits(bits, axis: int = 0) -> np.ndarray:
    """Inverse of :func:`bits_of`: ``sum_j bits[j] 2^j`` over ``axis`` as uint64."""
    if axis not in (0, -1):
        raise ValueError(f"axis must be 0 or -1, got {axis}")
    b = np.asarray(bits, dtype=np.uint64)
    k = _check_width(b.shape[axis])
    shifts = np.arange(k, dtype=np.uint64)
    if axis == 0:
        shifts = shifts.reshape((k,) + (1,) * (b.ndim - 1))
    return np.bitwise_or.reduce(b << shifts, axis=axis)
