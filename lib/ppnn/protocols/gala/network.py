"""Fixed-point inference through packed-HE linear layers (GALA §IV-B, Table XIII).

GALA introduces no approximation of its own: the only accuracy change w.r.t. the float model
is the fixed-point quantization every HE framework needs. This module makes that concrete:

* :func:`fixed_point_plan` picks, per linear layer, the largest weight scale ``2^f_w`` such
  that ``|W_q a + b_q| < p/2`` is *guaranteed* for inputs within the layer's public bound
  (the same check :func:`~.protocol.run_linear` enforces); activations are clipped to a public
  bound calibrated on training data (99.99th percentile);
* :func:`integer_forward` is the exact integer pipeline (the oracle), vectorized over a batch;
* :func:`he_forward` runs one image through the two-party protocol: every linear layer with
  a GALA kernel on a BFV backend (shares reconstructed only to apply the nonlinear layers in
  plaintext -- the garbled-circuit part, outside GALA's scope -- and to rescale).

Supported layers: Flatten, Dense, Conv2d, ReLU, MaxPool, MeanPool (no residual blocks).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ppnn.nn import integer, ops
from ppnn.nn.forward import forward
from ppnn.nn.layers import Conv2d, Dense, Flatten, MaxPool, MeanPool, ReLU

from .conv import GalaConv
from .matvec import GalaMatVec
from .protocol import run_linear

__all__ = ["LayerQ", "fixed_point_plan", "integer_forward", "he_forward", "topk_accuracy"]


@dataclass(frozen=True)
class LayerQ:
    """Quantized linear layer: integer weights/bias, weight bits, input and output bounds."""

    index: int
    W: np.ndarray
    b: np.ndarray
    f_w: int
    x_bound: int
    clip: int | None  # output activation bound after rescaling (None for the logits)


def _check_layers(net) -> None:
    for layer in net.layers:
        if not isinstance(layer, Conv2d | Dense | Flatten | ReLU | MaxPool | MeanPool):
            raise ValueError(f"{net.name}: layer {layer.kind} is not supported by the GALA "
                             "fixed-point pipeline (Flatten/Dense/Conv2d/ReLU/pools only)")


def fixed_point_plan(net, params, x_calib: np.ndarray, p: int, f_x: int = 6,
                     max_fw: int = 12, quantile: float = 99.99) -> list[LayerQ]:
    """Quantization plan for ``net`` with plaintext modulus ``p`` (see module doc)."""
    _check_layers(net)
    outs = forward(net, params, x_calib, return_layers=True)
    lin = [i for i, layer in enumerate(net.layers) if isinstance(layer, Conv2d | Dense)]
    plan = []
    x_bound = 1 << f_x  # pixels in [0, 1]
    for j, i in enumerate(lin):
        layer, prm = net.layers[i], params[i]
        W = np.asarray(prm["W"], dtype=np.float64)
        b = np.asarray(prm.get("b", np.zeros(W.shape[0])), dtype=np.float64)
        chosen = None
        for f_w in range(max_fw, -1, -1):
            Wq = integer.fixed_weights(W, f_w)
            bq = integer.to_fixed(b, f_x + f_w)
            bound = int(np.abs(Wq).reshape(Wq.shape[0], -1).sum(axis=1).max()) * x_bound
            if 2 * (bound + int(np.abs(bq).max(initial=0))) < p:
                chosen = (f_w, Wq, bq)
                break
        if chosen is None:
            raise ValueError(f"plaintext modulus p={p} is too small for layer {i} "
                             f"({layer.kind}) even with integer weights; use a wider p")
        f_w, Wq, bq = chosen
        last = j == len(lin) - 1
        clip = None
        if not last:
            act = np.abs(outs[i]).reshape(-1)
            clip = max(1, int(np.ceil(np.percentile(act, quantile) * 2.0 ** f_x)))
        plan.append(LayerQ(i, Wq, bq, f_w, x_bound, clip))
        if clip is not None:
            x_bound = clip
    return plan


def _nonlinear(layer, a: np.ndarray) -> np.ndarray:
    """Plaintext oracle of a nonlinear/reshape layer on integer activations (batch first)."""
    if isinstance(layer, ReLU):
        return np.maximum(a, 0)
    if isinstance(layer, MaxPool):
        return ops.maxpool(a, layer.kernel, layer.step, layer.padding)[0]
    if isinstance(layer, MeanPool):
        s = ops.meanpool(a.astype(np.float64), layer.kernel, layer.step, layer.padding, True)
        return np.floor(s / (1 if layer.scaled else layer.kernel ** 2)).astype(np.int64)
    if isinstance(layer, Flatten):
        return a.reshape(a.shape[0], -1)
    raise TypeError(layer.kind)


def _rescale(y: np.ndarray, q: LayerQ) -> np.ndarray:
    a = np.floor_divide(y, 1 << q.f_w)
    return np.clip(a, -q.clip, q.clip) if q.clip is not None else a


def quantize_input(x: np.ndarray, f_x: int = 6) -> np.ndarray:
    """Pixels in [0, 1] -> ``round(x 2^f_x)`` in ``[0, 2^f_x]`` (int64); anything else
    raises ``ValueError`` (the plan's ``x_bound`` holds for this range only: nothing is
    clipped)."""
    x = np.asarray(x, dtype=np.float64)
    if x.size and not (np.all(np.isfinite(x)) and x.min() >= 0 and x.max() <= 1):
        raise ValueError(f"x must be finite pixels in [0, 1], got values in [{x.min():g}, "
                         f"{x.max():g}]")
    return np.round(x * 2.0 ** f_x).astype(np.int64)


def integer_forward(net, plan: list[LayerQ], x_int: np.ndarray) -> np.ndarray:
    """Exact integer pipeline on a batch (the oracle the HE run must equal)."""
    qs = {q.index: q for q in plan}
    a = np.asarray(x_int, dtype=np.int64)
    for i, layer in enumerate(net.layers):
        if i in qs:
            q = qs[i]
            if isinstance(layer, Dense):
                y = a @ q.W.T + q.b
            else:
                y, _ = ops.conv2d(a, q.W, layer.stride, layer.padding, layer.groups,
                                  matmul=np.matmul)
                y = y + q.b.reshape(1, -1, 1, 1)
            a = _rescale(y, q) if q.clip is not None else y
        else:
            a = _nonlinear(layer, a)
    return a


def he_forward(net, plan: list[LayerQ], x_int: np.ndarray, he, rng: np.random.Generator,
               ledger=None) -> np.ndarray:
    """One image (``x_int`` of the network's input shape) through HE linear layers.

    Client and server run :func:`run_linear` with a GALA kernel per linear layer; the server
    adds its bias to its share; shares are reconstructed for the plaintext nonlinear oracle."""
    qs = {q.index: q for q in plan}
    a = np.asarray(x_int, dtype=np.int64)[None]
    for i, layer in enumerate(net.layers):
        if i in qs:
            q = qs[i]
            if isinstance(layer, Dense):
                k = GalaMatVec(q.W.shape[0], q.W.shape[1], he.n)
                res = run_linear(k, he, q.W, a[0].reshape(-1), rng, ledger, f"layer{i}",
                                 x_bound=q.x_bound)
                y = res.reveal() + q.b
            else:
                if layer.groups != 1:
                    raise ValueError(f"layer {i}: he_forward runs ungrouped convolutions; "
                                     "the gala_gc family runs grouped ones")
                c, h, w = a.shape[1:]
                k = GalaConv(c, layer.out_channels, h, w, layer.kernel, he.n, layer.padding,
                             layer.stride)
                res = run_linear(k, he, q.W, a[0], rng, ledger, f"layer{i}", x_bound=q.x_bound)
                y = res.reveal() + q.b.reshape(-1, 1, 1)
            y = y[None]
            a = _rescale(y, q) if q.clip is not None else y
        else:
            a = _nonlinear(layer, a)
    return a[0]


def topk_accuracy(logits: np.ndarray, y: np.ndarray, k: int) -> float:
    top = np.argsort(-np.asarray(logits, dtype=np.float64), axis=1, kind="stable")[:, :k]
    return float((top == np.asarray(y)[:, None]).any(axis=1).mean())
