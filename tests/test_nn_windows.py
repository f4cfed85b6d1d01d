"""One window builder: pooling views and routing indices (SwaNN, SHE, Tabula, Delphi + GC
all use these) agree with the float convolution and pooling kernels."""

import numpy as np
import pytest

from ppnn.nn import ops
from ppnn.protocols.she import quant as Q


@pytest.mark.parametrize("k,s,p", [(3, 1, 1), (3, 2, 1), (2, 2, 0), (5, 1, 2)])
def test_conv_index_is_im2col(k, s, p):
    x = np.arange(2 * 7 * 7, dtype=float).reshape(1, 2, 7, 7)
    W = np.random.default_rng(0).standard_normal((3, 2, k, k))
    idx = ops.conv_index((2, 7, 7), k, s, p)
    xp = np.append(x.ravel(), 0.0)  # index -1 reads the appended zero: the padding
    ref = ops.conv2d(x, W, s, p)[0].reshape(3, -1)
    np.testing.assert_allclose(W.reshape(3, -1) @ xp[idx].T, ref)
    assert ((idx == -1).any()) == (p > 0)


def test_pool_index_and_pool_windows_are_maxpool():
    x = np.random.default_rng(1).standard_normal((2, 3, 6, 6))
    win = ops.pool_index((3, 6, 6), 2, 2, 0)
    assert win.shape == (3 * 3 * 3, 4)
    pooled, _ = ops.maxpool(x, 2, 2, 0)
    np.testing.assert_array_equal(x[0].ravel()[win].max(axis=1), pooled[0].ravel())
    view = ops.pool_windows(x, 3, 2)  # (N, C, oh, ow, k*k)
    assert view.shape == (2, 3, 2, 2, 9)
    np.testing.assert_array_equal(view.max(axis=-1), ops.maxpool(x, 3, 2, 0)[0])


