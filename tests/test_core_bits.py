"""One bit decomposition for the toolkit: round trips on both axes, every width, clear errors."""

from __future__ import annotations

import numpy as np
import pytest

from ppnn.core.bits import bits_of, from_bits


@pytest.mark.parametrize("k", [1, 5, 32, 63, 64])
@pytest.mark.parametrize("axis", [0, -1])
def test_round_trip_for_every_width_and_axis(k, axis):
    rng = np.random.default_rng(k)
    hi = np.iinfo(np.uint64).max if k == 64 else (1 << k) - 1
    v = rng.integers(0, hi, size=(3, 7), dtype=np.uint64, endpoint=True)
    v[0, :2] = [0, hi]
    b = bits_of(v, k, axis=axis)
    assert b.shape == ((k, 3, 7) if axis == 0 else (3, 7, k)) and b.dtype == np.uint8
    assert set(np.unique(b)) <= {0, 1}
    assert np.array_equal(from_bits(b, axis=axis), v)


def test_least_significant_bit_first_and_dtype():
    assert bits_of(np.array([6]), 4, axis=-1).tolist() == [[0, 1, 1, 0]]
    assert bits_of(np.array([6]), 4, dtype=np.uint64).dtype == np.uint64
    assert bits_of(np.array([0b1011]), 2).ravel().tolist() == [1, 1]  # only the low k bits


def test_bad_widths_and_axes_raise():
    with pytest.raises(ValueError, match="bit width"):
        bits_of(np.array([1]), 65)
    with pytest.raises(ValueError, match="bit width"):
        bits_of(np.array([1]), 0)
    with pytest.raises(TypeError, match="bit width"):
        bits_of(np.array([1]), 8.0)
    with pytest.raises(ValueError, match="axis"):
        bits_of(np.array([1]), 8, axis=1)
    with pytest.raises(ValueError, match="bit width"):
        from_bits(np.zeros((65, 2), np.uint8))


@pytest.mark.parametrize("shape", [(), (0,), (4,), (3, 5, 7)])
@pytest.mark.parametrize("axis", [0, -1])
def test_byte_paths_equal_the_word_path(shape, axis):
    """One-byte dtypes take the byte paths (unpackbits; rows of bytes on axis 0): the same
    bits as the uint64 shifts, for every shape."""
    v = np.random.default_rng(len(shape)).integers(0, 1 << 62, shape, dtype=np.uint64) * 3
    for k in (1, 7, 8, 13, 33, 64):
        ref = bits_of(v, k, axis=axis, dtype=np.uint64)
        got = bits_of(v, k, axis=axis, dtype=np.uint8)
        assert got.dtype == np.uint8 and np.array_equal(got, ref)
