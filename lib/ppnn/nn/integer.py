"""The integer compiler's shared steps: from a float network to the integers a protocol computes.

Every protocol family turns the float network into an integer one with its own choices
(ring size, fraction bits, table width, power-of-two weights, ...), but the steps are the
same, and they live here so the families configure them instead of re-implementing them:

1. **canonical form** -- fold batch-norm, ReLU before max-pool
   (:func:`ppnn.nn.canonical.canonicalize`);
2. **calibration** -- the range of every layer's output on calibration images
   (:func:`activation_ranges`);
3. **fixed-point parameters** -- ``round(W 2^f_w)`` and biases at the accumulator's scale
   (:func:`fixed_weights`, :func:`fixed_bias`);
4. **power-of-two scales** -- a per-layer rescaling of the float model that keeps every
   pre-activation below a limit (:func:`pow2_rescale`; Falcon; in a residual network the two
   branches of every block end at one scale), and the truncation shift that keeps a
   calibrated value in ``b`` bits (:func:`shift_for`; Tabula's tables);
5. **average pooling** on integers: a window sum and a public integer factor, the division
   by ``k^2`` moved into the scale (:func:`mean_factor`);
6. **the exact integer forward** of a linear layer, the core of every family's oracle
   (:func:`int_linear`: float64 BLAS while every partial sum provably stays below ``2^53``,
   exact ``Z_2^64`` arithmetic otherwise).
"""

from __future__ import annotations

import math

import numpy as np

from ppnn.core import Z2_64

from .forward import forward, forward_nodes
from .layers import BatchNorm, Conv2d, Dense, Residual
from .network import Network, _auto_names
from .ops import conv2d

__all__ = ["activation_ranges", "to_fixed", "fixed_weights", "fixed_bias", "pow2_rescale",
           "shift_for", "int_linear", "mean_factor"]

_TWO64 = 1 << 64


def activation_ranges(net: Network, params, x_calib) -> list[float]:
    """``max |output|`` of every top-level layer of the float network on ``x_calib``."""
    x = np.asarray(x_calib, np.float64)
    if x.ndim < 2 or x.shape[1:] != tuple(net.input_shape):
        raise ValueError(f"calibration images must have shape (N, {net.input_shape}), got "
                         f"{x.shape}")
    outs = forward(net, params, x, return_layers=True)
    return [float(np.abs(o).max(initial=0)) for o in outs]


def to_fixed(x, frac_bits: int) -> np.ndarray:
    """``round(x 2^frac_bits)`` as int64 (round half to even): fixed-point inputs, weights.
    Raises ``ValueError`` for NaN, infinity or a value whose encoding leaves int64 (never a
    silent wrap)."""
    _check_frac(frac_bits, "frac_bits")
    v = np.rint(np.asarray(x, np.float64) * 2.0**frac_bits)
    if v.size and not (np.all(np.isfinite(v)) and np.abs(v).max() < 2.0**63):
        raise ValueError(f"fixed-point encoding with {frac_bits} fractional bits needs finite "
                         f"values below 2^{63 - frac_bits} in magnitude, got values in "
                         f"[{np.min(x):g}, {np.max(x):g}]")
    return v.astype(np.int64)


def fixed_weights(W, frac_bits: int) -> np.ndarray:
    """``round(W 2^frac_bits)`` as int64 (weights of a fixed-point linear layer)."""
    return to_fixed(W, frac_bits)


def fixed_bias(layer, b, scale_bits: int) -> np.ndarray:
    """``round(b 2^scale_bits)`` as int64, shaped to broadcast onto the layer's output
    (``(C, 1, 1)`` for a convolution); zeros when the layer has no bias (``b`` is None)."""
    _check_frac(scale_bits, "scale_bits")
    n = layer.out_channels if isinstance(layer, Conv2d) else layer.out_features
    v = np.zeros(n) if b is None else np.asarray(b, np.float64)
    v = np.rint(v * 2.0**scale_bits).astype(np.int64)
    return v.reshape(-1, 1, 1) if isinstance(layer, Conv2d) else v


