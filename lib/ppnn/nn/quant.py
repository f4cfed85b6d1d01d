"""Quantizers: uniform k-bit (Tabula's activations, fixed-point inputs) and power-of-two
(logarithmic) weights (SHE: 5-bit signed powers of two turn products into shifts).

Values outside the representable range raise ``ValueError`` unless ``clip=True`` is asked for
explicitly; nothing saturates silently.
"""

from __future__ import annotations

import numpy as np

__all__ = ["quantize_uniform", "dequantize_uniform", "fake_quantize_uniform", "uniform_scale",
           "uniform_range", "quantize_pow2", "dequantize_pow2", "pow2_exponent_range",
           "apply_pow2"]


def _check_bits(bits, lo: int = 1, hi: int = 62) -> int:
    if isinstance(bits, bool) or not isinstance(bits, int | np.integer):
        raise TypeError(f"bits must be an int in [{lo}, {hi}], got {type(bits).__name__}")
    if not lo <= bits <= hi:
        raise ValueError(f"bits must be an int in [{lo}, {hi}], got {bits}")
    return int(bits)


def uniform_range(bits: int, signed: bool = True) -> tuple[int, int]:
    """Integer range of a ``bits``-bit code: ``[-2^(b-1), 2^(b-1)-1]`` or ``[0, 2^b - 1]``."""
    bits = _check_bits(bits, 2 if signed else 1)
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def _scale_of(scale, frac_bits) -> float:
    if (scale is None) == (frac_bits is None):
        raise ValueError("give exactly one of scale (a float > 0) or frac_bits (an int)")
    if frac_bits is not None:
        if isinstance(frac_bits, bool) or not isinstance(frac_bits, int | np.integer):
            raise TypeError(f"frac_bits must be an int, got {type(frac_bits).__name__}")
        return 2.0 ** (-int(frac_bits))
    scale = float(scale)
    if not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be a finite float > 0, got {scale}")
    return scale


def uniform_scale(x, bits: int, signed: bool = True) -> float:
    """The smallest scale at which ``max|x|`` (or ``max x`` unsigned) fits in ``bits`` bits."""
    lo, hi = uniform_range(bits, signed)
    m = float(np.max(np.abs(x))) if np.size(x) else 0.0
    return m / hi if m > 0 else 1.0


def quantize_uniform(x, bits: int, scale: float | None = None, frac_bits: int | None = None,
                     signed: bool = True, clip: bool = False,
                     rounding: str = "nearest") -> np.ndarray:
    """Integer codes ``q`` with ``x ~ q * scale`` (``scale = 2^-frac_bits`` if given that way).

    ``rounding`` is ``"nearest"`` (ties to even, ``np.rint``) or ``"floor"``. Codes outside
    :func:`uniform_range` raise ``ValueError`` unless ``clip=True``. Returns int64."""
    s = _scale_of(scale, frac_bits)
    lo, hi = uniform_range(bits, signed)
    x = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(x)):
        raise ValueError("quantize_uniform: x contains NaN or infinity")
    if rounding == "nearest":
        q = np.rint(x / s)
    elif rounding == "floor":
        q = np.floor(x / s)
    else:
        raise ValueError(f"rounding must be 'nearest' or 'floor', got {rounding!r}")
    if q.size and (q.min() < lo or q.max() > hi):
        if not clip:
            raise ValueError(
                f"quantize_uniform: values [{x.min():.6g}, {x.max():.6g}] need codes outside "
                f"the {bits}-bit {'signed' if signed else 'unsigned'} range [{lo}, {hi}] at "
                f"scale {s:.6g}; pass clip=True to saturate"
            )
        q = np.clip(q, lo, hi)
    return q.astype(np.int64)


def dequantize_uniform(q, scale: float | None = None, frac_bits: int | None = None):
    """``q * scale`` as float64."""
    return np.asarray(q, dtype=np.float64) * _scale_of(scale, frac_bits)


