"""Plaintext forward passes: float, and the integer fixed-point oracle in Z_2^k.

Parameters are a list aligned with ``net.layers``: a dict of numpy arrays per layer (empty for
layers without weights); a :class:`~ppnn.nn.layers.Residual` holds
``{"body": [...], "shortcut": [...]}``. Keys: ``W``, ``b`` (Conv2d ``W`` is
``(C_out, C_in/groups, k, k)``, Dense ``W`` is ``(out, in)``); BatchNorm ``gamma``, ``beta``
and the running statistics ``mean``, ``var``.

:func:`forward_fixed` is the plaintext oracle the protocols are compared with: inputs and
weights encoded with :class:`~ppnn.core.FixedPoint`, every product accumulated exactly in the
ring at scale ``2f`` and truncated back to ``f`` (arithmetic shift, i.e. floor) right after.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..core import FixedPoint
from . import ops
from ._blas import blas_threads
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
from .network import Network, _auto_names

__all__ = ["init_params", "forward", "forward_nodes", "forward_fixed", "fold_batchnorm",
           "check_params", "flatten_params", "unflatten_params", "predict", "node_params",
           "layer_times"]


# -- parameters ------------------------------------------------------------------------------
def _param_shapes(layer: Layer, in_shape) -> dict[str, tuple]:
    if isinstance(layer, Conv2d):
        shp = {"W": (layer.out_channels, in_shape[0] // layer.groups, layer.kernel,
                     layer.kernel)}
        return shp | ({"b": (layer.out_channels,)} if layer.bias else {})
    if isinstance(layer, Dense):
        shp = {"W": (layer.out_features, in_shape[0])}
        return shp | ({"b": (layer.out_features,)} if layer.bias else {})
    if isinstance(layer, BatchNorm):
        c = (in_shape[0],)
        return {"gamma": c, "beta": c, "mean": c, "var": c}
    return {}


def _init_seq(layers, shape, rng, dtype):
    out = []
    for layer in layers:
        if isinstance(layer, Residual):
            body, _ = _init_seq(layer.body, shape, rng, dtype)
            short, _ = _init_seq(layer.shortcut, shape, rng, dtype)
            out.append({"body": body, "shortcut": short})
        else:
            p = {}
            for key, shp in _param_shapes(layer, shape).items():
                if key == "W":
                    fan_in = int(np.prod(shp[1:]))
                    p[key] = (rng.standard_normal(shp) * np.sqrt(2.0 / fan_in)).astype(dtype)
                elif key in ("gamma", "var"):
                    p[key] = np.ones(shp, dtype)
                else:
                    p[key] = np.zeros(shp, dtype)
            out.append(p)
        shape = layer.out_shape(shape)
    return out, shape


def init_params(net: Network, rng: np.random.Generator, dtype=np.float32) -> list:
    """He-normal weights (std ``sqrt(2 / fan_in)``), zero biases, identity batch-norm."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy.random.Generator (seed it explicitly)")
    return _init_seq(net.layers, net.input_shape, rng, dtype)[0]


def _check_seq(layers, params, shape, where):
    if not isinstance(params, list | tuple) or len(params) != len(layers):
        got = f"{len(params)} entries" if isinstance(params, list | tuple) else \
            type(params).__name__
        raise ValueError(f"params{where}: expected a list of {len(layers)} per-layer dicts, "
                         f"got {got}")
    for name, layer, p in zip(_auto_names(layers), layers, params):
        if isinstance(layer, Residual):
            if not isinstance(p, dict) or set(p) != {"body", "shortcut"}:
                raise ValueError(f"params{where}[{name}]: a Residual needs {{'body', 'shortcut'}}")
            _check_seq(layer.body, p["body"], shape, f"{where}[{name}].body")
            _check_seq(layer.shortcut, p["shortcut"], shape, f"{where}[{name}].shortcut")
        else:
            want = _param_shapes(layer, shape)
            got = {k: tuple(np.shape(v)) for k, v in p.items()}
            if got != want:
                raise ValueError(f"params{where}[{name}] ({layer.kind}): expected arrays {want}, "
                                 f"got {got}")
        shape = layer.out_shape(shape)


def check_params(net: Network, params) -> None:
    """Raise ``ValueError`` naming the first layer whose parameters do not fit ``net``."""
    _check_seq(net.layers, params, net.input_shape, "")


