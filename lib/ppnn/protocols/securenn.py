"""SecureNN's published round and communication complexities, evaluated on ``ppnn.nn`` networks.

SecureNN (Wagh, Gupta, Chandran, PETS 2019) is Falcon's main baseline. It is not implemented
here: its costs are the closed forms its whitepaper prints (snwagh/securenn-public,
``Whitepaper.pdf``, 20 Feb 2019, §7 Tables 1-2), for ``ell``-bit ring elements (64) and a
field Z_67 whose elements it sends as bytes (``bp = 8``: its Table 8 microbenchmarks
reproduce with 8, not with ceil(log2 67) = 7). Communication is the total over the parties;
truncation is local (its Appendix A). Forward: Linear / Conv2d (a Linear on the im2col
dimensions, which reproduces Table 8), DReLU + ReLU, Maxpool. Training follows its Algorithm 12
(App. B.1): the forward pass, ASM (a ReLU of the logits and one DIV(lD) per output), then per
layer the weight-gradient and error products (Linear), ReLU' as "ReLU (after DReLU)" and
Maxpool' as DMP_n, all from Table 2.

Main names: :func:`layer_cost`, :func:`network_cost`, :data:`ELL`, :data:`BP`,
:data:`PRECISION`, :data:`SOURCE`.
"""

from __future__ import annotations

from ppnn.nn import Conv2d, Dense, Flatten, MaxPool, ReLU
from ppnn.nn.backprop import first_trainable

from .falcon.costs import ZERO, Cost

__all__ = ["ELL", "BP", "PRECISION", "SOURCE", "linear_cost", "drelu_cost", "relu_cost",
           "maxpool_cost",
           "select_cost", "dmp_cost", "division_cost", "layer_cost", "network_cost"]

#: SecureNN's ring Z_2^64 (whitepaper §8.1: uint64_t for all variables)
ELL = 64
#: bits per Z_67 element as sent (bytes; Table 8's DReLU rows need 8)
BP = 8
#: fixed-point precision lD (whitepaper §8.1, App. A: 13 bits)
PRECISION = 13
#: where the formulas come from
SOURCE = "SecureNN whitepaper (snwagh/securenn-public Whitepaper.pdf, 20 Feb 2019) §7 Tables 1-2"


def linear_cost(m: int, n: int, v: int, ell: int = ELL) -> Cost:
    """Table 2, Linear_{m,n,v}: ``(m x n)(n x v)``, 2 rounds, ``(2mn + 2nv + mv) ell``."""
    return Cost(2, (2 * m * n + 2 * n * v + m * v) * ell)


def drelu_cost(n: int, ell: int = ELL, bp: int = BP) -> Cost:
    """Table 2, DReLU on ``n`` elements: 8 rounds, ``8 ell log p + 19 ell`` each."""
    return Cost(8, n * (8 * ell * bp + 19 * ell))


def relu_cost(n: int, ell: int = ELL, bp: int = BP) -> Cost:
    """DReLU, then ReLU (after DReLU) (Table 2): 10 rounds, ``8 ell log p + 24 ell`` per
    element (§7.2)."""
    return drelu_cost(n, ell, bp) + select_cost(n, ell)


def maxpool_cost(windows: int, k: int, ell: int = ELL, bp: int = BP) -> Cost:
    """Table 2, Maxpool_n over ``windows`` windows of ``n = k`` elements: ``9 (n - 1)`` rounds,
    ``(8 ell log p + 29 ell)(n - 1)`` per window."""
    return Cost(9 * (k - 1), windows * (8 * ell * bp + 29 * ell) * (k - 1))


def select_cost(n: int, ell: int = ELL) -> Cost:
    """Table 2, ReLU (after DReLU) -- SelectShare of Table 1 -- on ``n`` elements: the ReLU'
    product of back-propagation, 2 rounds, ``5 ell`` each."""
    return Cost(2, 5 * ell * n)


def dmp_cost(windows: int, k: int, ell: int = ELL) -> Cost:
    """Table 2, DMP_n (after Maxpool) over ``windows`` windows of ``n = k`` elements: 2 rounds,
    ``2 (n + 1) ell`` per window. (Its Table 8 rows send about ``7 ell`` per input element
    instead; the printed complexity is used.)"""
    return Cost(2, windows * 2 * (k + 1) * ell)