def fake_quantize_uniform(x, bits: int, scale: float | None = None,
                          frac_bits: int | None = None, signed: bool = True,
                          clip: bool = False, rounding: str = "nearest") -> np.ndarray:
    """Round-trip through :func:`quantize_uniform` (simulated quantization, float result)."""
    q = quantize_uniform(x, bits, scale, frac_bits, signed, clip, rounding)
    return dequantize_uniform(q, scale, frac_bits)


# -- power-of-two (logarithmic) weights --------------------------------------------------------
def pow2_exponent_range(bits: int, max_exponent: int) -> tuple[int, int]:
    """Exponents a ``bits``-bit log code can hold: 1 sign bit, ``bits-1`` bits of exponent
    code, one code reserved for zero -> ``2^(bits-1) - 1`` exponents ending at
    ``max_exponent``."""
    bits = _check_bits(bits, 2, 16)
    return max_exponent - ((1 << (bits - 1)) - 2), max_exponent


def quantize_pow2(w, bits: int = 5, max_exponent: int | None = None, clip: bool = False):
    """Logarithmic quantization ``w ~ sign * 2^exponent`` (SHE §3; Lee et al. 2017).

    The exponent is ``round(log2 |w|)`` (nearest in the log domain). With ``bits`` bits
    (default 5: SHE) the code holds a sign and ``2^(bits-1) - 1`` exponents
    ``[max_exponent - 2^(bits-1) + 2, max_exponent]`` plus zero; weights whose rounded
    exponent falls below the range become 0 (sign 0). ``max_exponent`` defaults to
    ``round(log2 max|w|)``; a weight above it raises ``ValueError`` unless ``clip=True``.

    Returns ``(sign, exponent)``: int8 in {-1, 0, 1} and int16 (0 where sign is 0)."""
    w = np.asarray(w, dtype=np.float64)
    if not np.all(np.isfinite(w)):
        raise ValueError("quantize_pow2: w contains NaN or infinity")
    mag = np.abs(w)
    nz = mag > 0
    e = np.zeros(w.shape, dtype=np.int64)
    e[nz] = np.rint(np.log2(mag[nz])).astype(np.int64)
    if max_exponent is None:
        max_exponent = int(e[nz].max()) if nz.any() else 0
    if isinstance(max_exponent, bool) or not isinstance(max_exponent, int | np.integer):
        raise TypeError("max_exponent must be an int")
    e_min, e_max = pow2_exponent_range(bits, int(max_exponent))
    over = nz & (e > e_max)
    if over.any():
        if not clip:
            raise ValueError(
                f"quantize_pow2: |w| up to {mag.max():.6g} needs exponent {int(e.max())} > "
                f"max_exponent={e_max}; pass clip=True to saturate at 2^{e_max}"
            )
        e[over] = e_max
    keep = nz & (e >= e_min)
    sign = np.where(keep, np.sign(w), 0).astype(np.int8)
    exponent = np.where(keep, e, 0).astype(np.int16)
    return sign, exponent


def dequantize_pow2(sign, exponent) -> np.ndarray:
    """``sign * 2^exponent`` as float64."""
    return np.asarray(sign, np.float64) * np.exp2(np.asarray(exponent, np.float64))


def apply_pow2(x, sign, exponent) -> np.ndarray:
    """Integer product ``x * sign * 2^exponent`` by shifts (what SHE's homomorphic shifter
    computes): left shift for ``exponent >= 0``, arithmetic right shift (floor) otherwise.
    ``x`` int64, broadcast against ``sign`` / ``exponent``."""
    x = np.asarray(x)
    if x.dtype.kind not in "iu":
        raise TypeError(f"apply_pow2: x must be integers, got dtype {x.dtype}")
    x = x.astype(np.int64)
    e = np.asarray(exponent, np.int64)
    shifted = np.where(e >= 0, x << np.maximum(e, 0), x >> np.maximum(-e, 0))
    return shifted * np.asarray(sign, np.int64)
