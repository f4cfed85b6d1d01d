"""Vectorized numpy kernels (forward and backward) for the layer kinds of :mod:`ppnn.nn`.

Arrays carry the batch axis first: images ``(N, C, H, W)``, flat ``(N, n)``. Convolution is
im2col (a strided window view, then one matrix product); pooling reads the same window view.
Backward passes scatter gradients with a loop over the ``k * k`` kernel offsets only -- every
offset is one vectorized slice-add over the whole batch.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

__all__ = [
    "out_size", "windows", "window_offsets", "pool_windows", "window_positions", "pool_index",
    "conv_index", "im2col", "cols_to_image", "conv2d", "conv2d_backward", "maxpool",
    "maxpool_backward", "meanpool", "meanpool_backward", "batchnorm_train", "batchnorm_backward",
    "bn_axes", "channel_shuffle",
]


def channel_shuffle(x: np.ndarray, groups: int, inverse: bool = False) -> np.ndarray:
    """ShuffleNet's channel permutation of ``(N, C, ...)``: channel ``g * C/groups + j`` moves
    to ``j * groups + g``; ``inverse`` undoes it (the backward pass)."""
    n, c = x.shape[:2]
    grid = (c // groups, groups) if inverse else (groups, c // groups)
    return x.reshape(n, *grid, *x.shape[2:]).swapaxes(1, 2).reshape(x.shape)


def out_size(n: int, k: int, s: int, p: int) -> int:
    return (n + 2 * p - k) // s + 1


def _pad(x: np.ndarray, p: int, value=0) -> np.ndarray:
    if p == 0:
        return x
    return np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=value)


def windows(xp: np.ndarray, k: int, s: int, oh: int, ow: int) -> np.ndarray:
    """View ``(N, C, oh, ow, k, k)`` of the ``k x k`` windows at stride ``s`` of padded ``xp``."""
    w = sliding_window_view(xp, (k, k), axis=(2, 3))
    return w[:, :, : (oh - 1) * s + 1: s, : (ow - 1) * s + 1: s]


def pool_windows(x: np.ndarray, k: int, s: int) -> np.ndarray:
    """``(N, C, oh, ow, k*k)``: the unpadded ``k x k`` windows at stride ``s`` of ``x`` (N, C,
    H, W), flattened -- what a max- or sum-pool reduces over the last axis."""
    n, c, h, w = x.shape
    oh, ow = out_size(h, k, s, 0), out_size(w, k, s, 0)
    return windows(x, k, s, oh, ow).reshape(n, c, oh, ow, k * k)


def window_positions(in_shape, k: int, s: int, p: int) -> np.ndarray:
    """``(C, OH, OW, k, k)``: the flat index into a ``(C, H, W)`` input of every element of
    every ``k x k`` window at stride ``s`` with zero padding ``p``; ``-1`` marks padding. The
    routing tables of protocols that gather inputs by index (SwaNN's packed ciphertexts,
    SHE's gate circuits) are all views of this one array."""
    c, h, w = in_shape
    pos = np.arange(c * h * w, dtype=np.int64).reshape(1, c, h, w)
    oh, ow = out_size(h, k, s, p), out_size(w, k, s, p)
    return windows(_pad(pos, p, -1), k, s, oh, ow)[0]


def pool_index(in_shape, k: int, s: int, p: int) -> np.ndarray:
    """``(C*OH*OW, k*k)``: each channel's pooling windows as flat input positions (-1 = pad)."""
    win = window_positions(in_shape, k, s, p)
    return win.reshape(-1, k * k)


def conv_index(in_shape, k: int, s: int, p: int) -> np.ndarray:
    """``(OH*OW, C*k*k)``: the im2col rows of a convolution as flat input positions (-1 =
    pad); columns in the order of ``W.reshape(C_out, C*k*k)``."""
    win = window_positions(in_shape, k, s, p)
    c, oh, ow = win.shape[:3]
    return win.transpose(1, 2, 0, 3, 4).reshape(oh * ow, c * k * k)


def _scatter(dcols: np.ndarray, shape, k: int, s: int, p: int) -> np.ndarray:
    """Adjoint of :func:`windows`: add ``dcols (N, C, oh, ow, k, k)`` back onto the input.

    The offsets are added in order ``(0, 0), (0, 1), ...``; overlapping windows (``s < k``)
    onto a ``(H, W, N, C)`` buffer, where one window row of every image and channel is a long
    contiguous run (the same sums, in the same order, as on the ``(N, C, H, W)`` layout)."""
    n, c, h, w = shape
    oh, ow = dcols.shape[2], dcols.shape[3]
    if s < k:
        dxp = np.zeros((h + 2 * p, w + 2 * p, n, c), dtype=dcols.dtype)
        for o, view in _hwnc_offsets(dxp, k, s, oh, ow):
            view += dcols[..., o // k, o % k].transpose(2, 3, 0, 1)
        return _from_hwnc(dxp[p: p + h, p: p + w])
    dxp = np.zeros((n, c, h + 2 * p, w + 2 * p), dtype=dcols.dtype)
    for o, view in window_offsets(dxp, k, s, oh, ow):
        view += dcols[..., o // k, o % k]
    return dxp[:, :, p: p + h, p: p + w]


def _to_hwnc(x: np.ndarray, p: int = 0, fill=0) -> np.ndarray:
    """``x (N, C, H, W)`` copied to ``(H + 2p, W + 2p, N, C)`` with a border of ``fill``: the
    layout in which a window offset of the whole batch is one slice with long contiguous rows
    (the kernels below loop over the ``k*k`` offsets)."""
    n, c, h, w = x.shape
    if p == 0:
        return np.ascontiguousarray(x.transpose(2, 3, 0, 1))
    out = np.full((h + 2 * p, w + 2 * p, n, c), fill, dtype=x.dtype)
    out[p: p + h, p: p + w] = x.transpose(2, 3, 0, 1)
    return out


def _from_hwnc(y: np.ndarray) -> np.ndarray:
    """``(H, W, N, C)`` -> a contiguous ``(N, C, H, W)`` array."""
    return np.ascontiguousarray(y.transpose(2, 3, 0, 1))


def _hwnc_offsets(xp: np.ndarray, k: int, s: int, oh: int, ow: int):
    """:func:`window_offsets` over the first two axes of an ``(H, W, N, C)`` array."""
    for i in range(k):
        for j in range(k):
            yield i * k + j, xp[i: i + (oh - 1) * s + 1: s, j: j + (ow - 1) * s + 1: s]


# -- convolution -----------------------------------------------------------------------------
def im2col(x, k: int, stride: int, padding: int, groups: int = 1) -> tuple[list, int, int]:
    """``(cols, oh, ow)``: one ``(N*oh*ow, C/groups*k*k)`` matrix per group, rows in
    ``(n, oh, ow)`` order and columns in the order of ``W.reshape(C_out/groups, -1)``."""
    n, c, h, w = x.shape
    oh, ow = out_size(h, k, stride, padding), out_size(w, k, stride, padding)
    win = windows(_pad(x, padding), k, stride, oh, ow)
    cg = c // groups
    return [win[:, g * cg:(g + 1) * cg].transpose(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, -1)
            for g in range(groups)], oh, ow


def cols_to_image(out: np.ndarray, n: int, oh: int, ow: int) -> np.ndarray:
    """``(N*oh*ow, C_out)`` products of :func:`im2col` columns -> ``(N, C_out, oh, ow)``."""
    return np.ascontiguousarray(out.reshape(n, oh, ow, -1).transpose(0, 3, 1, 2))


#: :func:`conv2d_backward` adds a column gradient larger than the first number back to the
#: input in pieces of about the second (that stay in the cache over the ``k*k`` offsets)
_SCATTER_BYTES = (16 << 20, 4 << 20)


def _kmajor(dtype, og: int, kg: int, m: int) -> bool:
    """Whether :func:`conv2d` builds its columns K-major (:func:`_kmajor_cols`): float BLAS
    products with at least 2 outputs per group, 3 terms per sum and 2 rows. A speed choice:
    BLAS promises no particular bits for either layout, but under the pinned kernels
    (:mod:`ppnn.numerics`: OpenBLAS Haswell) these shapes give the row-major bits, so the
    trained weights did not move when the layout changed; a product with one output column or
    row runs as a matrix-vector product whose bits depend on the layout there, so it keeps
    the row-major columns. Agreement within rounding is tested for every layout
    (tests/test_nn_windows.py), bits across CPUs under the pin (tests/test_numerics.py)."""
    return np.dtype(dtype).kind == "f" and og > 1 and kg > 2 and m > 1


def _kmajor_cols(x, k: int, stride: int, padding: int, groups: int) -> tuple[list, int, int]:
    """:func:`im2col` for BLAS: the same ``(N*oh*ow, C/groups*k*k)`` matrices, as transposed
    views of one ``(C*k*k, N*oh*ow)`` buffer filled by ``k*k`` slice copies with long rows
    (the generic copy of the 6-D window view moves ``k`` elements per inner loop)."""
    n, c, h, w = x.shape
    oh, ow = out_size(h, k, stride, padding), out_size(w, k, stride, padding)
    buf = np.empty((c, k, k, n, oh, ow), dtype=x.dtype)
    xt = _pad(x, padding).transpose(1, 0, 2, 3)  # (C, N, H, W) view
    for o, view in window_offsets(xt, k, stride, oh, ow):
        buf[:, o // k, o % k] = view
    rows = buf.reshape(c * k * k, n * oh * ow)
    cg = (c // groups) * k * k
    return [rows[g * cg:(g + 1) * cg].T for g in range(groups)], oh, ow


def conv2d(x, W, stride: int, padding: int, groups: int = 1, matmul=np.matmul):
    """Convolution (no bias) of ``x (N, C, H, W)`` with ``W (Cout, C/groups, k, k)``; returns
    ``(y, cols)`` where ``cols`` (one im2col matrix per group) is kept for the backward pass.
    ``matmul`` lets the fixed-point oracle reuse the same im2col with ring arithmetic."""
    cout, cg, k, _ = W.shape
    og = cout // groups
    n, _, h, w = x.shape
    m = n * out_size(h, k, stride, padding) * out_size(w, k, stride, padding)
    if matmul is np.matmul and _kmajor(x.dtype, og, cg * k * k, m):
        cols, oh, ow = _kmajor_cols(x, k, stride, padding, groups)
    else:
        cols, oh, ow = im2col(x, k, stride, padding, groups)
    outs = [matmul(col, W[g * og:(g + 1) * og].reshape(og, -1).T) for g, col in enumerate(cols)]
    out = outs[0] if groups == 1 else np.concatenate(outs, axis=1)
    return cols_to_image(out, x.shape[0], oh, ow), cols


def conv2d_backward(dy, cols, x_shape, W, stride: int, padding: int, groups: int = 1,
                    need_dx: bool = True):
    """Gradients ``(dx, dW, db)`` of :func:`conv2d` (``dx`` is None unless ``need_dx``).

    With :func:`_kmajor` columns, the products read ``dy`` as ``(N*oh*ow, Cout)`` through a
    transposed view of one channels-first copy (under the pinned kernels, the bits of the
    row-major layout; ``db`` keeps the row-major sum, whose order numpy fixes by the layout).
    ``dx`` adds each kernel offset's columns back in offset order ``(0, 0), (0, 1), ...``
    onto a channels-last buffer, where a window row of every channel is one contiguous run
    (the same sums as :func:`_scatter`)."""
    n, cout, oh, ow = dy.shape
    _, cg, k, _ = W.shape
    og = cout // groups
    dy2 = dy.transpose(0, 2, 3, 1).reshape(-1, cout)  # (N*oh*ow, Cout), row-major
    db = dy2.sum(axis=0)
    if _kmajor(dy.dtype, og, cg * k * k, n * oh * ow):  # columns K-major: dy channels-first
        dy2 = np.ascontiguousarray(dy.transpose(1, 0, 2, 3)).reshape(cout, -1).T
    dW = np.empty_like(W)
    for g in range(groups):
        dW[g * og:(g + 1) * og] = (dy2[:, g * og:(g + 1) * og].T @ cols[g]).reshape(og, cg, k, k)
    if not need_dx:
        return None, dW, db
    _, c, h, w = x_shape
    p, s = padding, stride
    dxp = np.zeros((n, h + 2 * p, w + 2 * p, c), dtype=dy.dtype)  # channels last in memory
    # a column matrix larger than the cache is added back a few images at a time (each
    # image's sums keep their offset order): 25 passes over 40 MB cost 3x more than from cache
    image_bytes = oh * ow * cg * k * k * dy.itemsize
    step = n if n * image_bytes <= _SCATTER_BYTES[0] else max(1, _SCATTER_BYTES[1] // image_bytes)
    for g in range(groups):
        dc = (dy2[:, g * og:(g + 1) * og] @ W[g * og:(g + 1) * og].reshape(og, -1)
              ).reshape(n, oh, ow, cg, k, k).transpose(0, 3, 1, 2, 4, 5)
        part = dxp[..., g * cg:(g + 1) * cg].transpose(0, 3, 1, 2)  # (N, C, H, W) view
        for a in range(0, n, step):
            for o, view in window_offsets(part[a:a + step], k, s, oh, ow):
                view += dc[a:a + step, ..., o // k, o % k]
    return dxp[:, p: p + h, p: p + w].transpose(0, 3, 1, 2), dW, db


# -- pooling ---------------------------------------------------------------------------------
def window_offsets(xp, k: int, s: int, oh: int, ow: int):
    """Yield ``(o, view)`` for the ``k*k`` kernel offsets in order ``o = i*k + j``: ``view``
    (strided, no copy) holds the element at offset ``o`` of every ``oh x ow`` window at
    stride ``s`` over the last two axes of ``xp`` (any leading axes: batch, channels,
    parties)."""
    for i in range(k):
        for j in range(k):
            yield i * k + j, xp[..., i: i + (oh - 1) * s + 1: s, j: j + (ow - 1) * s + 1: s]


def maxpool(x, k: int, s: int, p: int):
    """Max over windows (padding is -inf); returns ``(y, argmax)`` with the window offset of
    the first maximum: a running maximum over the ``k*k`` kernel offsets (vectorized over the
    batch), an offset replacing the best only when strictly larger -- what an arg-max over
    the stacked offsets returns, without stacking them.

    Overlapping windows (``s < k``) are scanned on the ``(H, W, N, C)`` layout
    (:func:`_to_hwnc`, long contiguous rows; ``argmax`` is then an ``(N, C, oh, ow)`` view of
    that layout, which :func:`maxpool_backward` reads without a copy); disjoint windows on
    strided views of ``x`` itself, where the two layout copies would cost more than they save."""
    n, c, h, w = x.shape
    oh, ow = out_size(h, k, s, p), out_size(w, k, s, p)
    fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    hwnc = s < k
    views = (_hwnc_offsets(_to_hwnc(x, p, fill), k, s, oh, ow) if hwnc
             else window_offsets(_pad(x, p, fill), k, s, oh, ow))
    _, first = next(views)
    y = first.copy()
    idx = np.zeros(y.shape, dtype=np.int16)
    for o, v in views:
        better = v > y
        idx[better] = o
        np.maximum(y, v, out=y)
    if hwnc:
        return _from_hwnc(y), idx.transpose(2, 3, 0, 1)
    return y, idx


def maxpool_backward(dy, idx, x_shape, k: int, s: int, p: int):
    n, c, h, w = x_shape
    oh, ow = dy.shape[2], dy.shape[3]
    if s < k:  # overlapping windows: a sum of the windows' gradients, on maxpool's layout
        idx, dyt = _to_hwnc(idx), _to_hwnc(dy)  # idx from maxpool: no copy
        dxp = np.zeros((h + 2 * p, w + 2 * p, n, c), dtype=dy.dtype)
        for o, view in _hwnc_offsets(dxp, k, s, oh, ow):  # in offset order
            view += dyt * (idx == o)
        return _from_hwnc(dxp[p: p + h, p: p + w])
    # disjoint windows: every input in at most one window -- a copy, not a sum
    dxp = np.zeros((n, c, h + 2 * p, w + 2 * p), dtype=dy.dtype)
    for o, view in window_offsets(dxp, k, s, oh, ow):
        np.copyto(view, dy, where=idx == o)
    return dxp[:, :, p: p + h, p: p + w]


def meanpool(x, k: int, s: int, p: int, scaled: bool):
    """Window sums (``scaled``) or means (divisor ``k*k``, zero padding counted)."""
    n, c, h, w = x.shape
    oh, ow = out_size(h, k, s, p), out_size(w, k, s, p)
    xp = _pad(x, p)
    if k >= 8:  # numpy sums rows of 8 or more elements in unrolled blocks
        tot = windows(xp, k, s, oh, ow).sum(axis=(-2, -1))
    else:  # numpy's order for short rows -- each window row left to right, then the rows --
        tot = row = None  # as k*k slice additions over the whole batch: same bits, no 6-D view
        for o, v in window_offsets(xp, k, s, oh, ow):
            row = v.copy() if o % k == 0 else np.add(row, v, out=row)
            if o % k == k - 1:
                tot = row if tot is None else np.add(tot, row, out=tot)
    return tot if scaled else tot / x.dtype.type(k * k)


def meanpool_backward(dy, x_shape, k: int, s: int, p: int, scaled: bool):
    g = dy if scaled else dy / dy.dtype.type(k * k)
    dcols = np.broadcast_to(g[..., None, None], (*g.shape, k, k))
    return _scatter(dcols, x_shape, k, s, p)


# -- batch normalisation -----------------------------------------------------------------------
def bn_axes(x: np.ndarray) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Reduction axes and the broadcast shape of per-channel statistics."""
    if x.ndim == 4:
        return (0, 2, 3), (1, -1, 1, 1)
    return (0,), (1, -1)


def batchnorm_train(x, gamma, beta, eps: float):
    """Batch statistics forward; returns ``(y, cache, mean, var)``."""
    axes, shp = bn_axes(x)
    mean = x.mean(axis=axes)
    var = x.var(axis=axes)
    inv = 1.0 / np.sqrt(var + eps)
    xhat = (x - mean.reshape(shp)) * inv.reshape(shp)
    y = xhat * gamma.reshape(shp) + beta.reshape(shp)
    return y, (xhat, inv), mean, var


def batchnorm_backward(dy, cache, gamma):
    xhat, inv = cache
    axes, shp = bn_axes(dy)
    m = dy.size // gamma.size
    dbeta = dy.sum(axis=axes)
    dgamma = (dy * xhat).sum(axis=axes)
    dxhat = dy * gamma.reshape(shp)
    dx = (inv.reshape(shp) / m) * (m * dxhat - dxhat.sum(axis=axes).reshape(shp)
                                   - xhat * (dxhat * xhat).sum(axis=axes).reshape(shp))
    return dx, dgamma, dbeta