@pytest.mark.parametrize("groups", [1, 2])
def test_grouped_conv_index_of_she(groups):
    x = np.random.default_rng(2).standard_normal((1, 4, 7, 7))
    W = np.random.default_rng(3).standard_normal((6, 4 // groups, 3, 3))
    src, widx, shape = Q.conv_index((4, 7, 7), 3, 2, 1, groups, 6)
    xp = np.append(x.ravel(), 0.0)
    got = (xp[src] * W.ravel()[widx]).sum(axis=1).reshape(shape)
    np.testing.assert_allclose(got, ops.conv2d(x, W, 2, 1, groups=groups)[0][0])


def _maxpool_by_scan(x, k, s, p):
    """Reference: a strict ``v > best`` scan over the kernel offsets (the first maximum)."""
    fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=fill)
    n, c, h, w = x.shape
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    y = np.full((n, c, oh, ow), fill, dtype=x.dtype)
    idx = np.zeros((n, c, oh, ow), dtype=np.int16)
    for i in range(oh):
        for j in range(ow):
            for o in range(k * k):
                v = xp[:, :, i * s + o // k, j * s + o % k]
                better = (v > y[:, :, i, j]) | (o == 0)
                y[:, :, i, j] = np.where(better, v, y[:, :, i, j])
                idx[:, :, i, j] = np.where(better, o, idx[:, :, i, j])
    return y, idx


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
@pytest.mark.parametrize("k,s,p", [(3, 1, 1), (2, 2, 0), (3, 2, 1)])
def test_maxpool_keeps_the_first_maximum_and_routes_the_gradient_there(dtype, k, s, p):
    rng = np.random.default_rng(3)
    x = np.maximum(rng.integers(-3, 4, (2, 3, 7, 7)), 0).astype(dtype)  # many ties (ReLU zeros)
    y, idx = ops.maxpool(x, k, s, p)
    y_ref, idx_ref = _maxpool_by_scan(x, k, s, p)
    np.testing.assert_array_equal(y, y_ref)
    np.testing.assert_array_equal(idx, idx_ref)
    assert idx.dtype == np.int16 and y.dtype == x.dtype
    dy = rng.standard_normal(y.shape).astype(np.float32)
    dx = ops.maxpool_backward(dy, idx, x.shape, k, s, p)
    ref = np.zeros((2, 3, 7 + 2 * p, 7 + 2 * p), dtype=np.float32)
    n_i, c_i, i_i, j_i = np.indices(y.shape)
    np.add.at(ref, (n_i, c_i, i_i * s + idx // k, j_i * s + idx % k), dy)
    np.testing.assert_allclose(dx, ref[:, :, p:p + 7, p:p + 7], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("k,s,p", [(2, 2, 0), (3, 1, 1), (3, 2, 1), (3, 3, 2)])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_maxpool_keeps_the_first_maximum_and_routes_gradients_there(k, s, p, dtype):
    """The running-maximum kernel against the definition: an arg-max over each window's
    elements in kernel order (padding never wins), ties to the first; the gradient of every
    window goes to that element, summed where windows overlap."""
    rng = np.random.default_rng([k, s, p])
    x = rng.integers(-3, 3, (2, 3, 7, 8)).astype(dtype)  # small range: many ties
    y, idx = ops.maxpool(x, k, s, p)
    fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    win = ops.window_positions((3, 7, 8), k, s, p).reshape(3, *y.shape[2:], k * k)
    for n in range(2):
        vals = np.where(win >= 0, x[n].ravel()[win], fill)
        np.testing.assert_array_equal(idx[n], vals.argmax(axis=-1))
        np.testing.assert_array_equal(y[n], vals.max(axis=-1))
    if dtype is np.int64:
        return
    dy = rng.standard_normal(y.shape).astype(dtype)
    dx = ops.maxpool_backward(dy, idx, x.shape, k, s, p)
    ref = np.zeros(x.shape, dtype)
    for n in range(2):
        src = np.take_along_axis(win, idx[n][..., None].astype(np.int64), -1)[..., 0]
        np.add.at(ref[n].reshape(-1), src.ravel(), dy[n].ravel())
    np.testing.assert_allclose(dx, ref, rtol=1e-6)
    assert dx.dtype == dtype


@pytest.mark.parametrize("k,s,p,groups", [(5, 1, 0, 1), (3, 1, 1, 1), (5, 2, 1, 1), (3, 2, 1, 2),
                                          (3, 1, 1, 3)])
def test_conv_backward_dx_is_the_adjoint_of_the_windows(k, s, p, groups):
    """``dx`` of the convolution (accumulated channels-last) is the column gradient added back
    through :func:`ops._scatter`, the adjoint of the window view: the same numbers, bit for
    bit (the offsets are summed in the same order), and <dx, x> = <dy, conv(x)>."""
    rng = np.random.default_rng([k, s, p, groups])
    x = rng.standard_normal((3, 6, 9, 8)).astype(np.float32)
    W = rng.standard_normal((6, 6 // groups, k, k)).astype(np.float32)
    y, cols = ops.conv2d(x, W, s, p, groups)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    dx, dW, db = ops.conv2d_backward(dy, cols, x.shape, W, s, p, groups)
    ref = _conv_by_row_major_columns(x, W, s, p, groups, dy)[3]  # the _scatter adjoint
    np.testing.assert_array_equal(dx, ref)
    assert dx.dtype == x.dtype and dW.shape == W.shape and db.shape == (6,)
    np.testing.assert_allclose(float((dx * x).sum()), float((dy * y).sum()), rtol=1e-4)
    assert ops.conv2d_backward(dy, cols, x.shape, W, s, p, groups, need_dx=False)[0] is None


@pytest.mark.parametrize("k,s,p", [(2, 2, 0), (3, 1, 1), (5, 2, 2), (7, 3, 1), (8, 1, 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_meanpool_sums_windows_as_numpy_does(k, s, p, dtype):
    """The slice-by-slice window sums equal numpy's reduction over each window bit for bit
    (floats added in numpy's order: a changed order in a numpy release fails here)."""
    rng = np.random.default_rng([k, s, p])
    x = (rng.standard_normal((4, 3, 17, 16)) * 10.0 ** rng.uniform(-4, 4, (4, 3, 17, 16)))
    x = x.astype(dtype) if dtype is not np.int64 else rng.integers(-99, 99, x.shape)
    oh, ow = ops.out_size(17, k, s, p), ops.out_size(16, k, s, p)
    ref = ops.windows(ops._pad(x, p), k, s, oh, ow).sum(axis=(-2, -1))
    got = ops.meanpool(x, k, s, p, scaled=True)
    assert got.dtype == ref.dtype and got.tobytes() == ref.tobytes()
    if dtype is not np.int64:
        mean = ops.meanpool(x, k, s, p, scaled=False)
        assert mean.tobytes() == (ref / dtype(k * k)).tobytes()


def _conv_by_row_major_columns(x, W, s, p, groups, dy):
    """Reference: the convolution and its gradients from row-major im2col columns and a
    row-major ``dy`` matrix (the layouts before the K-major columns)."""
    cout, cg, k, _ = W.shape
    og = cout // groups
    cols, oh, ow = ops.im2col(x, k, s, p, groups)
    y = np.concatenate([c @ W[g * og:(g + 1) * og].reshape(og, -1).T
                        for g, c in enumerate(cols)], axis=1)
    dy2 = dy.transpose(0, 2, 3, 1).reshape(-1, cout)
    dW = np.concatenate([(dy2[:, g * og:(g + 1) * og].T @ c).reshape(og, cg, k, k)
                         for g, c in enumerate(cols)])
    dcols = np.concatenate([(dy2[:, g * og:(g + 1) * og] @ W[g * og:(g + 1) * og].reshape(og, -1))
                            .reshape(x.shape[0], oh, ow, cg, k, k) for g in range(groups)], axis=3)
    dx = ops._scatter(dcols.transpose(0, 3, 1, 2, 4, 5), x.shape, k, s, p)
    return ops.cols_to_image(y, x.shape[0], oh, ow), dW, dy2.sum(axis=0), dx


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n,c,hw,cout,k,s,p,groups", [
    (64, 1, 28, 20, 5, 1, 0, 1),   # falcon_lenet conv1 (one input channel)
    (64, 20, 12, 50, 5, 1, 0, 1),  # falcon_lenet conv2
    (16, 32, 14, 64, 5, 1, 2, 1),  # tabula_lenet conv2
    (64, 3, 14, 6, 3, 1, 1, 1),    # dshe_mnist
    (8, 1, 28, 5, 5, 2, 1, 1),     # cryptonets / she_mnist conv1
    (4, 1, 28, 1, 5, 6, 0, 1),     # she_mnist_reduced: one output map (a matrix-vector product)
    (5, 4, 9, 6, 3, 2, 1, 2),      # grouped
    (3, 6, 7, 6, 1, 1, 0, 3),      # two terms per sum (no K-major columns)
    (1, 2, 5, 4, 5, 1, 0, 1)])     # one output position
def test_kmajor_columns_agree_with_row_major_columns(dtype, n, c, hw, cout, k, s, p, groups):
    """conv2d builds float columns K-major (k*k slice copies) and its backward reads dy
    channels-first. BLAS does not promise the same bits for another operand layout (OpenBLAS's
    SkylakeX kernels differ in the last bit where its Haswell kernels agree), so the forward
    output and the gradients are checked against the row-major computation within the
    rounding bound of two K-term sums, 2*gamma_K * sum|a*b| (Higham, Thm. 3.5); db is the same
    row-major sum in both (same code, same bits). Bits across CPUs: tests/test_numerics.py."""
    rng = np.random.default_rng([n, c, hw, cout, k])
    x = rng.standard_normal((n, c, hw, hw)).astype(dtype)
    W = rng.standard_normal((cout, c // groups, k, k)).astype(dtype)
    y, cols = ops.conv2d(x, W, s, p, groups)
    dy = rng.standard_normal(y.shape).astype(dtype)
    dx, dW, db = ops.conv2d_backward(dy, cols, x.shape, W, s, p, groups)
    ref = _conv_by_row_major_columns(x, W, s, p, groups, dy)
    # the same computations on |x|, |W|, |dy| in float64 bound every sum of |terms|
    mags = _conv_by_row_major_columns(np.abs(x).astype(np.float64), np.abs(W).astype(np.float64),
                                      s, p, groups, np.abs(dy).astype(np.float64))
    eps = np.finfo(dtype).eps / 2
    terms = max(c // groups * k * k, dy.size // cout, cout // groups * k * k)
    gamma = terms * eps / (1 - terms * eps)
    for got, want, mag, what in zip((y, dW, db, dx), ref, mags, ("y", "dW", "db", "dx")):
        assert got.dtype == want.dtype and got.shape == want.shape, what
        if what == "db":
            assert got.tobytes() == np.ascontiguousarray(want).tobytes(), what
            continue
        err = np.abs(got.astype(np.float64) - want.astype(np.float64))
        assert np.all(err <= 2 * gamma * mag + np.finfo(dtype).tiny), what


def test_conv_backward_in_pieces_adds_the_same_bits(monkeypatch):
    """A column gradient too large for the cache is added back a few images at a time: the
    same sums in the same offset order as all at once."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((6, 8, 10, 10)).astype(np.float32)
    W = rng.standard_normal((12, 8, 5, 5)).astype(np.float32)
    y, cols = ops.conv2d(x, W, 1, 2)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    whole = ops.conv2d_backward(dy, cols, x.shape, W, 1, 2)[0]
    monkeypatch.setattr(ops, "_SCATTER_BYTES", (0, 1))  # one image at a time
    pieces = ops.conv2d_backward(dy, cols, x.shape, W, 1, 2)[0]
    assert pieces.tobytes() == whole.tobytes()


@pytest.mark.parametrize("k,s,p", [(3, 1, 1), (3, 2, 1), (5, 2, 2), (2, 2, 0), (3, 3, 1)])
def test_maxpool_backward_sums_overlapping_windows_in_offset_order(k, s, p):
    """Overlapping windows are scanned on the (H, W, N, C) layout; the gradient sums equal the
    (N, C, H, W) offset-by-offset sums bit for bit."""
    rng = np.random.default_rng([k, s, p, 1])
    x = rng.integers(-3, 3, (3, 4, 9, 8)).astype(np.float32)
    y, idx = ops.maxpool(x, k, s, p)
    dy = (rng.standard_normal(y.shape) * 10.0 ** rng.uniform(-3, 3, y.shape)).astype(np.float32)
    dx = ops.maxpool_backward(dy, idx, x.shape, k, s, p)
    ref = np.zeros((3, 4, 9 + 2 * p, 8 + 2 * p), np.float32)
    for o, view in ops.window_offsets(ref, k, s, *y.shape[2:]):
        view += dy * (np.asarray(idx) == o)
    assert dx.tobytes() == np.ascontiguousarray(ref[:, :, p:p + 9, p:p + 8]).tobytes()
    # the arg-max the backward pass reads can come in either memory layout
    again = ops.maxpool_backward(dy, np.ascontiguousarray(idx), x.shape, k, s, p)
    assert again.tobytes() == dx.tobytes()