def flatten_params(params, prefix: str = "") -> dict[str, np.ndarray]:
    """``{"3.W": array, "5.body.0.W": ...}`` -- for ``np.savez``."""
    out = {}
    for i, p in enumerate(params):
        for key, v in p.items():
            if isinstance(v, list):
                out |= flatten_params(v, f"{prefix}{i}.{key}.")
            else:
                out[f"{prefix}{i}.{key}"] = v
    return out


def unflatten_params(net: Network, flat: dict[str, np.ndarray]) -> list:
    """Inverse of :func:`flatten_params` for ``net`` (checked with :func:`check_params`)."""
    def build(layers, prefix):
        out = []
        for i, layer in enumerate(layers):
            if isinstance(layer, Residual):
                out.append({"body": build(layer.body, f"{prefix}{i}.body."),
                            "shortcut": build(layer.shortcut, f"{prefix}{i}.shortcut.")})
            else:
                pre = f"{prefix}{i}."
                out.append({k[len(pre):]: np.asarray(v) for k, v in flat.items()
                            if k.startswith(pre) and "." not in k[len(pre):]})
        return out

    params = build(net.layers, "")
    check_params(net, params)
    return params


def node_params(net: Network, params) -> dict[str, dict]:
    """``{node name: that leaf layer's parameter dict}`` for every leaf of :meth:`Network.nodes`
    (names as there: ``conv1``, ``block2.shortcut.conv1``, ...)."""
    out: dict[str, dict] = {}

    def walk(layers, ps, prefix):
        for name, layer, p in zip(_auto_names(layers), layers, ps):
            if isinstance(layer, Residual):
                walk(layer.body, p["body"], f"{prefix}{name}.body.")
                walk(layer.shortcut, p["shortcut"], f"{prefix}{name}.shortcut.")
            else:
                out[f"{prefix}{name}"] = p

    walk(net.layers, params, "")
    return out


def _batch_input(net: Network, x: np.ndarray, what: str) -> np.ndarray:
    x = np.asarray(x)
    if x.shape[1:] != net.input_shape:
        hint = " (add a batch axis: x[None])" if x.shape == net.input_shape else ""
        raise ValueError(f"{what}: x must have shape (N, {', '.join(map(str, net.input_shape))})"
                         f" for {net.name}, got {x.shape}{hint}")
    return x


# -- float forward ---------------------------------------------------------------------------
def _fwd_layer(layer: Layer, p: dict, x: np.ndarray) -> np.ndarray:
    if isinstance(layer, Conv2d):
        y, _ = ops.conv2d(x, p["W"].astype(x.dtype, copy=False), layer.stride, layer.padding,
                          layer.groups)
        return y + p["b"].astype(x.dtype).reshape(1, -1, 1, 1) if layer.bias else y
    if isinstance(layer, Dense):
        y = x @ p["W"].astype(x.dtype, copy=False).T
        return y + p["b"].astype(x.dtype) if layer.bias else y
    if isinstance(layer, ReLU):
        return np.maximum(x, 0)
    if isinstance(layer, Square):
        return x * x
    if isinstance(layer, MaxPool):
        return ops.maxpool(x, layer.kernel, layer.step, layer.padding)[0]
    if isinstance(layer, MeanPool):
        return ops.meanpool(x, layer.kernel, layer.step, layer.padding, layer.scaled)
    if isinstance(layer, BatchNorm):
        _, shp = ops.bn_axes(x)
        a = (p["gamma"] / np.sqrt(p["var"] + layer.eps)).astype(x.dtype)
        c = (p["beta"] - p["mean"] * a).astype(x.dtype)
        return x * a.reshape(shp) + c.reshape(shp)
    if isinstance(layer, Flatten):
        return x.reshape(x.shape[0], -1)
    if isinstance(layer, ChannelShuffle):
        return ops.channel_shuffle(x, layer.groups)
    raise TypeError(f"no forward pass for layer kind {layer.kind}")  # pragma: no cover


def _merge(layer: Residual, body, short):
    """A residual block's two branch outputs joined (added, or shortcut then body channels)."""
    if layer.merge == "concat":
        return np.concatenate([short, body], axis=1)
    return body + short


