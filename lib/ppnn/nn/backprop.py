"""Backpropagation: a training-mode forward pass that keeps caches, and its backward pass.

Training mode differs from :func:`ppnn.nn.forward.forward` only in batch-norm, which uses the
batch statistics (and updates the running ones with ``momentum``). Gradients come back in the
same nested list-of-dicts layout as the parameters (keys ``W``, ``b``, ``gamma``, ``beta``).
"""

from __future__ import annotations

import numpy as np

from . import ops
from .layers import (
    BatchNorm,
    ChannelShuffle,
    Conv2d,
    Dense,
    Flatten,
    Layer,
    MaxPool,
    MeanPool,
    ReLU,
    Residual,
    Square,
)

__all__ = ["forward_train", "backward", "softmax_cross_entropy", "TRAINABLE", "first_trainable"]

TRAINABLE = ("W", "b", "gamma", "beta")


def first_trainable(layers) -> int:
    """Index of the first layer with parameters (``len(layers)`` if none). Back-propagation
    stops there: no parameter below it needs the error, so the error with respect to that
    layer's input (e.g. the image, under a leading ``Flatten``) is never computed."""
    for i, layer in enumerate(layers):
        if isinstance(layer, Dense | Conv2d | BatchNorm | Residual):
            return i
    return len(layers)


def _fwd(layer: Layer, p: dict, x: np.ndarray, momentum: float):
    """Forward one leaf layer; returns ``(y, cache)``."""
    if isinstance(layer, Conv2d):
        y, cols = ops.conv2d(x, p["W"], layer.stride, layer.padding, layer.groups)
        if layer.bias:
            y += p["b"].reshape(1, -1, 1, 1)
        return y, (cols, x.shape)
    if isinstance(layer, Dense):
        y = x @ p["W"].T
        return (y + p["b"] if layer.bias else y), x
    if isinstance(layer, ReLU):
        mask = x > 0
        return x * mask, mask
    if isinstance(layer, Square):
        return x * x, x
    if isinstance(layer, MaxPool):
        y, idx = ops.maxpool(x, layer.kernel, layer.step, layer.padding)
        return y, (idx, x.shape)
    if isinstance(layer, MeanPool):
        return ops.meanpool(x, layer.kernel, layer.step, layer.padding, layer.scaled), x.shape
    if isinstance(layer, BatchNorm):
        y, cache, mean, var = ops.batchnorm_train(x, p["gamma"], p["beta"], layer.eps)
        p["mean"] = ((1 - momentum) * p["mean"] + momentum * mean).astype(p["mean"].dtype)
        n = x.size // mean.size
        unbiased = var * (n / max(n - 1, 1))
        p["var"] = ((1 - momentum) * p["var"] + momentum * unbiased).astype(p["var"].dtype)
        return y, cache
    if isinstance(layer, Flatten):
        return x.reshape(x.shape[0], -1), x.shape
    if isinstance(layer, ChannelShuffle):
        return ops.channel_shuffle(x, layer.groups), None
    raise TypeError(f"no training forward for layer kind {layer.kind}")  # pragma: no cover


def forward_train(layers, params, x, momentum: float = 0.1):
    """Training-mode forward over a layer sequence; returns ``(y, caches)``.

    Batch-norm running statistics in ``params`` are updated in place."""
    caches = []
    for layer, p in zip(layers, params):
        if isinstance(layer, Residual):
            yb, cb = forward_train(layer.body, p["body"], x, momentum)
            ys, cs = forward_train(layer.shortcut, p["shortcut"], x, momentum)
            x = np.concatenate([ys, yb], axis=1) if layer.merge == "concat" else yb + ys
            caches.append((cb, cs, ys.shape[1]))
        else:
            x, c = _fwd(layer, p, x, momentum)
            caches.append(c)
    return x, caches


def _bwd(layer: Layer, p: dict, cache, dy: np.ndarray, need_dx: bool):
    """Backward one leaf layer; returns ``(dx, grads)``."""
    if isinstance(layer, Conv2d):
        cols, x_shape = cache
        dx, dW, db = ops.conv2d_backward(dy, cols, x_shape, p["W"], layer.stride,
                                         layer.padding, layer.groups, need_dx)
        return dx, ({"W": dW, "b": db} if layer.bias else {"W": dW})
    if isinstance(layer, Dense):
        x = cache
        g = {"W": dy.T @ x}
        if layer.bias:
            g["b"] = dy.sum(axis=0)
        return (dy @ p["W"] if need_dx else None), g
    if isinstance(layer, ReLU):
        return dy * cache, {}
    if isinstance(layer, Square):
        return 2 * cache * dy, {}
    if isinstance(layer, MaxPool):
        idx, x_shape = cache
        return ops.maxpool_backward(dy, idx, x_shape, layer.kernel, layer.step,
                                    layer.padding), {}
    if isinstance(layer, MeanPool):
        return ops.meanpool_backward(dy, cache, layer.kernel, layer.step, layer.padding,
                                     layer.scaled), {}
    if isinstance(layer, BatchNorm):
        dx, dgamma, dbeta = ops.batchnorm_backward(dy, cache, p["gamma"])
        return dx, {"gamma": dgamma, "beta": dbeta}
    if isinstance(layer, Flatten):
        return dy.reshape(cache), {}
    if isinstance(layer, ChannelShuffle):
        return ops.channel_shuffle(dy, layer.groups, inverse=True), {}
    raise TypeError(f"no backward for layer kind {layer.kind}")  # pragma: no cover


def backward(layers, params, caches, dy, need_dx: bool = False):
    """Backward over a layer sequence; returns ``(dx, grads)`` (``dx`` None unless asked)."""
    grads: list = [None] * len(layers)
    stop = 0 if need_dx else first_trainable(layers)
    for i in range(len(layers) - 1, -1, -1):
        layer, p = layers[i], params[i]
        if i < stop:  # below the first parameter: nothing left to learn
            grads[i] = {}
            continue
        last = i == stop and not need_dx
        if isinstance(layer, Residual):
            cb, cs, c_short = caches[i]
            dyb, dys = (dy[:, c_short:], dy[:, :c_short]) if layer.merge == "concat" else (dy, dy)
            dxb, gb = backward(layer.body, p["body"], cb, dyb, need_dx=True)
            dxs, gs = backward(layer.shortcut, p["shortcut"], cs, dys, need_dx=True)
            grads[i] = {"body": gb, "shortcut": gs}
            dy = dxb + dxs
        else:
            dy, grads[i] = _bwd(layer, p, caches[i], dy, need_dx=not last)
    return dy, grads


def softmax_cross_entropy(logits: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean cross-entropy of integer labels ``y`` and its gradient w.r.t. ``logits``."""
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    n = logits.shape[0]
    loss = -float(logp[np.arange(n), y].mean())
    g = np.exp(logp)
    g[np.arange(n), y] -= 1
    return loss, (g / n).astype(logits.dtype)