def pow2_rescale(net: Network, params, x_calib, limit: float) -> tuple[list, float]:
    """Divide each linear layer's output by a power of two so that ``max |v| <= limit`` on the
    calibration images (ReLU and max-pool are positively homogeneous, so predictions do not
    change). Returns ``(scaled params, output scale)``: float logits = scale * scaled logits.
    In a network with residual blocks every block's two branches end at one scale
    (:func:`_pow2_residual`)."""
    if not limit > 0:
        raise ValueError(f"limit must be > 0, got {limit}")
    if any(isinstance(layer, Residual) for layer in net.layers):
        return _pow2_residual(net, params, x_calib, limit)
    params = [dict(p) for p in params]
    outs = forward(net, params, np.asarray(x_calib, np.float64), return_layers=True)
    cum = 0  # log2 of the scale applied so far (activations are divided by 2^cum)
    for i, layer in enumerate(net.layers):
        if not isinstance(layer, Dense | Conv2d):
            continue
        peak = float(np.abs(outs[i]).max()) / 2.0**cum
        s = int(np.ceil(np.log2(peak / limit))) if peak > limit else 0
        prev = cum
        cum += s
        params[i]["W"] = np.asarray(params[i]["W"], np.float64) / 2.0 ** (cum - prev)
        if "b" in params[i]:
            params[i]["b"] = np.asarray(params[i]["b"], np.float64) / 2.0**cum
    return params, 2.0**cum


def _pow2_residual(net: Network, params, x_calib, limit: float) -> tuple[list, float]:
    """:func:`pow2_rescale` of a network with residual blocks.

    Every tensor carries a power-of-two scale ``2^c`` (stored value = float value / 2^c).
    A linear layer may raise it (its weights divided by ``2^(c_out - c_in)``, its bias by
    ``2^c_out``); ReLU, pools and Flatten keep it; a batch-norm keeps it (its ``mean`` and
    ``beta`` divided by ``2^c``). Both branches of a block must reach the Add at one scale:
    the larger of the two and the one its sum needs. A branch below it raises the scale of
    the layer that set its own (its last linear layer, a nested block's Add, or -- through
    an identity shortcut -- whatever set the block input's scale), and the pass repeats until
    every branch agrees. Each linear and Add output ends with ``max |v| <= limit``."""
    peaks = {k: float(np.abs(v).max(initial=0))
             for k, v in forward_nodes(net, params, np.asarray(x_calib, np.float64)).items()}

    def need(name: str) -> int:
        peak = peaks[name]
        return int(np.ceil(np.log2(peak / limit))) if peak > limit else 0

    floor: dict[str, int] = {}

    def walk(layers, ps, c, src, prefix, out):
        """Scales through one sequence: returns ``(scale, name of what set it)``; fills
        ``out`` with the rescaled parameters; raises ``_Raise`` on a disagreement."""
        for name, layer, p in zip(_auto_names(layers), layers, ps):
            full = f"{prefix}{name}"
            if isinstance(layer, Residual):
                qb, qs = [], []
                cb, sb = walk(layer.body, p["body"], c, src, f"{full}.body.", qb)
                cs, ss = walk(layer.shortcut, p["shortcut"], c, src, f"{full}.shortcut.", qs)
                add = f"{full}.add"
                blk = max(cb, cs, need(add), floor.get(add, 0))
                for cx, sx in ((cb, sb), (cs, ss)):
                    if cx < blk:
                        raise _Raise(sx, blk)
                out.append({"body": qb, "shortcut": qs})
                c, src = blk, add
                continue
            q = dict(p)
            if isinstance(layer, Conv2d | Dense):
                c_out = max(c, need(full), floor.get(full, 0))
                q["W"] = np.asarray(p["W"], np.float64) / 2.0 ** (c_out - c)
                if "b" in p:
                    q["b"] = np.asarray(p["b"], np.float64) / 2.0 ** c_out
                c, src = c_out, full
            elif isinstance(layer, BatchNorm):
                for key in ("mean", "beta"):
                    q[key] = np.asarray(p[key], np.float64) / 2.0 ** c
            out.append(q)
        return c, src

    for _ in range(len(peaks) + 1):
        scaled: list = []
        try:
            c, _src = walk(net.layers, params, 0, None, "", scaled)
        except _Raise as r:
            if r.name is None:
                raise ValueError(f"{net.name}: an identity shortcut reads the input image, "
                                 f"whose scale is fixed at 1; the block needs 2^{r.scale}") \
                    from None
            floor[r.name] = r.scale
            continue
        return scaled, 2.0**c
    raise RuntimeError("pow2_rescale did not converge")  # pragma: no cover - floors only rise