def _fwd_seq(layers, params, x, outs):
    for layer, p in zip(layers, params):
        if isinstance(layer, Residual):
            x = _merge(layer, _fwd_seq(layer.body, p["body"], x, None),
                       _fwd_seq(layer.shortcut, p["shortcut"], x, None))
        else:
            x = _fwd_layer(layer, p, x)
        if outs is not None:
            outs.append(x)
    return x


def forward(net: Network, params, x, return_layers: bool = False):
    """Float inference (batch-norm with running statistics).

    ``x`` has shape ``(N, *net.input_shape)``; float32 input stays float32, anything else is
    computed in float64. With ``return_layers`` returns the list of every top-level layer's
    output instead of the logits.

    Runs on one OpenBLAS thread, as training does: OpenBLAS sums a large product in another
    order with one thread than with several (float32 logits differ in their last bits between
    one and two threads), and accuracies and quantization scales are computed from these
    outputs -- so they do not depend on the number of cores."""
    x = _batch_input(net, x, "forward")
    if x.dtype not in (np.float32, np.float64):
        x = x.astype(np.float64)
    outs: list | None = [] if return_layers else None
    with blas_threads(1):
        y = _fwd_seq(net.layers, params, x, outs)
    return outs if return_layers else y


def _timed_seq(layers, params, x, out: list):
    import time

    for layer, p in zip(layers, params):
        if isinstance(layer, Residual):
            a = _timed_seq(layer.body, p["body"], x, out)
            b = _timed_seq(layer.shortcut, p["shortcut"], x, out)
            t0 = time.process_time()
            x = a + b
            out.append(("Add", time.process_time() - t0))
        else:
            t0 = time.process_time()
            x = _fwd_layer(layer, p, x)
            out.append((layer.kind, time.process_time() - t0))
    return x


def layer_times(net: Network, params, x, repeats: int = 1) -> list[tuple[str, float]]:
    """Float inference of ``x`` (as :func:`forward`) timed layer by layer: ``(kind, CPU
    seconds)`` for every leaf layer in execution order (a residual block's body, then its
    shortcut, then its addition as kind ``"Add"``), the median of ``repeats`` passes."""
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be an int >= 1, got {repeats!r}")
    x = _batch_input(net, x, "layer_times")
    if x.dtype not in (np.float32, np.float64):
        x = x.astype(np.float64)
    runs = []
    with blas_threads(1):
        for _ in range(repeats):
            out: list = []
            _timed_seq(net.layers, params, x, out)
            runs.append(out)
    return [(kind, float(np.median([r[i][1] for r in runs])))
            for i, (kind, _) in enumerate(runs[0])]


def _fwd_nodes(layers, params, x, prefix, outs):
    for name, layer, p in zip(_auto_names(layers), layers, params):
        full = f"{prefix}{name}"
        if isinstance(layer, Residual):
            x = (_fwd_nodes(layer.body, p["body"], x, f"{full}.body.", outs)
                 + _fwd_nodes(layer.shortcut, p["shortcut"], x, f"{full}.shortcut.", outs))
            outs[f"{full}.add"] = x
        else:
            x = _fwd_layer(layer, p, x)
            outs[full] = x
    return x


def forward_nodes(net: Network, params, x) -> dict[str, np.ndarray]:
    """Float inference that keeps every node's output: ``{name: output}`` for every row of
    :meth:`Network.nodes` (leaf layers inside residual bodies and shortcuts, and each block's
    ``<block>.add``), in evaluation order. What the integer compilers calibrate a residual
    network on (:func:`forward` keeps the top-level outputs only)."""
    x = _batch_input(net, x, "forward_nodes")
    if x.dtype not in (np.float32, np.float64):
        x = x.astype(np.float64)
    outs: dict[str, np.ndarray] = {}
    with blas_threads(1):
        _fwd_nodes(net.layers, params, x, "", outs)
    return outs


def predict(net: Network, params, x, batch_size: int = 1000) -> np.ndarray:
    """Arg-max class of each sample (evaluated in batches)."""
    x = np.asarray(x)
    return np.concatenate([forward(net, params, x[i:i + batch_size]).argmax(axis=1)
                           for i in range(0, len(x), batch_size)])


