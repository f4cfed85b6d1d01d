"""Signed and fixed-point encodings of integers as Paillier plaintexts (residues mod N)."""

from __future__ import annotations

import numpy as np
from gmpy2 import mpz

from .keys import PublicKey


def _as_int_objects(m, what: str) -> np.ndarray:
    """Integers (numpy ints, Python ints, object arrays of ints) as an object array."""
    arr = np.asarray(m, dtype=object) if not isinstance(m, np.ndarray) else m
    if arr.dtype.kind == "f":
        raise TypeError(f"{what}: got floating-point values; use encode_fixed() first")
    if arr.dtype.kind in "iub":
        return arr.astype(object)
    if arr.dtype != object:
        raise TypeError(f"{what}: expected integers, got dtype {arr.dtype}")
    flat = arr.ravel()
    for v in flat[: min(flat.size, 8)]:
        if not isinstance(v, int | np.integer | type(mpz(0))) or isinstance(v, bool):
            raise TypeError(f"{what}: expected integers, got {type(v).__name__}")
    return arr


def encode_int(m, public_key: PublicKey) -> np.ndarray:
    """Signed integers → residues in ``[0, N)`` (negative ``m`` becomes ``N + m``).

    Raises ``ValueError`` if ``|m|`` exceeds ``N/3`` (phe's ``max_int``): larger values could not
    be told apart from negative ones after homomorphic operations.
    """
    arr = _as_int_objects(m, "plaintext")
    n, lim = int(public_key.n), int(public_key.max_int)
    flat = [int(v) for v in arr.ravel()]
    if flat and (max(flat) > lim or min(flat) < -lim):
        raise ValueError(f"plaintext magnitude must be <= N/3 ≈ 2^{lim.bit_length()} for this "
                         f"{n.bit_length()}-bit key; got a {max(map(abs, flat)).bit_length()}-bit "
                         "value")
    return np.array([mpz(v % n) for v in flat], dtype=object).reshape(arr.shape)


def decode_int(residues, public_key: PublicKey) -> np.ndarray:
    """Residues in ``[0, N)`` → signed Python ints (values above ``N/2`` are negative)."""
    n = int(public_key.n)
    half = n // 2
    arr = np.asarray(residues, dtype=object)
    out = [int(v) - n if int(v) > half else int(v) for v in arr.ravel()]
    return np.array(out, dtype=object).reshape(arr.shape)


def encode_fixed(x, frac_bits: int, bits: int | None = None) -> np.ndarray:
    """Reals → ``round(x·2^frac_bits)`` as int64; with ``bits``: ``|v| < 2^(bits-1)``."""
    if not isinstance(frac_bits, int) or not 0 <= frac_bits <= 52:
        raise ValueError(f"frac_bits must be an int in [0, 52], got {frac_bits}")
    arr = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError("encode_fixed: input contains NaN or infinity")
    v = np.rint(arr * (1 << frac_bits))
    lim = float(1 << (bits - 1)) if bits is not None else float(1 << 62)
    if bits is not None and not 2 <= bits <= 63:
        raise ValueError(f"bits must be in [2, 63], got {bits}")
    if v.size and (v.max() >= lim or v.min() < -lim):
        raise ValueError(f"fixed-point values out of range: |x·2^{frac_bits}| must be < {lim:.0f}"
                         f" (bits={bits}); got [{arr.min()}, {arr.max()}]")
    return v.astype(np.int64)
