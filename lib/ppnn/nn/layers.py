"""Layer specifications: what a layer is, which shape it produces and what it costs.

A layer spec holds only hyper-parameters (no weights). Shapes are tuples without the batch
axis: ``(C, H, W)`` for images and ``(n,)`` after :class:`Flatten`. Every spec answers

* ``out_shape(in_shape)`` -- shape inference (bad shapes raise ``ValueError``), and
* ``counts(in_shape)`` -- the quantities the papers count: ``relus`` (ReLU evaluations),
  ``macs`` (multiply-accumulates of the linear part), ``params`` (trainable parameters),
  ``comparisons`` (pairwise comparisons of a max-pool: ``k*k - 1`` per output) and
  ``squares`` (x^2 activations).

Conventions (stated once, used everywhere): a convolution output element costs
``C_in/groups * k * k`` MACs; a dense layer ``n_in * n_out``; batch-norm, pooling, the
channel shuffle and the residual addition (or concatenation) cost no MACs (batch-norm is
folded into the preceding linear layer at inference, see
:func:`ppnn.nn.forward.fold_batchnorm`). Parameters count weights and biases;
batch-norm counts ``gamma`` and ``beta`` (running statistics are buffers, not parameters).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

__all__ = [
    "Layer", "Conv2d", "Dense", "ReLU", "MaxPool", "MeanPool", "BatchNorm", "Square", "Flatten",
    "ChannelShuffle", "Residual", "MERGES", "COUNT_COLUMNS",
]

Shape = tuple[int, ...]
COUNT_COLUMNS = ("relus", "macs", "params", "comparisons", "squares")


def _prod(shape: Shape) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n


def _check_int(value, what: str, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int >= {low}, got {type(value).__name__}")
    if value < low:
        raise ValueError(f"{what} must be an int >= {low}, got {value}")


def _image(shape: Shape, layer: Layer) -> tuple[int, int, int]:
    if len(shape) != 3:
        raise ValueError(
            f"{layer.kind} needs an image input (C, H, W), got shape {shape}"
            + ("; insert Flatten() before Dense" if layer.kind == "Dense" else "")
        )
    return shape  # type: ignore[return-value]


def _window_out(size: int, kernel: int, stride: int, padding: int, layer: Layer) -> int:
    span = size + 2 * padding - kernel
    if span < 0:
        raise ValueError(
            f"{layer.kind}: kernel {kernel} larger than padded input {size} + 2*{padding}"
        )
    return span // stride + 1


class Layer:
    """Base class of all layer specs (frozen dataclasses)."""

    kind: ClassVar[str] = "Layer"
    prefix: ClassVar[str] = "layer"

    def out_shape(self, in_shape: Shape) -> Shape:  # pragma: no cover - abstract
        raise NotImplementedError

    def counts(self, in_shape: Shape) -> dict[str, int]:
        return dict.fromkeys(COUNT_COLUMNS, 0)


@dataclass(frozen=True)
class Conv2d(Layer):
    """2-D convolution ``out_channels`` x ``C_in/groups`` x ``kernel`` x ``kernel``.

    Output side ``floor((H + 2*padding - kernel) / stride) + 1`` (zero padding)."""

    out_channels: int
    kernel: int
    stride: int = 1
    padding: int = 0
    bias: bool = True
    groups: int = 1
    name: str | None = field(default=None, kw_only=True, compare=False)
    kind: ClassVar[str] = "Conv2d"
    prefix: ClassVar[str] = "conv"

    def __post_init__(self) -> None:
        _check_int(self.out_channels, "Conv2d.out_channels", 1)
        _check_int(self.kernel, "Conv2d.kernel", 1)
        _check_int(self.stride, "Conv2d.stride", 1)
        _check_int(self.padding, "Conv2d.padding", 0)
        _check_int(self.groups, "Conv2d.groups", 1)
        if self.out_channels % self.groups:
            raise ValueError(
                f"Conv2d.groups={self.groups} must divide out_channels={self.out_channels}"
            )

    def out_shape(self, in_shape: Shape) -> Shape:
        c, h, w = _image(in_shape, self)
        if c % self.groups:
            raise ValueError(f"Conv2d.groups={self.groups} must divide input channels {c}")
        return (self.out_channels,
                _window_out(h, self.kernel, self.stride, self.padding, self),
                _window_out(w, self.kernel, self.stride, self.padding, self))

    def fan_in(self, in_shape: Shape) -> int:
        return in_shape[0] // self.groups * self.kernel * self.kernel

    def counts(self, in_shape: Shape) -> dict[str, int]:
        out = self.out_shape(in_shape)
        k_in = self.fan_in(in_shape)
        return {**super().counts(in_shape), "macs": _prod(out) * k_in,
                "params": self.out_channels * k_in + (self.out_channels if self.bias else 0)}


@dataclass(frozen=True)
class Dense(Layer):
    """Fully connected layer ``y = W x + b`` on a flat input ``(n_in,)``."""

    out_features: int
    bias: bool = True
    name: str | None = field(default=None, kw_only=True, compare=False)
    kind: ClassVar[str] = "Dense"
    prefix: ClassVar[str] = "fc"

    def __post_init__(self) -> None:
        _check_int(self.out_features, "Dense.out_features", 1)

    def out_shape(self, in_shape: Shape) -> Shape:
        if len(in_shape) != 1:
            raise ValueError(
                f"Dense needs a flat input (n,), got shape {in_shape}; insert Flatten() first"
            )
        return (self.out_features,)

    def counts(self, in_shape: Shape) -> dict[str, int]:
        self.out_shape(in_shape)
        n_in = in_shape[0]
        return {**super().counts(in_shape), "macs": n_in * self.out_features,
                "params": n_in * self.out_features + (self.out_features if self.bias else 0)}


@dataclass(frozen=True)
class ReLU(Layer):
    """``max(x, 0)`` elementwise: one ReLU per element."""

    name: str | None = field(default=None, kw_only=True, compare=False)
    kind: ClassVar[str] = "ReLU"
    prefix: ClassVar[str] = "relu"

    def out_shape(self, in_shape: Shape) -> Shape:
        return tuple(in_shape)

    def counts(self, in_shape: Shape) -> dict[str, int]:
        return {**super().counts(in_shape), "relus": _prod(in_shape)}


@dataclass(frozen=True)
class Square(Layer):
    """``x^2`` elementwise (CryptoNets' activation)."""

    name: str | None = field(default=None, kw_only=True, compare=False)
    kind: ClassVar[str] = "Square"
    prefix: ClassVar[str] = "square"

    def out_shape(self, in_shape: Shape) -> Shape:
        return tuple(in_shape)

    def counts(self, in_shape: Shape) -> dict[str, int]:
        return {**super().counts(in_shape), "squares": _prod(in_shape)}


@dataclass(frozen=True)
class _Pool(Layer):
    kernel: int
    stride: int | None = None
    padding: int = 0
    name: str | None = field(default=None, kw_only=True, compare=False)

    def __post_init__(self) -> None:
        _check_int(self.kernel, f"{self.kind}.kernel", 1)
        if self.stride is not None:
            _check_int(self.stride, f"{self.kind}.stride", 1)
        _check_int(self.padding, f"{self.kind}.padding", 0)
        if self.padding * 2 > self.kernel:
            raise ValueError(
                f"{self.kind}.padding must be <= kernel/2 = {self.kernel // 2}, got {self.padding}"
            )

    @property
    def step(self) -> int:
        """The stride (defaults to the kernel size: non-overlapping windows)."""
        return self.kernel if self.stride is None else self.stride

    def out_shape(self, in_shape: Shape) -> Shape:
        c, h, w = _image(in_shape, self)
        return (c, _window_out(h, self.kernel, self.step, self.padding, self),
                _window_out(w, self.kernel, self.step, self.padding, self))


@dataclass(frozen=True)
class MaxPool(_Pool):
    """Max over ``kernel x kernel`` windows (padding counts as -inf): ``k*k - 1``
    comparisons per output."""

    kind: ClassVar[str] = "MaxPool"
    prefix: ClassVar[str] = "maxpool"

    def counts(self, in_shape: Shape) -> dict[str, int]:
        out = self.out_shape(in_shape)
        return {**super().counts(in_shape), "comparisons": _prod(out) * (self.kernel ** 2 - 1)}


@dataclass(frozen=True)
class MeanPool(_Pool):
    """Mean over ``kernel x kernel`` windows (zero padding, divisor ``k*k``).

    ``scaled=True`` is the *scaled* mean pool of CryptoNets / SwaNN: the window sum without
    the division (a linear map that Paillier / leveled HE evaluate without interaction)."""

    scaled: bool = False
    kind: ClassVar[str] = "MeanPool"
    prefix: ClassVar[str] = "meanpool"


@dataclass(frozen=True)
class BatchNorm(Layer):
    """Per-channel (or per-feature for flat inputs) affine normalisation
    ``gamma * (x - mean) / sqrt(var + eps) + beta``."""

    eps: float = 1e-5
    name: str | None = field(default=None, kw_only=True, compare=False)
    kind: ClassVar[str] = "BatchNorm"
    prefix: ClassVar[str] = "bn"

    def __post_init__(self) -> None:
        if not isinstance(self.eps, int | float) or not self.eps > 0:
            raise ValueError(f"BatchNorm.eps must be a float > 0, got {self.eps!r}")

    def out_shape(self, in_shape: Shape) -> Shape:
        if len(in_shape) not in (1, 3):
            raise ValueError(f"BatchNorm needs (C, H, W) or (n,) input, got {in_shape}")
        return tuple(in_shape)

    def counts(self, in_shape: Shape) -> dict[str, int]:
        return {**super().counts(in_shape), "params": 2 * in_shape[0]}


@dataclass(frozen=True)
class Flatten(Layer):
    """``(C, H, W) -> (C*H*W,)`` in C-order (channel-major)."""

    name: str | None = field(default=None, kw_only=True, compare=False)
    kind: ClassVar[str] = "Flatten"
    prefix: ClassVar[str] = "flatten"

    def out_shape(self, in_shape: Shape) -> Shape:
        return (_prod(in_shape),)


@dataclass(frozen=True)
class ChannelShuffle(Layer):
    """ShuffleNet's channel shuffle (Zhang et al. 2018, §3.1): the ``C`` channels, read as a
    ``groups x C/groups`` grid row by row, are written out column by column, so the next
    grouped convolution sees channels of every group. A permutation: no arithmetic."""

    groups: int
    name: str | None = field(default=None, kw_only=True, compare=False)
    kind: ClassVar[str] = "ChannelShuffle"
    prefix: ClassVar[str] = "shuffle"

    def __post_init__(self) -> None:
        _check_int(self.groups, "ChannelShuffle.groups", 1)

    def out_shape(self, in_shape: Shape) -> Shape:
        c, _, _ = _image(in_shape, self)
        if c % self.groups:
            raise ValueError(f"ChannelShuffle.groups={self.groups} must divide the {c} channels")
        return tuple(in_shape)


#: how a :class:`Residual` block joins its two branches
MERGES = ("add", "concat")


@dataclass(frozen=True)
class Residual(Layer):
    """Residual block: ``body(x) + shortcut(x)`` (identity shortcut when empty), or with
    ``merge="concat"`` the channels of ``shortcut(x)`` followed by those of ``body(x)``
    (ShuffleNet's stride-2 unit; the spatial sizes must agree).

    The ReLU after the addition is *not* part of the block; put a :class:`ReLU` after it.
    The addition itself is reported as a row of kind ``Add`` (``Concat``) in
    :meth:`Network.summary`."""

    body: tuple[Layer, ...]
    shortcut: tuple[Layer, ...] = ()
    merge: str = "add"
    name: str | None = field(default=None, kw_only=True, compare=False)
    kind: ClassVar[str] = "Residual"
    prefix: ClassVar[str] = "block"

    def __post_init__(self) -> None:
        object.__setattr__(self, "body", tuple(self.body))
        object.__setattr__(self, "shortcut", tuple(self.shortcut))
        if not self.body:
            raise ValueError("Residual.body must hold at least one layer")
        if self.merge not in MERGES:
            raise ValueError(f"Residual.merge must be one of {MERGES}, got {self.merge!r}")
        for part in (*self.body, *self.shortcut):
            if not isinstance(part, Layer):
                raise TypeError(f"Residual layers must be Layer specs, got {type(part).__name__}")

    def out_shape(self, in_shape: Shape) -> Shape:
        a = tuple(in_shape)
        for layer in self.body:
            a = layer.out_shape(a)
        b = tuple(in_shape)
        for layer in self.shortcut:
            b = layer.out_shape(b)
        if self.merge == "concat":
            if len(a) != 3 or len(b) != 3 or a[1:] != b[1:]:
                raise ValueError(f"Residual (concat): body output {a} and shortcut output {b} "
                                 f"differ in their spatial size (input {in_shape})")
            return (b[0] + a[0], *a[1:])
        if a != b:
            raise ValueError(
                f"Residual: body output {a} and shortcut output {b} differ (input {in_shape})"
            )
        return a