# -- fixed-point oracle ----------------------------------------------------------------------
class _Fixed:
    """Ring arithmetic for one :class:`FixedPoint` format, with overflow guards."""

    def __init__(self, fxp: FixedPoint, check: bool):
        if 2 * fxp.frac_bits >= fxp.ring.k - 1:
            raise ValueError(f"fxp: products need 2*frac_bits < k - 1, got frac_bits="
                             f"{fxp.frac_bits} in Z_2^{fxp.ring.k}")
        self.fxp, self.ring, self.f, self.check = fxp, fxp.ring, fxp.frac_bits, check
        self.fxp2 = FixedPoint(fxp.ring, 2 * fxp.frac_bits)
        self.bound = 2.0 ** (fxp.ring.k - 1 - 2 * fxp.frac_bits)

    def dec(self, v):
        return self.fxp.decode(v)

    def trunc(self, acc, real, where: str):
        """Truncate an accumulator at scale 2f to scale f (floor); ``real`` (float64 value of
        the accumulator) guards against wrap-around."""
        if self.check and real is not None and real.size and np.abs(real).max() >= self.bound:
            raise ValueError(
                f"forward_fixed: {where} overflows Z_2^{self.ring.k} at scale 2^-{2 * self.f} "
                f"(|value| {np.abs(real).max():.4g} >= {self.bound:.4g}); use a larger ring or "
                "fewer fractional bits"
            )
        return self.ring.from_signed(self.ring.to_signed(acc) >> np.int64(self.f))

    def layer(self, layer: Layer, p: dict, x, where: str):
        ring, chk = self.ring, self.check
        if isinstance(layer, Conv2d | Dense):
            W = self.fxp.encode(p["W"])
            if isinstance(layer, Conv2d):
                acc, _ = ops.conv2d(x, W, layer.stride, layer.padding, layer.groups, ring.matmul)
                b_shape = (1, -1, 1, 1)
            else:
                acc, b_shape = ring.matmul(x, W.T), (1, -1)
            real = None
            if chk:
                xf, wf = self.dec(x), self.dec(W)
                real = (ops.conv2d(xf, wf, layer.stride, layer.padding, layer.groups)[0]
                        if isinstance(layer, Conv2d) else xf @ wf.T)
            if layer.bias:
                acc = ring.add(acc, self.fxp2.encode(p["b"]).reshape(b_shape))
                real = real + np.asarray(p["b"], np.float64).reshape(b_shape) if chk else None
            return self.trunc(acc, real, where)
        if isinstance(layer, ReLU):
            return np.where(ring.to_signed(x) > 0, x, np.uint64(0))
        if isinstance(layer, Square):
            return self.trunc(ring.mul(x, x), self.dec(x) ** 2 if chk else None, where)
        if isinstance(layer, MaxPool):
            y, _ = ops.maxpool(ring.to_signed(x), layer.kernel, layer.step, layer.padding)
            return ring.from_signed(y)
        if isinstance(layer, MeanPool):
            n, c, h, w = x.shape
            k, s, pd = layer.kernel, layer.step, layer.padding
            oh, ow = ops.out_size(h, k, s, pd), ops.out_size(w, k, s, pd)
            win = ops.windows(ops._pad(x, pd), k, s, oh, ow)
            tot = ring.sum(win.reshape(n, c, oh, ow, k * k), axis=-1)
            if layer.scaled:
                return tot
            inv = self.fxp.encode(1.0 / (k * k))
            return self.trunc(ring.mul(tot, inv), self.dec(tot) * self.dec(inv) if chk else None,
                              where)
        if isinstance(layer, BatchNorm):
            shp = (1, -1, 1, 1) if x.ndim == 4 else (1, -1)
            a = np.asarray(p["gamma"], np.float64) / np.sqrt(np.asarray(p["var"], np.float64)
                                                             + layer.eps)
            c = np.asarray(p["beta"], np.float64) - np.asarray(p["mean"], np.float64) * a
            a_enc = self.fxp.encode(a).reshape(shp)
            acc = ring.add(ring.mul(x, a_enc), self.fxp2.encode(c).reshape(shp))
            real = self.dec(x) * self.dec(a_enc) + c.reshape(shp) if chk else None
            return self.trunc(acc, real, where)
        if isinstance(layer, Flatten):
            return x.reshape(x.shape[0], -1)
        if isinstance(layer, ChannelShuffle):
            return ops.channel_shuffle(x, layer.groups)
        raise TypeError(f"no fixed-point pass for layer kind {layer.kind}")  # pragma: no cover

    def seq(self, layers, params, x, prefix, outs):
        for name, layer, p in zip(_auto_names(layers), layers, params):
            if isinstance(layer, Residual):
                body = self.seq(layer.body, p["body"], x, f"{prefix}{name}.body.", None)
                short = self.seq(layer.shortcut, p["shortcut"], x, f"{prefix}{name}.shortcut.",
                                 None)
                x = (np.concatenate([short, body], axis=1) if layer.merge == "concat"
                     else self.ring.add(body, short))
            else:
                x = self.layer(layer, p, x, f"{prefix}{name}")
            if outs is not None:
                outs.append(x)
        return x


