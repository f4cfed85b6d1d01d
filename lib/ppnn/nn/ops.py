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
    "bn_axes",
]


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
    """Adjoint of :func:`windows`: add ``dcols (N, C, oh, ow, k, k)`` back onto the input."""
    n, c, h, w = shape
    oh, ow = dcols.shape[2], dcols.shape[3]
    dxp = np.zeros((n, c, h + 2 * p, w + 2 * p), dtype=dcols.dtype)
    for i in range(k):
        for j in range(k):
            dxp[:, :, i: i + (oh - 1) * s + 1: s, j: j + (ow - 1) * s + 1: s] += dcols[..., i, j]
    return dxp[:, :, p: p + h, p: p + w]


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


def conv2d(x, W, stride: int, padding: int, groups: int = 1, matmul=np.matmul):
    """Convolution (no bias) of ``x (N, C, H, W)`` with ``W (Cout, C/groups, k, k)``; returns
    ``(y, cols)`` where ``cols`` (one im2col matrix per group) is kept for the backward pass.
    ``matmul`` lets the fixed-point oracle reuse the same im2col with ring arithmetic."""
    cout, _, k, _ = W.shape
    cols, oh, ow = im2col(x, k, stride, padding, groups)
    og = cout // groups
    outs = [matmul(col, W[g * og:(g + 1) * og].reshape(og, -1).T) for g, col in enumerate(cols)]
    out = outs[0] if groups == 1 else np.concatenate(outs, axis=1)
    return cols_to_image(out, x.shape[0], oh, ow), cols


def conv2d_backward(dy, cols, x_shape, W, stride: int, padding: int, groups: int = 1,
                    need_dx: bool = True):
    """Gradients ``(dx, dW, db)`` of :func:`conv2d` (``dx`` is None unless ``need_dx``).

    ``dx`` adds each kernel offset's columns back in offset order ``(0, 0), (0, 1), ...`` onto
    a channels-last buffer, where a window row of every channel is one contiguous run (the
    same sums as :func:`_scatter` on the channels-first layout, several times faster)."""
    n, cout, oh, ow = dy.shape
    _, cg, k, _ = W.shape
    og = cout // groups
    dy2 = dy.transpose(0, 2, 3, 1).reshape(-1, cout)
    dW = np.empty_like(W)
    for g in range(groups):
        dW[g * og:(g + 1) * og] = (dy2[:, g * og:(g + 1) * og].T @ cols[g]).reshape(og, cg, k, k)
    db = dy2.sum(axis=0)
    if not need_dx:
        return None, dW, db
    _, c, h, w = x_shape
    p, s = padding, stride
    dxp = np.zeros((n, h + 2 * p, w + 2 * p, c), dtype=dy.dtype)  # channels last in memory
    for g in range(groups):
        dc = (dy2[:, g * og:(g + 1) * og] @ W[g * og:(g + 1) * og].reshape(og, -1)
              ).reshape(n, oh, ow, cg, k, k).transpose(0, 3, 1, 2, 4, 5)
        part = dxp[..., g * cg:(g + 1) * cg].transpose(0, 3, 1, 2)  # (N, C, H, W) view
        for o, view in window_offsets(part, k, s, oh, ow):
            view += dc[..., o // k, o % k]
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
    the stacked offsets returns, without stacking them."""
    n, c, h, w = x.shape
    oh, ow = out_size(h, k, s, p), out_size(w, k, s, p)
    fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    views = window_offsets(_pad(x, p, fill), k, s, oh, ow)
    _, first = next(views)
    y = first.copy()
    idx = np.zeros(y.shape, dtype=np.int16)
    for o, v in views:
        better = v > y
        idx[better] = o
        np.maximum(y, v, out=y)
    return y, idx


def maxpool_backward(dy, idx, x_shape, k: int, s: int, p: int):
    n, c, h, w = x_shape
    oh, ow = dy.shape[2], dy.shape[3]
    dxp = np.zeros((n, c, h + 2 * p, w + 2 * p), dtype=dy.dtype)
    disjoint = s >= k  # every input in at most one window: a copy, not a sum
    for o, view in window_offsets(dxp, k, s, oh, ow):  # offsets in order: the same sums as before
        hit = idx == o
        if disjoint:
            np.copyto(view, dy, where=hit)
        else:
            view += dy * hit
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
