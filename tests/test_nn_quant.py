"""Quantizers with exact expected values (ppnn.nn.quant)."""

import numpy as np
import pytest

from ppnn.nn import quant


def test_uniform_exact_values():
    x = [-1.0, -0.26, 0.125, 0.1875, 0.3125, 0.99]
    # scale 1/8: -8, -2.08 -> -2, 1, 1.5 -> 2 (ties to even), 2.5 -> 2, 7.92 -> 8 (out of 4-bit)
    assert quant.quantize_uniform(x[:5], 4, frac_bits=3).tolist() == [-8, -2, 1, 2, 2]
    assert quant.quantize_uniform(x[:5], 4, frac_bits=3, rounding="floor").tolist() == \
        [-8, -3, 1, 1, 2]
    assert quant.quantize_uniform(x, 4, frac_bits=3, clip=True).tolist() == \
        [-8, -2, 1, 2, 2, 7]
    assert quant.quantize_uniform([0.0, 0.5, 1.0], 8, scale=1 / 255, signed=False).tolist() == \
        [0, 128, 255]
    assert quant.dequantize_uniform([-8, 3], frac_bits=3).tolist() == [-1.0, 0.375]
    assert quant.fake_quantize_uniform([0.3], 8, scale=0.25).tolist() == [0.25]
    assert quant.uniform_range(8) == (-128, 127) and quant.uniform_range(3, False) == (0, 7)
    assert quant.uniform_scale([-2.54, 1.0], 8) == pytest.approx(0.02)
    assert quant.quantize_uniform(np.zeros((2, 3)), 4, frac_bits=0).dtype == np.int64


def test_uniform_out_of_range_raises_unless_clip():
    with pytest.raises(ValueError, match=r"\[-8, 7\].*clip=True"):
        quant.quantize_uniform([0.99], 4, frac_bits=3)
    with pytest.raises(ValueError, match=r"\[0, 15\]"):
        quant.quantize_uniform([-0.1], 4, frac_bits=3, signed=False)
    assert quant.quantize_uniform([-0.1], 4, frac_bits=3, signed=False, clip=True).tolist() == [0]


def test_uniform_bad_arguments():
    with pytest.raises(ValueError, match="exactly one"):
        quant.quantize_uniform([1.0], 8)
    with pytest.raises(ValueError, match="exactly one"):
        quant.quantize_uniform([1.0], 8, scale=0.1, frac_bits=2)
    with pytest.raises(ValueError, match="scale"):
        quant.quantize_uniform([1.0], 8, scale=0.0)
    with pytest.raises(ValueError, match="bits"):
        quant.quantize_uniform([1.0], 0, frac_bits=1)
    with pytest.raises(TypeError, match="bits"):
        quant.quantize_uniform([1.0], 4.0, frac_bits=1)
    with pytest.raises(ValueError, match="NaN"):
        quant.quantize_uniform([np.nan], 8, frac_bits=1)
    with pytest.raises(ValueError, match="rounding"):
        quant.quantize_uniform([1.0], 8, frac_bits=1, rounding="up")


def test_pow2_exact_values():
    w = np.array([0.5, -0.3, 0.7, 0.0, 1.0 / 1024, -0.12, 2.9])
    sign, exp = quant.quantize_pow2(w, bits=5, max_exponent=1, clip=True)
    # round(log2|w|): -1, -1.74 -> -2, -0.51 -> -1, zero, -10 (range [1-14, 1] keeps it),
    # -3.06 -> -3, 1.54 -> 2 -> clipped to 1
    assert sign.tolist() == [1, -1, 1, 0, 1, -1, 1]
    assert exp.tolist() == [-1, -2, -1, 0, -10, -3, 1]
    assert quant.dequantize_pow2(sign, exp).tolist() == [0.5, -0.25, 0.5, 0.0, 1 / 1024,
                                                         -0.125, 2.0]
    # 5 bits: 15 exponents [max - 14, max]; with max 0 the smallest is 2^-14
    assert quant.pow2_exponent_range(5, 0) == (-14, 0)
    s2, e2 = quant.quantize_pow2([1.0, 2.0 ** -14, 2.0 ** -15, -(2.0 ** -16)], bits=5)
    assert s2.tolist() == [1, 1, 0, 0] and e2.tolist() == [0, -14, 0, 0]
    # 3 bits: 3 exponents
    s3, e3 = quant.quantize_pow2([4.0, 2.0, 1.0, 0.5], bits=3)
    assert s3.tolist() == [1, 1, 1, 0] and e3.tolist() == [2, 1, 0, 0]


def test_pow2_overflow_and_bad_input():
    with pytest.raises(ValueError, match="clip=True"):
        quant.quantize_pow2([3.0], bits=5, max_exponent=0)
    with pytest.raises(ValueError, match="NaN"):
        quant.quantize_pow2([np.inf])
    with pytest.raises(ValueError, match="bits"):
        quant.quantize_pow2([1.0], bits=1)
    with pytest.raises(TypeError, match="max_exponent"):
        quant.quantize_pow2([1.0], max_exponent=1.5)


def test_apply_pow2_is_a_shift():
    x = np.array([13, -13, 13, -13, 7])
    sign = np.array([1, 1, -1, 1, 0])
    exp = np.array([2, 2, -2, -2, 3])
    # 13*4, -13*4, -(13>>2)=-3, -13>>2 = floor(-3.25) = -4, 0
    assert quant.apply_pow2(x, sign, exp).tolist() == [52, -52, -3, -4, 0]
    with pytest.raises(TypeError, match="integers"):
        quant.apply_pow2([1.5], [1], [0])