def division_cost(n: int, ell: int = ELL, bp: int = BP, precision: int = PRECISION) -> Cost:
    """Table 2, NORM(lD) / DIV(lD) on ``n`` elements: ``10 lD`` rounds,
    ``(8 ell log p + 24 ell) lD`` each."""
    return Cost(10 * precision, n * (8 * ell * bp + 24 * ell) * precision)


def _im2col(layer: Conv2d, in_shape) -> tuple[int, int, int]:
    """(output positions, fan-in f^2 i, output channels) of a convolution."""
    _, oh, ow = layer.out_shape(in_shape)
    return oh * ow, layer.fan_in(in_shape), layer.out_channels


def _windows(layer: MaxPool, in_shape) -> tuple[int, int]:
    if layer.step != layer.kernel or layer.padding:
        raise ValueError("SecureNN's Maxpool_n is over disjoint windows (stride = kernel, no "
                         f"padding), got stride {layer.step}, padding {layer.padding}")
    c, oh, ow = layer.out_shape(in_shape)
    return c * oh * ow, layer.kernel ** 2


def _size(shape) -> int:
    out = 1
    for d in shape:
        out *= d
    return out


def layer_cost(layer, in_shape, batch: int = 1, ell: int = ELL, bp: int = BP) -> Cost:
    """Forward cost of one layer on ``batch`` inputs (Table 2)."""
    if isinstance(layer, Dense):
        return linear_cost(batch, in_shape[0], layer.out_features, ell)
    if isinstance(layer, Conv2d):
        pos, fan_in, out = _im2col(layer, in_shape)
        return linear_cost(batch * pos, fan_in, out, ell)
    if isinstance(layer, ReLU):
        return relu_cost(batch * _size(in_shape), ell, bp)
    if isinstance(layer, MaxPool):
        windows, k = _windows(layer, in_shape)
        return maxpool_cost(batch * windows, k, ell, bp)
    if isinstance(layer, Flatten):
        return ZERO
    raise ValueError(f"SecureNN's tables give no cost for a {layer.kind} layer")


def _backward_cost(layer, in_shape, batch: int, first: bool, ell: int) -> Cost:
    """Back-propagation of one layer (Algorithm 12, Eq. 3b/3d): the weight gradient
    ``delta^T a`` and, unless ``first``, the error ``delta W^T`` (independent products, one
    Linear's 2 rounds together); ReLU' and Maxpool' from Table 2."""
    if isinstance(layer, Dense | Conv2d):
        if isinstance(layer, Dense):
            rows, fan_in, out = batch, in_shape[0], layer.out_features
        else:
            pos, fan_in, out = _im2col(layer, in_shape)
            rows = batch * pos
        c = linear_cost(out, rows, fan_in, ell)
        if not first:
            c = Cost(2, c.bits + linear_cost(rows, out, fan_in, ell).bits)
        return c
    if isinstance(layer, ReLU):
        return select_cost(batch * _size(in_shape), ell)
    if isinstance(layer, MaxPool):
        windows, k = _windows(layer, in_shape)
        return dmp_cost(batch * windows, k, ell)
    if isinstance(layer, Flatten):
        return ZERO
    raise ValueError(f"SecureNN's tables give no cost for a {layer.kind} layer")


def network_cost(net, batch: int = 1, train: bool = False, ell: int = ELL, bp: int = BP,
                 precision: int = PRECISION) -> Cost:
    """Rounds and total bits of SecureNN's inference of ``batch`` inputs, or of one training
    iteration on a batch (forward, ASM -- a ReLU of the logits unless the network ends with
    one, and a DIV(lD) per output -- and back-propagation down to the first layer with
    parameters; the SGD update is local)."""
    shapes = net.shapes()
    total = ZERO
    for layer, shape in zip(net.layers, shapes):
        total = total + layer_cost(layer, shape, batch, ell, bp)
    if not train:
        return total
    outputs = batch * _size(shapes[-1])
    if not isinstance(net.layers[-1], ReLU):
        total = total + relu_cost(outputs, ell, bp)
    total = total + division_cost(outputs, ell, bp, precision)
    first = first_trainable(net.layers)
    for i in reversed(range(first, len(net.layers))):
        total = total + _backward_cost(net.layers[i], shapes[i], batch, i == first, ell)
    return total
