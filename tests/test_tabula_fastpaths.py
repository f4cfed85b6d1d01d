"""Fast paths of the Tabula runner and Ring: same values, types and ownership as before."""

import numpy as np
import pytest

from ppnn.core.ring import Ring
from ppnn.nn import MaxPool, ops
from ppnn.protocols.tabula import network as tn


@pytest.mark.parametrize("k,s,hw", [(2, None, (8, 8)), (3, 2, (7, 9)), (2, 3, (8, 7)),
                                    (3, 1, (5, 5)), (1, 1, (3, 4))])
def test_window_slices_match_pool_windows(k, s, hw):
    layer = MaxPool(k, s)
    x = np.random.default_rng(0).integers(-99, 99, (2, 3, 4, *hw))  # party, N, C, H, W
    win = np.stack([ops.pool_windows(p, k, layer.step) for p in x])
    got = tn._window_slices(x, layer)
    assert len(got) == k * k
    assert np.array_equal(np.stack(got, axis=-1), win)


def test_window_slices_reject_padding_and_tiny_inputs():
    x = np.zeros((1, 1, 4, 4), np.int64)
    with pytest.raises(ValueError, match="padding"):
        tn._window_slices(x, MaxPool(3, 1, 1))
    with pytest.raises(ValueError, match="smaller"):
        tn._window_slices(x[..., :1, :], MaxPool(2))


@pytest.mark.parametrize("k", [64, 63, 32, 8])
def test_ring_ops_return_fresh_masked_arrays(k):
    R, rng = Ring(k), np.random.default_rng(k)
    a = rng.integers(0, 2**64 - 1, (4, 5), dtype=np.uint64, endpoint=True)
    b = a[:, ::-1].T.T  # a strided view
    mask = np.uint64((1 << k) - 1)
    for got, ref in ((R.add(a, b), (a + b) & mask), (R.sub(a, b), (a - b) & mask),
                     (R.neg(a), (np.uint64(0) - a) & mask), (R.mul(a, b), (a * b) & mask),
                     (R.sum(a, axis=0), a.sum(0, dtype=np.uint64) & mask),
                     (R.sum(a[None], axis=0), a & mask)):
        assert got.dtype == np.uint64 and np.array_equal(got, ref)
        assert not np.shares_memory(got, a)
    r = R.random(np.random.default_rng(1), (3,))
    ref = np.random.default_rng(1).integers(0, 2**64 - 1, 3, dtype=np.uint64, endpoint=True)
    assert np.array_equal(r, ref & mask)
    # 0-d results stay numpy scalars, as the masked expression returns them
    assert type(R.random(np.random.default_rng(1))) is np.uint64
    assert type(R.add(a[0, 0], 1)) is np.uint64 and type(R.sum(a)) is np.uint64
