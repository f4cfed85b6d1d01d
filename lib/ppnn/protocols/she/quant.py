"""Logarithmic quantization and SHE's integer network (she.txt §3.2, §4 "we quantized weights
into 5-bit power-of-2 representations, and converted inputs and activations to 5-bit fixed
point numbers").

A trained float network (batch-norm folded into the linear layers) is compiled into a
:class:`QuantNet`: a list of integer operations that the numpy *integer model*
(:meth:`QuantNet.forward_int`) and the encrypted gate circuits (:mod:`.network`) execute
bit-exactly alike.

* **weights**: ``w ~ sign * 2^q`` with ``q = round(log2 |w|)`` (the paper's Quantize(log2 w)),
  5 bits = a sign and 4 exponent bits: 15 exponents ``q_max - 14 .. q_max`` per layer plus a
  zero code (weights below the smallest exponent, and pruned weights, are 0). The circuit uses
  the *shift* ``e = q_max - q >= 0``: ``x * 2^q = 2^q_max * (x >> e)`` (floor; the paper's
  5-bit shifted terms; ``guard_bits`` g keeps g extra fractional bits).
* **activations**: unsigned ``a``-bit integers after a ReLU (the sign is a public 0), signed
  ``a``-bit otherwise; every scale is a power of two ``2^sigma``, so requantization is an
  arithmetic shift (its rounding constant folded into the bias) and a saturation.
* **TCN** (the paper's baseline): uniform ``b``-bit weights ``w_int * 2^sigma_w`` on the same
  activations, evaluated with multipliers.
* **mean pool** (:class:`QSum`): the window sum, an adder tree; its ``1/k^2`` is folded into
  the float weights of the next linear layer before they are quantized.
* **residual block** (:class:`QResidual`): both branches from the same input word; the one at
  the coarser scale ``2^sigma`` shifted left to the other's (free wiring), a ripple-carry
  adder on the gate level, then the block's ReLU-and-saturate unit requantizes the sum
  (rounding constant in the bias of the finer branch's last linear layer), as a linear
  layer's fused unit does.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ppnn.nn import (
    Conv2d,
    Dense,
    Flatten,
    MaxPool,
    MeanPool,
    Network,
    ReLU,
    Residual,
    fold_batchnorm,
    forward_nodes,
    ops,
)
from ppnn.nn.network import _auto_names
from ppnn.nn.ops import conv2d

__all__ = ["LogWeights", "log_quantize", "pow2_parts", "uniform_quantize", "QLinear", "QPool",
           "QSum", "QResidual", "QuantNet", "compile_network", "conv_index", "pool_index"]


# ---------------------------------------------------------------------------------------------
# weight quantizers
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LogWeights:
    """Power-of-two weights ``sign * 2^(q_max - exponent)``, 0 where ``zero``."""

    sign: np.ndarray  # int8, +-1
    exponent: np.ndarray  # int64 >= 0, the right shift
    zero: np.ndarray  # bool
    q_max: int

    def values(self) -> np.ndarray:
        v = self.sign * np.exp2(self.q_max - self.exponent.astype(np.float64))
        return np.where(self.zero, 0.0, v)


def _check_bits(bits, what: str, low: int, high: int) -> int:
    if isinstance(bits, bool) or not isinstance(bits, int | np.integer) or not low <= bits <= high:
        raise ValueError(f"{what} must be an int in [{low}, {high}], got {bits!r}")
    return int(bits)


def log_quantize(w, bits: int = 5, q_max: int | None = None) -> LogWeights:
    """Quantize weights to ``bits``-bit signed powers of two (1 sign bit, ``bits-1`` exponent
    bits of which one code is zero): ``q = round(log2|w|)`` clipped to
    ``[q_max - 2^(bits-1) + 2, q_max]``; smaller magnitudes become 0.

    ``q_max`` defaults to ``round(log2 max|w|)`` (the layer's full-scale range).
    """
    bits = _check_bits(bits, "bits", 2, 9)
    w = np.asarray(w, np.float64)
    levels = (1 << (bits - 1)) - 1  # nonzero exponents
    mag = np.abs(w)
    top = float(mag.max(initial=0.0))
    if q_max is None:
        q_max = int(np.round(np.log2(top))) if top > 0 else 0
    with np.errstate(divide="ignore"):
        q = np.round(np.log2(np.where(mag > 0, mag, 1.0)))
    q = np.minimum(q, q_max)
    q_min = q_max - levels + 1
    # below the smallest level: round to 0 or to 2^q_min, whichever is closer (in magnitude)
    zero = (mag == 0) | ((q < q_min) & (mag < 0.5 * 2.0**q_min))
    q = np.maximum(q, q_min)
    sign = np.where(w < 0, -1, 1).astype(np.int8)
    return LogWeights(sign, (q_max - q).astype(np.int64), zero, int(q_max))


def pow2_parts(w) -> LogWeights:
    """Exact decomposition of weights that already are 0 or ``+-2^k``.

    Raises ValueError naming the first weight that is not a power of two: a shift-accumulate
    layer cannot compute it without a multiplier.
    """
    w = np.asarray(w, np.float64)
    mag = np.abs(w)
    nz = mag > 0
    with np.errstate(divide="ignore"):
        k = np.log2(np.where(nz, mag, 1.0))
    bad = nz & (k != np.round(k))
    if bad.any():
        i = np.flatnonzero(bad.reshape(-1))[0]
        raise ValueError(f"weights must be 0 or +-2^k (power-of-two weights are required for "
                         f"shift-accumulation); found {w.reshape(-1)[i]!r} at flat index {i}")
    k = np.round(k).astype(np.int64)
    q_max = int(k[nz].max()) if nz.any() else 0
    sign = np.where(w < 0, -1, 1).astype(np.int8)
    return LogWeights(sign, np.where(nz, q_max - k, 0), ~nz, q_max)


def uniform_quantize(w, bits: int = 5) -> tuple[np.ndarray, int]:
    """Uniform ``bits``-bit signed weights with a power-of-two step: ``w ~ w_int * 2^sigma``,
    ``w_int`` in ``[-2^(bits-1), 2^(bits-1) - 1]`` (the TCN baseline's weights)."""
    bits = _check_bits(bits, "bits", 2, 16)
    w = np.asarray(w, np.float64)
    top = float(np.abs(w).max(initial=0.0))
    hi = (1 << (bits - 1)) - 1
    sigma = int(np.ceil(np.log2(top / hi))) if top > 0 else 0
    w_int = np.clip(np.round(w / 2.0**sigma), -hi - 1, hi).astype(np.int64)
    return w_int, sigma


# ---------------------------------------------------------------------------------------------
# routing indices (flat, -1 = outside the input / padding)
# ---------------------------------------------------------------------------------------------
def conv_index(in_shape, kernel: int, stride: int, padding: int, groups: int, out_channels: int):
    """``src (C_out*OH*OW, C_in/groups*k*k)`` flat input index of each term (-1 in padding) and
    ``widx`` the matching flat index into the weight tensor ``(C_out, C_in/groups, k, k)``."""
    win = ops.window_positions(in_shape, kernel, stride, padding)  # (C, OH, OW, k, k)
    c, oh, ow = win.shape[:3]
    cg, og = c // groups, out_channels // groups
    chan = (np.arange(out_channels) // og)[:, None] * cg + np.arange(cg)[None, :]
    src = win[chan].transpose(0, 2, 3, 1, 4, 5)  # (C_out, OH, OW, C_in/groups, k, k)
    kk = kernel * kernel
    widx = np.arange(out_channels * cg * kk).reshape(out_channels, 1, 1, cg, kernel, kernel)
    shape = (out_channels, oh, ow, cg, kernel, kernel)
    return (src.reshape(out_channels * oh * ow, -1),
            np.broadcast_to(widx, shape).reshape(out_channels * oh * ow, -1),
            (out_channels, oh, ow))


def pool_index(in_shape, kernel: int, stride: int, padding: int):
    """``src (C*OH*OW, k*k)`` flat index of each window element (-1 in padding), and the
    output shape."""
    win = ops.window_positions(in_shape, kernel, stride, padding)
    return win.reshape(-1, kernel * kernel), win.shape[:3]


# ---------------------------------------------------------------------------------------------
# the integer network
# ---------------------------------------------------------------------------------------------
@dataclass
class QLinear:
    """A convolution or dense layer on integers, with its fused activation/requantization.

    SHE: ``acc[j] = sum_k sign[j,k] * ((x[src[j,k]] << guard) >> exponent[j,k]) + bias[j]``.
    TCN: ``acc[j] = sum_k w_int[j,k] * x[src[j,k]] + bias[j]``.
    Then ``act`` = ``"relu"``: ``clip(acc >> shift, 0, 2^out_bits - 1)``; ``"signed"``:
    ``clip(acc >> shift, -2^(out_bits-1), 2^(out_bits-1) - 1)``; None: logits.

    Weights are kept in the layer's tensor shape (``w_sign``/``w_exp``/``w_zero`` or
    ``w_int``); the per-term arrays the circuits route (``src``, ``sign``, ``exponent``) are
    derived from them (``src = -1`` for padding and zero weights).
    """

    name: str
    kind: str  # "conv" | "dense"
    scheme: str  # "she" | "tcn"
    in_shape: tuple[int, ...]
    out_shape: tuple[int, ...]
    geometry: tuple[int, int, int, int]  # conv: kernel, stride, padding, groups
    bias: np.ndarray
    act: str | None
    shift: int
    out_bits: int
    in_bits: int
    in_signed: bool
    w_sign: np.ndarray | None = None
    w_exp: np.ndarray | None = None
    w_zero: np.ndarray | None = None
    w_int: np.ndarray | None = None
    guard: int = 0
    sigma_acc: int = 0
    sigma_out: int = 0

    # -- per-term view (what the circuits route) -----------------------------------------
    def _index(self):
        if self.kind == "conv":
            k, st, pad, groups = self.geometry
            src, widx, _ = conv_index(self.in_shape, k, st, pad, groups, self.out_shape[0])
            return src, widx
        n_in = int(np.prod(self.in_shape))
        src = np.broadcast_to(np.arange(n_in), (self.out_shape[0], n_in))
        return src, np.arange(self.out_shape[0])[:, None] * n_in + src

    def terms(self) -> dict[str, np.ndarray]:
        """``src`` (-1: none), and ``sign``/``exponent`` (SHE) or ``w_int`` (TCN) per term."""
        src, widx = self._index()
        if self.scheme == "she":
            zero = self.w_zero.reshape(-1)[widx]
            return {"src": np.where(zero, -1, src),
                    "sign": self.w_sign.reshape(-1)[widx].astype(np.int64),
                    "exponent": self.w_exp.reshape(-1)[widx]}
        w = self.w_int.reshape(-1)[widx]
        return {"src": np.where(w == 0, -1, src), "w_int": w}

    @property
    def n_out(self) -> int:
        return int(np.prod(self.out_shape))

    @property
    def n_terms(self) -> int:
        """Nonzero-weight terms that touch the input (no padding): PC_Shift or PC_Mult."""
        return int((self.terms()["src"] >= 0).sum())

    def term_counts(self) -> np.ndarray:
        """Terms per output (each output's accumulator adds this many words)."""
        return (self.terms()["src"] >= 0).sum(axis=1)

    # -- integer model ---------------------------------------------------------------------
    def _apply(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        """The layer's linear map with float64 weights ``w`` (exact on integers)."""
        b = x.shape[0]
        if self.kind == "conv":
            k, st, pad, groups = self.geometry
            y, _ = conv2d(x.reshape((b,) + self.in_shape), w, st, pad, groups)
            return y.reshape(b, -1)
        return x @ w.T

    def _bit_planes(self, x: np.ndarray):
        """``f(i, w)``: the layer's linear map with weights ``w`` of bit plane ``i`` of ``x``.

        A convolution unfolds ``x`` into its im2col columns once (in a small integer dtype)
        and takes each plane's bits from them: the same float64 columns and products as a
        convolution per plane (bits of the zero padding are zero), without unfolding every
        plane again."""
        if self.kind != "conv":
            return lambda i, w: self._apply(((x >> i) & 1).astype(np.float64), w)
        b = x.shape[0]
        k, st, pad, groups = self.geometry
        small = np.int16 if x.size == 0 or (
            x.min() >= np.iinfo(np.int16).min and x.max() <= np.iinfo(np.int16).max) else np.int64
        cols, oh, ow = ops.im2col(x.reshape((b,) + self.in_shape).astype(small), k, st, pad,
                                  groups)
        og = self.out_shape[0] // groups

        def plane(i, w):
            outs = [((col >> i) & 1).astype(np.float64) @ w[g * og:(g + 1) * og].reshape(og, -1).T
                    for g, col in enumerate(cols)]
            out = outs[0] if groups == 1 else np.concatenate(outs, axis=1)
            return ops.cols_to_image(out, b, oh, ow).reshape(b, -1)

        return plane

    def accumulate_int(self, x: np.ndarray) -> np.ndarray:
        """Integer pre-activation for a batch ``x (B, n_in)``.

        Bit-plane form of the circuit's terms, exact in float64: with ``x = sum_i x_i 2^i``
        (two's complement top bit if signed), ``(x << g) >> e = sum_i x_i c_i(e)`` where
        ``c_i(e) = 2^(i+g-e)`` if ``i + g >= e`` else 0 (and -1 for a shifted-out sign bit),
        so the layer is ``in_bits`` ordinary float convolutions with integer weights.
        """
        x = np.asarray(x, np.int64)
        if self.scheme == "tcn":
            w = np.where(self.w_int == 0, 0, self.w_int).astype(np.float64)
            acc = self._apply(x.astype(np.float64), w)
        else:
            a = self.in_bits
            acc = np.zeros((x.shape[0], self.n_out))
            sgn = np.where(self.w_zero, 0, self.w_sign).astype(np.float64)
            planes = self._bit_planes(x)
            for i in range(a):
                p = i + self.guard - self.w_exp
                coef = np.where(p >= 0, np.exp2(np.maximum(p, 0)), 0.0)
                if self.in_signed and i == a - 1:
                    coef = -np.where(p >= 0, coef, 1.0)
                acc += planes(i, sgn * coef)
        if x.size and np.abs(acc).max() >= 2.0**52:
            raise OverflowError("accumulator exceeds exact float64 range")
        return np.rint(acc).astype(np.int64) + self.bias

    def accumulate_terms_int(self, x: np.ndarray) -> np.ndarray:
        """The same sums term by term (the circuits' specification; slow, for tests)."""
        t = self.terms()
        v = t["src"] >= 0
        xs = np.asarray(x, np.int64)[:, np.where(v, t["src"], 0)]
        if self.scheme == "she":
            terms = t["sign"] * ((xs << self.guard) >> t["exponent"])
        else:
            terms = t["w_int"] * xs
        return np.where(v, terms, 0).sum(-1) + self.bias

    def activate_int(self, acc: np.ndarray) -> np.ndarray:
        if self.act is None:
            return acc
        y = acc >> self.shift
        if self.act == "relu":
            return np.clip(y, 0, (1 << self.out_bits) - 1)
        return np.clip(y, -(1 << (self.out_bits - 1)), (1 << (self.out_bits - 1)) - 1)


@dataclass
class QPool:
    """Max over windows ``src (n_out, k*k)`` (-1 = padding, ignored)."""

    name: str
    src: np.ndarray
    out_shape: tuple[int, ...]

    @property
    def n_out(self) -> int:
        return int(self.src.shape[0])

    def forward_int(self, x: np.ndarray) -> np.ndarray:
        v = self.src >= 0
        xs = x[:, np.where(v, self.src, 0)]
        return np.where(v, xs, np.iinfo(np.int64).min).max(-1)


@dataclass
class QSum:
    """Sum over windows ``src (n_out, k*k)`` (-1 = padding, ignored): a mean pool's adder tree
    (its ``1/k^2`` is in the next linear layer's weights)."""

    name: str
    src: np.ndarray
    out_shape: tuple[int, ...]

    @property
    def n_out(self) -> int:
        return int(self.src.shape[0])

    def forward_int(self, x: np.ndarray) -> np.ndarray:
        v = self.src >= 0
        return np.where(v, x[:, np.where(v, self.src, 0)], 0).sum(-1)


@dataclass
class QResidual:
    """A residual block: ``body`` and ``shortcut`` ops (empty: identity) on the same input,
    ``y = (body << lift[0]) + (shortcut << lift[1])`` at scale ``2^sigma_sum``, then the unit
    ``act`` (``"relu"``: ``clip(y >> shift, 0, 2^out_bits - 1)``; ``"signed"``: signed
    saturation; None: ``y`` itself)."""

    name: str
    body: list
    shortcut: list
    lift: tuple[int, int]
    act: str | None
    shift: int
    out_bits: int
    out_shape: tuple[int, ...]
    sigma_sum: int = 0
    sigma_out: int = 0

    @property
    def n_out(self) -> int:
        return int(np.prod(self.out_shape))

    def add_int(self, body: np.ndarray, short: np.ndarray) -> np.ndarray:
        lb, ls = self.lift
        return (np.asarray(body, np.int64) << lb) + (np.asarray(short, np.int64) << ls)

    def activate_int(self, y: np.ndarray) -> np.ndarray:
        if self.act is None:
            return y
        y = y >> self.shift
        if self.act == "relu":
            return np.clip(y, 0, (1 << self.out_bits) - 1)
        return np.clip(y, -(1 << (self.out_bits - 1)), (1 << (self.out_bits - 1)) - 1)


def _forward_ops(ops, x: np.ndarray, outs: list | None) -> np.ndarray:
    for op in ops:
        if isinstance(op, QLinear):
            x = op.activate_int(op.accumulate_int(x))
        elif isinstance(op, QResidual):
            x = op.activate_int(op.add_int(_forward_ops(op.body, x, None),
                                           _forward_ops(op.shortcut, x, None)))
        else:
            x = op.forward_int(x)
        if outs is not None:
            outs.append(x)
    return x


def _leaf_ops(ops):
    for op in ops:
        if isinstance(op, QResidual):
            yield from _leaf_ops(op.body)
            yield from _leaf_ops(op.shortcut)
        yield op


@dataclass
class QuantNet:
    """Compiled integer network; ``ops`` are QLinear / QPool / QSum / QResidual on flat
    activations."""

    name: str
    scheme: str
    input_shape: tuple[int, ...]
    in_bits: int
    act_bits: int
    weight_bits: int
    guard: int
    ops: list = field(default_factory=list)

    def encode_input(self, x) -> np.ndarray:
        """Client: images in [0, 1] -> unsigned ``in_bits``-bit integers (scale 2^-in_bits)."""
        x = np.asarray(x, np.float64)
        if x.shape[1:] != self.input_shape:
            raise ValueError(f"x must have shape (N, {self.input_shape}), got {x.shape}")
        if x.size and not (np.all(np.isfinite(x)) and x.min() >= 0 and x.max() <= 1):
            raise ValueError(f"images must be finite and lie in [0, 1], got values in "
                             f"[{x.min():g}, {x.max():g}]")
        hi = (1 << self.in_bits) - 1
        return np.minimum(np.floor(x * (1 << self.in_bits) + 0.5), hi).astype(np.int64).reshape(
            len(x), -1)

    def forward_int(self, x_int: np.ndarray, return_layers: bool = False):
        """The integer model: logits ``(B, classes)`` (int64) from encoded inputs."""
        outs: list = []
        x = _forward_ops(self.ops, np.asarray(x_int, np.int64), outs)
        return outs if return_layers else x

    def predict(self, x, batch_size: int = 500) -> np.ndarray:
        x = np.asarray(x)
        return np.concatenate([self.forward_int(self.encode_input(x[i:i + batch_size]))
                               .argmax(axis=1) for i in range(0, len(x), batch_size)])

    def accuracy(self, x, y, batch_size: int = 500) -> float:
        return float((self.predict(x, batch_size) == np.asarray(y)).mean())

    def linear_layers(self) -> list[QLinear]:
        return [op for op in self.leaf_ops() if isinstance(op, QLinear)]

    def leaf_ops(self) -> list:
        """Every op in evaluation order, a residual block's body and shortcut ops before the
        block itself (its Add)."""
        return list(_leaf_ops(self.ops))


def _act_scale(values: np.ndarray, act: str, bits: int, percentile: float) -> int:
    mag = np.abs(values) if act == "signed" else np.maximum(values, 0)
    m = float(np.percentile(mag, percentile)) if mag.size else 0.0
    hi = (1 << (bits - 1)) - 1 if act == "signed" else (1 << bits) - 1
    return int(np.ceil(np.log2(m / hi))) if m > 0 else -bits


def compile_network(net: Network, params, x_calib, scheme: str = "she", weight_bits: int = 5,
                    act_bits: int = 5, in_bits: int = 5, guard_bits: int = 0,
                    percentile: float = 99.99, truncation_correction: bool = True) -> QuantNet:
    """Compile a trained float network into SHE's (or TCN's) integer network.

    Batch-norm is folded into the preceding linear layer; activation scales are calibrated
    on ``x_calib`` (float images) at the given ``percentile`` of each activation; a linear layer
    followed by ReLU gets the fused ReLU-and-saturate unit, one followed by anything else a
    signed saturation, the last one none (its outputs are the logits).

    ``truncation_correction``: the floor of every shifted term drops on average
    ``(1 - 2^-d)/2`` (d dropped bits); that public, per-output expectation is added to the
    bias, which costs no gate and removes the systematic bias of truncated shifts.
    """
    if scheme not in ("she", "tcn"):
        raise ValueError(f"scheme must be 'she' or 'tcn', got {scheme!r}")
    weight_bits = _check_bits(weight_bits, "weight_bits", 2, 9 if scheme == "she" else 16)
    act_bits = _check_bits(act_bits, "act_bits", 2, 16)
    in_bits = _check_bits(in_bits, "in_bits", 1, 16)
    guard_bits = _check_bits(guard_bits, "guard_bits", 0, 16)
    fnet, fparams = fold_batchnorm(net, params)
    outs = forward_nodes(fnet, fparams, np.asarray(x_calib, np.float64))
    qn = QuantNet(fnet.name, scheme, fnet.input_shape, in_bits, act_bits, weight_bits,
                  guard_bits)
    lin = [n.name for n in fnet.leaves() if isinstance(n.layer, Conv2d | Dense)]
    ctx = _Ctx(scheme, weight_bits, act_bits, guard_bits, percentile, truncation_correction,
               outs, lin[-1] if lin else None)
    qn.ops, _ = _compile_seq(ctx, list(fnet.layers), fparams, fnet.layer_names,
                             _Word(tuple(fnet.input_shape), -in_bits, False, in_bits), False)
    return qn


@dataclass
class _Ctx:
    """What every layer of :func:`compile_network` reads."""

    scheme: str
    weight_bits: int
    act_bits: int
    guard_bits: int
    percentile: float
    truncation_correction: bool
    outs: dict
    last_linear: str | None


@dataclass
class _Word:
    """The integer word between two ops: shape, scale ``2^sigma``, signedness, width, and a
    mean pool's pending ``1/k^2`` (folded into the next linear layer's weights)."""

    shape: tuple
    sigma: int
    signed: bool
    bits: int
    fold: float = 1.0


def _compile_seq(ctx: _Ctx, layers, params, names, w: _Word, branch: bool):
    """The ops of one sequence of layers from word ``w``; ``branch``: a residual block's body
    or shortcut (a linear layer that ends it keeps its accumulator for the block's adder)."""
    ops: list = []
    i = 0
    while i < len(layers):
        lay, p, name = layers[i], params[i], names[i]
        nxt = layers[i + 1] if i + 1 < len(layers) else None
        if isinstance(lay, Conv2d | Dense):
            op, w = _linear_op(ctx, lay, p, name, w, nxt, names[i + 1] if nxt else None,
                               branch and nxt is None)
            ops.append(op)
            i += 2 if op.act == "relu" else 1
            continue
        if w.fold != 1.0 and not isinstance(lay, Flatten):
            raise ValueError(f"layer {names[i - 1]}: a mean pool must be followed by a linear "
                             "layer (its 1/k^2 is folded into the weights)")
        if isinstance(lay, Residual):
            op, w = _residual_op(ctx, lay, p, name, w, nxt, names[i + 1] if nxt else None)
            ops.append(op)
            i += 2 if op.act == "relu" else 1
            continue
        if isinstance(lay, MaxPool):
            src, out_shape = pool_index(w.shape, lay.kernel, lay.step, lay.padding)
            ops.append(QPool(name, src, out_shape))
            w = replace(w, shape=out_shape)
        elif isinstance(lay, MeanPool):
            src, out_shape = pool_index(w.shape, lay.kernel, lay.step, lay.padding)
            ops.append(QSum(name, src, out_shape))
            kk = lay.kernel**2
            # the adder tree's word: signed, (kk - 1).bit_length() planes wider (circuits)
            w = replace(w, shape=out_shape, signed=True,
                        bits=w.bits + (0 if w.signed else 1) + (kk - 1).bit_length(),
                        fold=1.0 if lay.scaled else 1.0 / kk)
        elif isinstance(lay, Flatten):
            w = replace(w, shape=(int(np.prod(w.shape)),))
        else:
            raise ValueError(f"layer {name} ({lay.kind}) is not supported by SHE's integer "
                             "network (conv, dense, batch-norm after a linear layer, ReLU, "
                             "max-pool, mean-pool, flatten, residual blocks)")
        i += 1
    if w.fold != 1.0 and branch:
        raise ValueError(f"layer {names[-1]}: a mean pool must be followed by a linear layer "
                         "of its own branch")
    return ops, w


def _linear_op(ctx: _Ctx, lay, p, name: str, w: _Word, nxt, nxt_name, ends_branch: bool):
    scheme, shape = ctx.scheme, w.shape
    if isinstance(lay, Conv2d):
        out_shape = lay.out_shape(shape)
        geometry = (lay.kernel, lay.stride, lay.padding, lay.groups)
    else:
        out_shape, geometry = (lay.out_features,), (0, 0, 0, 1)
    W = np.asarray(p["W"], np.float64) * w.fold
    if scheme == "she":
        lw = log_quantize(W, ctx.weight_bits)
        wq = {"w_sign": lw.sign, "w_exp": lw.exponent, "w_zero": lw.zero}
        sigma_w = lw.q_max
    else:
        w_int, sigma_w = uniform_quantize(W, ctx.weight_bits)
        wq = {"w_int": w_int}
    g = ctx.guard_bits if scheme == "she" else 0
    sigma_acc = sigma_w - g + w.sigma
    b = np.asarray(p["b"], np.float64) if lay.bias else np.zeros(out_shape[0])
    b_full = np.repeat(b, int(np.prod(out_shape[1:])) if len(out_shape) > 1 else 1)
    if name == ctx.last_linear or ends_branch:
        act, act_out = None, ctx.outs[name]
    elif isinstance(nxt, ReLU):
        act, act_out = "relu", ctx.outs[nxt_name]
    else:
        act, act_out = "signed", ctx.outs[name]
    shift, sigma_out = 0, sigma_acc
    if act is not None:
        sigma_out = max(_act_scale(act_out, act, ctx.act_bits, ctx.percentile), sigma_acc)
        shift = sigma_out - sigma_acc
    bias_f = b_full / 2.0**sigma_acc
    op = QLinear(name, "conv" if isinstance(lay, Conv2d) else "dense", scheme, tuple(shape),
                 tuple(out_shape), geometry, np.zeros(0, np.int64), act, shift, ctx.act_bits,
                 w.bits, w.signed, guard=g, sigma_acc=sigma_acc, sigma_out=sigma_out, **wq)
    if scheme == "she" and ctx.truncation_correction:
        t = op.terms()
        drop = np.maximum(t["exponent"] - g, 0)  # bits floor() drops from each term
        mean_err = np.where(t["src"] >= 0, t["sign"] * (1 - 2.0**-drop) / 2, 0.0)
        bias_f = bias_f + mean_err.sum(axis=1)
    bias = np.round(bias_f).astype(np.int64)
    if shift > 0:
        bias += 1 << (shift - 1)  # round to nearest in the requantizing shift
    op.bias = bias
    out = _Word(tuple(out_shape), sigma_out, act != "relu", ctx.act_bits) if act else \
        _Word(tuple(out_shape), sigma_acc, True, 0)
    return op, out


def _residual_op(ctx: _Ctx, lay: Residual, p, name: str, w: _Word, nxt, nxt_name):
    body, wb = _compile_seq(ctx, list(lay.body), p["body"],
                            [f"{name}.body.{n}" for n in _auto_names(lay.body)], w, True)
    short, ws = _compile_seq(ctx, list(lay.shortcut), p["shortcut"],
                             [f"{name}.shortcut.{n}" for n in _auto_names(lay.shortcut)], w,
                             True)
    sigma = min(wb.sigma, ws.sigma)
    lift = (wb.sigma - sigma, ws.sigma - sigma)
    if isinstance(nxt, ReLU):
        act, act_out = "relu", ctx.outs[nxt_name]
    else:
        act, act_out = "signed", ctx.outs[f"{name}.add"]
    sigma_out = max(_act_scale(act_out, act, ctx.act_bits, ctx.percentile), sigma)
    shift = sigma_out - sigma
    finer = [ops for ops, lf in ((body, lift[0]), (short, lift[1])) if lf == 0 and ops
             and isinstance(ops[-1], QLinear) and ops[-1].act is None]
    if shift > 0 and finer:
        finer[0][-1].bias = finer[0][-1].bias + (1 << (shift - 1))  # round to nearest
    op = QResidual(name, body, short, lift, act, shift, ctx.act_bits, tuple(wb.shape), sigma,
                   sigma_out)
    return op, _Word(tuple(wb.shape), sigma_out, act != "relu", ctx.act_bits)