class _Raise(Exception):
    """A branch reaches its block's Add below the block's scale: raise ``name`` to ``scale``."""

    def __init__(self, name: str | None, scale: int):
        super().__init__(name, scale)
        self.name, self.scale = name, scale


def shift_for(max_abs: float, step: float, bits: int, margin: float = 1.0) -> tuple[int, int]:
    """``(l, d)``: values up to ``max_abs * margin`` at step ``step`` need ``l`` bits; a
    right shift by ``d = max(l + 1 - bits, 0)`` keeps them (signed) in ``bits`` bits."""
    if not step > 0 or not margin > 0:
        raise ValueError(f"step and margin must be > 0, got {step} and {margin}")
    l_bits = max(1, math.ceil(math.log2(max_abs * margin / step + 1)))
    return l_bits, max(l_bits + 1 - int(bits), 0)


def mean_factor(kk: int, bits: int = 8) -> tuple[int, int]:
    """``(c, t)``: a mean over ``kk`` values as ``c * sum / 2^t`` -- the window sum (local on
    shares, a plain sum under additive HE), times the public integer ``c``, at ``t`` more
    fraction bits. ``kk`` a power of two: ``(1, log2 kk)``, exact; otherwise
    ``c = round(2^t / kk)`` with ``t = ceil(log2 kk) + bits`` (relative error below
    ``2^-(bits+1)``)."""
    if isinstance(kk, bool) or not isinstance(kk, int | np.integer) or kk < 1:
        raise ValueError(f"kk must be a positive int (the pool's window size), got {kk!r}")
    kk = int(kk)
    if kk & (kk - 1) == 0:
        return 1, kk.bit_length() - 1
    t = (kk - 1).bit_length() + int(bits)
    return round(2**t / kk), t


def int_linear(layer, W_int, x_int, wrap: bool = False) -> np.ndarray:
    """``W x`` (no bias) for signed integer ``W`` and ``x`` (batch axis first), exact, int64.

    Float64 BLAS when ``max_row |W|_1 * max |x| < 2^53`` (every partial sum exact), else
    ``Z_2^64`` arithmetic: exact while the result fits int64 (raises when it may not), or,
    with ``wrap=True``, the result mod ``2^64`` (for ring protocols; no check)."""
    W_int = np.asarray(W_int, np.int64)
    x_int = np.asarray(x_int, np.int64)
    if not isinstance(layer, Conv2d | Dense):
        raise TypeError(f"expected Conv2d or Dense, got {type(layer).__name__}")
    bound = (float(np.abs(W_int.reshape(W_int.shape[0], -1)).sum(axis=1).max(initial=0))
             * float(np.abs(x_int).max(initial=0)))
    if bound < 2.0**53:
        xf, Wf = x_int.astype(np.float64), W_int.astype(np.float64)
        y = (conv2d(xf, Wf, layer.stride, layer.padding, layer.groups)[0]
             if isinstance(layer, Conv2d) else xf @ Wf.T)
        return np.rint(y).astype(np.int64)
    if bound >= 2.0**63 and not wrap:
        raise ValueError(f"integer linear layer overflows int64 (|W x| may reach {bound:.3g})")
    xu, Wu = x_int.view(np.uint64), W_int.view(np.uint64)
    y = (conv2d(xu, Wu, layer.stride, layer.padding, layer.groups, Z2_64.matmul)[0]
         if isinstance(layer, Conv2d) else Z2_64.matmul(xu, Wu.T))
    return np.asarray(y, np.uint64).view(np.int64)


def _check_frac(v, name: str) -> None:
    if isinstance(v, bool) or not isinstance(v, int | np.integer) or not 0 <= v <= 62:
        raise ValueError(f"{name} must be an int in 0..62, got {v!r}")