def forward_fixed(net: Network, params, x, fxp: FixedPoint, return_layers: bool = False,
                  check: bool = True):
    """Integer fixed-point inference in ``fxp.ring`` (the protocols' plaintext oracle).

    ``x`` is either float (encoded with ``fxp``) or already ring elements (uint64). Weights are
    encoded with ``fxp`` (scale ``2^f``), biases at scale ``2^2f`` so they add to the
    accumulator of a product; after every product (linear layers, x^2, batch-norm scale,
    mean-pool division by ``k*k``) the accumulator is truncated back to scale ``2^f`` by an
    arithmetic shift (floor). ReLU / max-pool compare the signed representatives exactly.
    Returns ring elements (decode with ``fxp.decode``). With ``check`` (default) an
    accumulator that would wrap around raises ``ValueError`` naming the layer."""
    if not isinstance(fxp, FixedPoint):
        raise TypeError("fxp must be a ppnn.core.FixedPoint")
    x = _batch_input(net, x, "forward_fixed")
    x = fxp.ring.check(x, "forward_fixed x") if x.dtype.kind in "iu" else fxp.encode(x)
    fx = _Fixed(fxp, check)
    outs: list | None = [] if return_layers else None
    y = fx.seq(net.layers, params, x, "", outs)
    return outs if return_layers else y


# -- batch-norm folding ----------------------------------------------------------------------
def _fold_seq(layers, params):
    new_layers, new_params = [], []
    i = 0
    while i < len(layers):
        layer, p = layers[i], params[i]
        if isinstance(layer, Residual):
            body_l, body_p = _fold_seq(layer.body, p["body"])
            sh_l, sh_p = _fold_seq(layer.shortcut, p["shortcut"])
            new_layers.append(replace(layer, body=tuple(body_l), shortcut=tuple(sh_l)))
            new_params.append({"body": body_p, "shortcut": sh_p})
            i += 1
            continue
        nxt = layers[i + 1] if i + 1 < len(layers) else None
        if isinstance(layer, Conv2d | Dense) and isinstance(nxt, BatchNorm):
            q = params[i + 1]
            a = np.asarray(q["gamma"], np.float64) / np.sqrt(np.asarray(q["var"], np.float64)
                                                             + nxt.eps)
            c = np.asarray(q["beta"], np.float64) - np.asarray(q["mean"], np.float64) * a
            W = np.asarray(p["W"], np.float64)
            b = np.asarray(p["b"], np.float64) if layer.bias else np.zeros(W.shape[0])
            dt = np.asarray(p["W"]).dtype
            W2 = (W * a.reshape((-1,) + (1,) * (W.ndim - 1))).astype(dt)
            new_layers.append(replace(layer, bias=True))
            new_params.append({"W": W2, "b": (b * a + c).astype(dt)})
            i += 2
            continue
        new_layers.append(layer)
        new_params.append(dict(p))
        i += 1
    return new_layers, new_params


def fold_batchnorm(net: Network, params) -> tuple[Network, list]:
    """Fold every BatchNorm that directly follows a Conv2d / Dense into that layer's weights
    and bias (inference only): ``W' = a W``, ``b' = a b + c`` with ``a = gamma/sqrt(var+eps)``,
    ``c = beta - a * mean``. Batch-norms after a pool or an activation stay. Returns the new
    network (same name, no stated counts) and parameters."""
    check_params(net, params)
    layers, new = _fold_seq(net.layers, params)
    folded = replace(net, layers=tuple(layers), stated=(),
                     source=net.source + " [batch-norm folded into the preceding linear layers]")
    return folded, new
