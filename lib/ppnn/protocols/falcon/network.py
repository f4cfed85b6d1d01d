"""Private inference and training of ``ppnn.nn`` networks with Falcon's protocols.

The model owner shares the parameters and the data holder the images; P0, P1, P2 then run
every layer on replicated shares (each layer is one protocol with its own ledger label, so a
malicious run verifies its products at the end of every layer):

* ``Conv2d`` -- im2col on each share component (local), one matrix product, truncation;
* ``Dense`` -- one matrix product and truncation; biases are added locally;
* ``ReLU`` -- Algorithm 3 (the DReLU bits are kept for back-propagation);
* ``MaxPool`` -- Algorithm 4 over the ``k x k`` windows (the one-hot argmax is kept);
* ``MeanPool`` -- local window sums and a public scaling; ``Flatten`` -- local;
* ``BatchNorm`` -- Algorithm 7 with batch statistics in training; at inference the model
  owner folds the running statistics into a shared per-channel affine ``a x + c``;
* ``Residual`` -- the body and the shortcut run on the same shares, layer by layer (labels
  ``<block>.body.<layer>``, ``<block>.shortcut.<layer>``), and the Add is local: each party
  adds its two components of the two branches (both at the same fixed-point scale; the
  power-of-two rescaling puts both branches at one scale), nothing is sent. Inference only.

Training (forward, backward, SGD on shares) uses the loss of Falcon's public code: the output
error ``delta = y_hat - onehot(y)`` (the gradient of 1/2 ||y_hat - y||^2), and plain SGD with a
learning rate ``2^-lr_shift / batch`` applied as one truncation of the weight gradient.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ppnn.nn import (
    BatchNorm,
    Conv2d,
    Dense,
    Flatten,
    MaxPool,
    MeanPool,
    Network,
    ReLU,
    Residual,
    ops,
)
from ppnn.nn.backprop import first_trainable
from ppnn.nn.network import _auto_names

from .comparison import relu
from .numeric import batchnorm_backward, batchnorm_forward
from .pooling import maxpool
from .runtime import RSS, Falcon

__all__ = ["SecureModel", "share_model", "reveal_model", "secure_forward", "secure_backward",
           "sgd_step", "train_step", "output_delta", "SUPPORTED", "conv_grad_shift"]

SUPPORTED = (Conv2d, Dense, ReLU, MaxPool, MeanPool, BatchNorm, Flatten, Residual)


@dataclass
class SecureModel:
    """Shared parameters of ``net``: per layer a dict of RSS (``W`` is laid out for ``x @ W``:
    ``(n_in, n_out)`` for Dense, ``(C k k, C_out)`` for Conv2d)."""

    net: Network
    params: list[dict[str, RSS]]
    bn_running: list[dict[str, np.ndarray]] = field(default_factory=list)


def _check_net(net: Network) -> None:
    for node in net.leaves():
        name, layer = node.name, node.layer
        if not isinstance(layer, SUPPORTED):
            raise ValueError(f"layer {name} ({layer.kind}) is not supported by Falcon here; "
                             f"supported: {[c.__name__ for c in SUPPORTED]}")
        if isinstance(layer, Conv2d) and layer.groups != 1:
            raise ValueError(f"layer {name}: grouped convolutions are not supported")
        if isinstance(layer, MaxPool | MeanPool) and layer.padding:
            raise ValueError(f"layer {name}: padded pooling is not supported")


def share_model(fal: Falcon, net: Network, params) -> SecureModel:
    """The model owner encodes the float parameters in fixed point and shares them (a
    residual block's entry holds ``{"body": [...], "shortcut": [...]}`` of shared layers)."""
    _check_net(net)
    out = _share_seq(fal, net.layers, params)
    return SecureModel(net, out, [{} for _ in net.layers])


def _share_seq(fal: Falcon, layers, params) -> list:
    out = []
    for layer, p in zip(layers, params):
        if isinstance(layer, Residual):
            out.append({"body": _share_seq(fal, layer.body, p["body"]),
                        "shortcut": _share_seq(fal, layer.shortcut, p["shortcut"])})
            continue
        q: dict[str, RSS] = {}
        if isinstance(layer, Dense):
            q["W"] = fal.share_fixed(np.asarray(p["W"], np.float64).T)
        elif isinstance(layer, Conv2d):
            q["W"] = fal.share_fixed(np.asarray(p["W"], np.float64)
                                     .reshape(layer.out_channels, -1).T)
        if isinstance(layer, Dense | Conv2d) and layer.bias:
            q["b"] = fal.share_fixed(np.asarray(p["b"], np.float64))
        if isinstance(layer, BatchNorm):
            g, b = np.asarray(p["gamma"], np.float64), np.asarray(p["beta"], np.float64)
            a = g / np.sqrt(np.asarray(p["var"], np.float64) + layer.eps)
            q["gamma"], q["beta"] = fal.share_fixed(g), fal.share_fixed(b)
            q["a"] = fal.share_fixed(a)
            q["c"] = fal.share_fixed(b - np.asarray(p["mean"], np.float64) * a)
        out.append(q)
    return out


def reveal_model(fal: Falcon, model: SecureModel) -> list[dict[str, np.ndarray]]:
    """Reconstruct float parameters in ``ppnn.nn`` layout (for evaluation in the clear)."""
    return _reveal_seq(fal, model.net.layers, model.params)


def _reveal_seq(fal: Falcon, layers, params) -> list:
    out = []
    for layer, q in zip(layers, params):
        if isinstance(layer, Residual):
            out.append({"body": _reveal_seq(fal, layer.body, q["body"]),
                        "shortcut": _reveal_seq(fal, layer.shortcut, q["shortcut"])})
            continue
        p = {}
        if "W" in q:
            w = fal.reveal_fixed(q["W"]).T
            p["W"] = w.reshape(layer.out_channels, -1, layer.kernel, layer.kernel) if isinstance(
                layer, Conv2d) else w
        if "b" in q:
            p["b"] = fal.reveal_fixed(q["b"])
        if isinstance(layer, BatchNorm):
            p["gamma"], p["beta"] = fal.reveal_fixed(q["gamma"]), fal.reveal_fixed(q["beta"])
            p["mean"] = np.zeros_like(p["gamma"])
            p["var"] = np.ones_like(p["gamma"]) - layer.eps
        out.append(p)
    return out


def _map(x: RSS, fn) -> RSS:
    """Apply a linear (data-independent) numpy map to each share component."""
    return RSS(np.stack([fn(c) for c in x.components]), x.ring)


def _stride(layer) -> int:
    return layer.step if isinstance(layer, MaxPool | MeanPool) else layer.stride


def _im2col(x: RSS, layer) -> tuple[RSS, tuple[int, int]]:
    b, c, h, w = x.shape
    k, s, p = layer.kernel, _stride(layer), layer.padding
    oh, ow = ops.out_size(h, k, s, p), ops.out_size(w, k, s, p)

    def cols(comp):
        xp = np.pad(comp, ((0, 0), (0, 0), (p, p), (p, p))) if p else comp
        win = ops.windows(xp, k, s, oh, ow)  # (B, C, oh, ow, k, k)
        return np.ascontiguousarray(win.transpose(0, 2, 3, 1, 4, 5)).reshape(b * oh * ow, -1)

    return _map(x, cols), (oh, ow)


def _col2im(dcols: RSS, x_shape, layer, oh: int, ow: int) -> RSS:
    b, c, h, w = x_shape
    k, s, p = layer.kernel, _stride(layer), layer.padding
    mask = dcols.ring.mask

    def scatter(comp):
        d = comp.reshape(b, oh, ow, c, k, k).transpose(0, 3, 1, 2, 4, 5)
        return ops._scatter(d, x_shape, k, s, p) & mask

    return _map(dcols, scatter)


def _bias(fal: Falcon, y: RSS, q: dict, axis_shape) -> RSS:
    if "b" not in q:
        return y
    bb = np.broadcast_to(q["b"].components.reshape(3, *axis_shape), (3, *y.shape))
    return y + RSS(bb.copy(), fal.ring)


def _bn_layout(x: RSS) -> tuple[RSS, callable]:
    """(B, C, H, W) -> (B H W, C) and back; (B, n) stays."""
    if len(x.shape) == 2:
        return x, lambda z: z
    b, c, h, w = x.shape
    flat = _map(x, lambda t: t.transpose(0, 2, 3, 1).reshape(-1, c))
    return flat, lambda z: _map(z, lambda t: t.reshape(b, h, w, c).transpose(0, 3, 1, 2))


def _layer_forward(fal: Falcon, name: str, layer, q: dict, x: RSS, train: bool):
    """One layer on shares; returns ``(y, cache)``."""
    cache = None
    if isinstance(layer, Dense):
        cache = x
        y = _bias(fal, fal.matmul_fixed(x, q["W"], f"{name}: x W"), q,
                  (1, layer.out_features))
    elif isinstance(layer, Conv2d):
        cols, (oh, ow) = _im2col(x, layer)
        cache = (cols, x.shape, oh, ow)
        z = fal.matmul_fixed(cols, q["W"], f"{name}: im2col(x) W")
        z = _map(z, lambda t: t.reshape(x.shape[0], oh, ow, -1).transpose(0, 3, 1, 2))
        y = _bias(fal, RSS(np.ascontiguousarray(z.components), fal.ring), q,
                  (1, layer.out_channels, 1, 1))
    elif isinstance(layer, ReLU):
        flat = x.reshape(-1)
        r, d = relu(fal, flat)
        y, cache = r.reshape(*x.shape), d.reshape(*x.shape)
    elif isinstance(layer, MaxPool):
        cols, (oh, ow) = _im2col(x, layer)  # rows (B oh ow), columns (C k k)
        c = x.shape[1]
        kk = layer.kernel ** 2
        win = _map(cols, lambda t: t.reshape(-1, c, kk).reshape(-1, kk))
        mx, onehot = maxpool(fal, win)
        y = _map(mx, lambda t: t.reshape(x.shape[0], oh, ow, c).transpose(0, 3, 1, 2))
        y = RSS(np.ascontiguousarray(y.components), fal.ring)
        cache = (onehot, x.shape, oh, ow)
    elif isinstance(layer, MeanPool):
        cols, (oh, ow) = _im2col(x, layer)
        c, kk = x.shape[1], layer.kernel ** 2
        s = _map(cols, lambda t: fal.ring.sum(t.reshape(-1, c, kk), axis=-1))
        s = _map(s, lambda t: t.reshape(x.shape[0], oh, ow, c).transpose(0, 3, 1, 2))
        s = RSS(np.ascontiguousarray(s.components), fal.ring)
        y = s if layer.scaled else fal.mul_public_fixed(s, 1.0 / kk, f"{name}: / k^2")
        cache = (x.shape, oh, ow)
    elif isinstance(layer, BatchNorm):
        flat, back = _bn_layout(x)
        c = flat.shape[1]
        if train:
            yf, cache = batchnorm_forward(fal, flat, q["gamma"], q["beta"])
        else:
            cc = RSS(np.broadcast_to(q["c"].components[:, None], (3, *flat.shape)).copy(),
                     fal.ring)
            yf = fal.mul_fixed(flat, q["a"].reshape(1, c), f"{name}: a x") + cc
        y = back(yf)
    elif isinstance(layer, Flatten):
        cache = x.shape
        y = x.reshape(x.shape[0], -1)
    else:  # pragma: no cover - rejected by _check_net
        raise ValueError(layer.kind)
    return y, cache


def secure_forward(fal: Falcon, model: SecureModel, x: RSS, train: bool = False
                   ) -> tuple[RSS, list]:
    """Run every layer on shares; returns the output shares and the per-layer caches."""
    net = model.net
    if x.shape[1:] != tuple(net.input_shape):
        raise ValueError(f"input shares must have shape (B, {net.input_shape}), got {x.shape}")
    if train and any(isinstance(layer, Residual) for layer in net.layers):
        raise ValueError(f"{net.name}: training through residual blocks is not supported here "
                         "(inference only)")
    caches: list = []
    x = _forward_seq(fal, net.layers, model.params, x, train, "", caches)
    return x, caches


def _forward_seq(fal: Falcon, layers, params, x: RSS, train: bool, prefix: str,
                 caches: list | None) -> RSS:
    """One sequence of layers, each its own protocol (verified at its end when malicious); a
    residual block runs both branches on ``x`` and adds them locally."""
    for name, layer, q in zip(_auto_names(layers), layers, params):
        full = f"{prefix}{name}"
        if isinstance(layer, Residual):
            body = _forward_seq(fal, layer.body, q["body"], x, train, f"{full}.body.", None)
            short = _forward_seq(fal, layer.shortcut, q["shortcut"], x, train,
                                 f"{full}.shortcut.", None)
            with fal.ledger.label(f"{full}.add"):  # local: no message, no product
                x = body + short
            if caches is not None:
                caches.append(None)
            continue
        with fal.protocol(full):
            x, cache = _layer_forward(fal, full, layer, q, x, train)
        if caches is not None:
            caches.append(cache)
    return x


def output_delta(fal: Falcon, out: RSS, labels: np.ndarray, n_classes: int) -> RSS:
    """``delta = y_hat - onehot(y)`` (labels are shared by the data holder)."""
    onehot = np.eye(n_classes)[np.asarray(labels)]
    return out - fal.share_fixed(onehot)


def conv_grad_shift(oh: int, ow: int) -> int:
    """Pre-scaling (bits) of a convolution's output error before its weight gradient:
    ``ceil(log2(oh * ow) / 2)``. The gradient sums ``x * delta`` over every output position
    of the batch; with errors of random sign that sum grows like the square root of the
    number of positions, which this shift absorbs (the worst case -- all terms of one sign --
    could still leave the range of Z_2^32; a 32-bit ring cannot afford the full shift
    without losing the gradient in rounding noise)."""
    return ((oh * ow - 1).bit_length() + 1) // 2


def _layer_backward(fal: Falcon, name: str, layer, q: dict, cache, delta: RSS, need_dx: bool,
                    extra_shift: int):
    """Back-propagate through one layer; returns ``(delta_in, grads)``."""
    f = fal.f
    grads: dict[str, RSS] = {}
    if isinstance(layer, Dense | Conv2d):
        if isinstance(layer, Dense):
            x_rows, d2 = cache, delta
        else:
            cols, x_shape, oh, ow = cache
            x_rows = cols
            d2 = _map(delta, lambda t: np.ascontiguousarray(t.transpose(0, 2, 3, 1))
                      .reshape(-1, layer.out_channels))
        xt = _map(x_rows, lambda t: np.ascontiguousarray(t.T))
        wt = _map(q["W"], lambda t: np.ascontiguousarray(t.T))
        # a convolution's weight gradient sums over every output position of the batch; the
        # error is pre-scaled by 2^-s (s = log2 of the positions) so that sum stays in range
        s = conv_grad_shift(oh, ow) if isinstance(layer, Conv2d) else 0
        d2w = fal.truncate(d2, s, f"{name}: delta / 2^{s} for dW") if s else d2
        with fal.ledger.round():  # the two products are independent: one round
            zw = fal.matmul(xt, d2w, f"{name}: dW = x^T delta")
            zx = fal.matmul(d2, wt, f"{name}: dx = delta W^T") if need_dx else None
        with fal.ledger.round():  # and so are the three truncations
            grads["W"] = fal.truncate(zw, f + max(extra_shift - s, 0), f"{name}: dW scale")
            if s > extra_shift:
                grads["W"] = grads["W"].mul_public(1 << (s - extra_shift))
            if "b" in q:
                grads["b"] = fal.truncate(_map(d2, lambda t: fal.ring.sum(t, axis=0)),
                                          extra_shift, f"{name}: db scale")
            if need_dx:
                zx = fal.truncate(zx, f, f"truncate: {name}: dx")
        if need_dx:
            delta = zx if isinstance(layer, Dense) else _col2im(zx, x_shape, layer, oh, ow)
    elif isinstance(layer, ReLU):
        delta = fal.mul(cache, delta, f"{name}: delta * DReLU")
    elif isinstance(layer, MaxPool):
        onehot, x_shape, oh, ow = cache
        c, kk = x_shape[1], layer.kernel ** 2
        d = _map(delta, lambda t: np.ascontiguousarray(t.transpose(0, 2, 3, 1))
                 .reshape(-1))
        dwin = fal.mul(onehot, d.reshape(-1, 1), f"{name}: delta * onehot(argmax)")
        delta = _col2im(_map(dwin, lambda t: t.reshape(-1, c * kk)), x_shape, layer,
                        oh, ow)
    elif isinstance(layer, MeanPool):
        x_shape, oh, ow = cache
        c, kk = x_shape[1], layer.kernel ** 2
        d = delta if layer.scaled else fal.mul_public_fixed(delta, 1.0 / kk,
                                                            f"{name}: / k^2")
        d = _map(d, lambda t: np.ascontiguousarray(t.transpose(0, 2, 3, 1)))
        dcols = _map(d, lambda t: np.repeat(t.reshape(-1, c, 1), kk, axis=2)
                     .reshape(-1, c * kk))
        delta = _col2im(dcols, x_shape, layer, oh, ow)
    elif isinstance(layer, BatchNorm):
        flat, back = _bn_layout(delta)
        dx, dg, db = batchnorm_backward(fal, flat, cache)
        with fal.ledger.round():
            grads["gamma"] = fal.truncate(dg, extra_shift, f"{name}: dgamma scale")
            grads["beta"] = fal.truncate(db, extra_shift, f"{name}: dbeta scale")
        delta = back(dx)
    elif isinstance(layer, Flatten):
        delta = delta.reshape(*cache)
    return delta, grads


def secure_backward(fal: Falcon, model: SecureModel, caches: list, delta: RSS,
                    extra_shift: int = 0) -> list[dict[str, RSS]]:
    """Back-propagate ``delta`` down to the first layer with parameters (the error of that
    layer's input -- the image, for a network that starts with ``Flatten`` -- is never needed,
    so it is neither computed nor sent); returns the parameter gradients.

    Weight gradients are truncated by ``frac_bits + extra_shift`` (the learning rate folded in).
    """
    net = model.net
    grads: list[dict[str, RSS]] = [{} for _ in net.layers]
    first = first_trainable(net.layers)  # below it no parameter needs the error
    for i in reversed(range(first, len(net.layers))):
        layer, q, cache, name = net.layers[i], model.params[i], caches[i], net.layer_names[i]
        with fal.protocol(f"{name}_backward"):
            delta, grads[i] = _layer_backward(fal, name, layer, q, cache, delta, i > first,
                                              extra_shift)
    return grads


def sgd_step(model: SecureModel, grads: list[dict[str, RSS]]) -> None:
    """``theta <- theta - grad`` (the learning rate is already folded into the gradients)."""
    for q, g in zip(model.params, grads):
        for key, gv in g.items():
            q[key] = q[key] - gv


def train_step(fal: Falcon, model: SecureModel, x: RSS, labels: np.ndarray, lr_shift: int
               ) -> RSS:
    """One private SGD iteration with learning rate ``2^-lr_shift`` on the batch-mean loss.

    The output error is first scaled by ``2^-(log2 B - 3)`` so that batch sums of gradients
    stay far below the ring's limit (a raw sum over 128 examples can pass 16, where a 32-bit
    ring with 13 fractional bits overflows); the remaining ``2^-(3 + lr_shift)`` is folded into
    the truncation of every weight gradient. Returns the shared forward output.
    """
    b = x.shape[0]
    if b < 1 or b & (b - 1):
        raise ValueError(f"batch size must be a power of two (the 1/B is a shift), got {b}")
    if isinstance(lr_shift, bool) or not isinstance(lr_shift, int) or not 0 <= lr_shift <= 12:
        raise ValueError(f"lr_shift must be an int in [0, 12], got {lr_shift!r}")
    out, caches = secure_forward(fal, model, x, train=True)
    log_b = b.bit_length() - 1
    pre = max(log_b - 3, 0)
    with fal.protocol("loss"):
        delta = output_delta(fal, out, labels, out.shape[-1])
        if pre:
            delta = fal.truncate(delta, pre, "delta / 2^(log2 B - 3)")
    grads = secure_backward(fal, model, caches, delta, extra_shift=lr_shift + log_b - pre)
    sgd_step(model, grads)
    return out
