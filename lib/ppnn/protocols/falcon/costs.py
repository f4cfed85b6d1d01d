"""Closed-form rounds and communication of every Falcon protocol as implemented here.

Derived by hand from the protocol steps (not read off the ledger); the tests check that the
ledger of a real run equals these formulas exactly. Communication is the total number of bits
sent by the three parties in the online phase. Symbols: ``ell`` ring bits (32), ``bp`` bits
of a Z_p element (``ceil(log2 37) = 6``), ``n`` elements.

Building blocks (semi-honest / malicious):

* opening of ``n`` elements of ``b`` bits: 1 round, ``3 n b`` / ``6 n b``;
* product with output size ``n``, operands of ``nx`` and ``ny`` elements: 1 round,
  ``3 n b`` / ``b (6 n + 6 nx + 6 ny)`` (resharing, redundant openings of rho and sigma, and
  the later one-way opening of the check value v: ``3 n b``, no second copy -- see
  ``runtime.Falcon.verify``);
* every top-level protocol that multiplied something adds one round in the malicious setting
  (the batched openings of v) -- except where nothing is pending at its end: private compare
  opens the checks of all earlier products in the round of its tree's last level and the
  check of that level beside ``d`` (no extra round), so Private Compare, Wrap3, DReLU and pow
  end verified; a plain opening with products pending would add a verification round first
  (none of the protocols here has one: pow's bits follow a private compare).

Every function returns ``Cost(rounds, bits)`` and accepts ints or sympy symbols.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sympy as sp

__all__ = ["Cost", "clog2", "pc_cost", "wrap3_cost", "drelu_cost", "relu_cost", "maxpool_cost",
           "pow_cost", "division_cost", "inverse_sqrt_cost", "batchnorm_cost",
           "batchnorm_backward_cost", "mean_cost", "matmul_cost", "mult_cost", "truncation_cost",
           "reconstruct_cost", "bit_injection_cost", "select_share_cost",
           "maxpool_backward_cost", "symbols", "table9"]


@dataclass(frozen=True)
class Cost:
    rounds: object
    bits: object

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.rounds + other.rounds, self.bits + other.bits)

    def __mul__(self, k) -> Cost:
        return Cost(self.rounds * k, self.bits * k)

    __rmul__ = __mul__

    def simplify(self) -> Cost:
        return Cost(sp.simplify(self.rounds), sp.expand(self.bits))


ZERO = Cost(0, 0)


def clog2(x):
    """ceil(log2 x) for ints, a sympy expression for symbols."""
    if isinstance(x, int):
        return math.ceil(math.log2(x))
    return sp.ceiling(sp.log(x, 2))


def _bp(p) -> object:
    return (p - 1).bit_length() if isinstance(p, int) else sp.ceiling(sp.log(p, 2))


def _open(n, b, mal: bool) -> Cost:
    return Cost(1, (6 if mal else 3) * n * b)


def _mult(n, b, mal: bool, nx=None, ny=None) -> Cost:
    nx = n if nx is None else nx
    ny = n if ny is None else ny
    return Cost(1, b * (6 * n + 6 * nx + 6 * ny) if mal else 3 * n * b)


def _check(mal: bool) -> Cost:
    return Cost(1, 0) if mal else ZERO


# -- basic operations ----------------------------------------------------------------------
def reconstruct_cost(n, ell=32, mal=False) -> Cost:
    return _open(n, ell, mal)


def truncation_cost(n, ell=32, mal=False) -> Cost:
    return _open(n, ell, mal)


def mult_cost(n, ell=32, mal=False) -> Cost:
    """Fixed-point product of ``n`` pairs: product, truncation (and the check)."""
    return _mult(n, ell, mal) + _open(n, ell, mal) + _check(mal)


def matmul_cost(m, n, p, ell=32, mal=False, top=True) -> Cost:
    """Fixed-point ``(m x n) @ (n x p)``: only the ``m p`` outputs are reshared/truncated."""
    c = _mult(m * p, ell, mal, m * n, n * p) + _open(m * p, ell, mal)
    return c + (_check(mal) if top else ZERO)


def bit_injection_cost(n, mal=False) -> Cost:
    return _open(n, 1, mal)


def select_share_cost(n, ell=32, mal=False) -> Cost:
    return _open(n, 1, mal) + _mult(n, ell, mal) + _check(mal)


# -- comparisons ---------------------------------------------------------------------------
def pc_cost(n, ell=32, p=37, mal=False, top=True) -> Cost:
    """Algorithm 1 on ``ell + 1`` positions: step 5 (one product over the ``ell`` positions
    ``i >= 1``; position 0 is local), the tree over ``ell + 2`` factors (``ell + 1`` products in
    ``ceil(log2(ell + 2))`` rounds), the opening of ``d``.
    Malicious, the checks ride in the tree's last round and beside ``d``: no extra round
    whether or not it is the top-level protocol (``top`` is accepted for symmetry)."""
    bp = _bp(p)
    step5 = _mult(n * ell, bp, mal, n, n * ell)
    tree = Cost(clog2(ell + 2), _mult(n * (ell + 1), bp, mal).bits)
    return step5 + tree + _open(n, bp, mal)


def wrap3_cost(n, ell=32, p=37, mal=False, top=True) -> Cost:
    """Algorithm 2: open ``x = a + r`` and one private compare (which ends verified)."""
    return _open(n, ell, mal) + pc_cost(n, ell, p, mal, top=False)


def drelu_cost(n, ell=32, p=37, mal=False, top=True) -> Cost:
    """DReLU is Wrap3 on ``2a`` plus local operations (Eq. 11)."""
    return wrap3_cost(n, ell, p, mal, top)


def relu_cost(n, ell=32, p=37, mal=False, top=True) -> Cost:
    """Algorithm 3: DReLU, bit injection (one opened bit), one product."""
    return (drelu_cost(n, ell, p, mal, top=False) + _open(n, 1, mal) + _mult(n, ell, mal)
            + (_check(mal) if top else ZERO))


def maxpool_cost(n, k, ell=32, p=37, mal=False, top=True) -> Cost:
    """Algorithm 4 over ``n`` windows of ``k`` elements: ``k - 1`` sequential steps of DReLU,
    bit injection and one product of the bit with ``k + 1`` values (max and one-hot)."""
    step = (drelu_cost(n, ell, p, mal, top=False) + _open(n, 1, mal)
            + _mult(n * (k + 1), ell, mal, n, n * (k + 1)))
    return (k - 1) * step + (_check(mal) if top else ZERO)


def maxpool_backward_cost(n, k, ell=32, mal=False, top=True) -> Cost:
    return _mult(n * k, ell, mal, n * k, n) + (_check(mal) if top else ZERO)


# -- pow, division, batch norm -------------------------------------------------------------
def pow_cost(n, ell=32, p=37, mal=False, top=True) -> Cost:
    """Algorithm 5: ``ceil(log2 ell)`` rounds of DReLU and one opened bit (each bit follows a
    private compare, so nothing is unverified when it is opened, and nothing at the end)."""
    it = clog2(ell)
    return it * (drelu_cost(n, ell, p, mal, top=False) + _open(n, 1, mal))


def division_cost(n, ell=32, p=37, mal=False) -> Cost:
    """Algorithm 6: pow (verified as it goes), scale b, three fixed-point product rounds (2n,
    2n, n products), scale back."""
    fx = lambda m: _mult(m, ell, mal) + _open(m, ell, mal)  # noqa: E731
    return (pow_cost(n, ell, p, mal, top=False) + _open(n, ell, mal)
            + fx(2 * n) + fx(2 * n) + fx(n) + _open(n, ell, mal) + _check(mal))


def inverse_sqrt_cost(n, ell=32, p=37, mal=False, top=True, iters=4) -> Cost:
    """Eq. 13: pow (verified as it goes), normalise, iteration 0 (a halving), ``iters - 1`` Newton
    iterations of two fixed-point products, one product and a halving truncation, rescale."""
    fx = _mult(n, ell, mal) + _open(n, ell, mal)
    newton = fx + fx + _mult(n, ell, mal) + _open(n, ell, mal)
    return (pow_cost(n, ell, p, mal, top=False) + _open(n, ell, mal) * 2
            + (iters - 1) * newton + _open(n, ell, mal) + (_check(mal) if top else ZERO))


def mean_cost(m, k, ell=32, mal=False) -> Cost:
    """Column means of an (m, k) array: one truncation, plus a public scaling unless m = 2^e
    (a symbolic m is taken to be a power of two)."""
    one = _open(k, ell, mal)
    if not isinstance(m, int):
        return one
    if m == 1:
        return ZERO
    return one if (m & (m - 1)) == 0 else one * 2


def batchnorm_cost(m, C, ell=32, p=37, mal=False, top=True) -> Cost:
    """Algorithm 7 forward on ``(m, C)``: mean, scaled square, variance, inverse sqrt, x^ and
    gamma x^ (per-channel factors broadcast over the batch)."""
    n = m * C
    fx = lambda k, nx=None, ny=None: _mult(k, ell, mal, nx, ny) + _open(k, ell, mal)  # noqa
    return (mean_cost(m, C, ell, mal) + _open(n, ell, mal) + fx(n) + mean_cost(m, C, ell, mal)
            + inverse_sqrt_cost(C, ell, p, mal, top=False) + fx(n, n, C) + fx(n, n, C)
            + (_check(mal) if top else ZERO))


def batchnorm_backward_cost(m, C, ell=32, mal=False, top=True) -> Cost:
    n = m * C
    fx = lambda k, nx=None, ny=None: _mult(k, ell, mal, nx, ny) + _open(k, ell, mal)  # noqa
    return (fx(2 * n) + fx(n) + mean_cost(m, 2 * C, ell, mal) + fx(n, n, C) + fx(n, n, C)
            + (_check(mal) if top else ZERO))


# -- the paper's Table 9 shape -------------------------------------------------------------
def symbols():
    """sympy symbols used in the symbolic table: n, m, k, ell, p (and matmul dims)."""
    return sp.symbols("n m k ell p a b c", positive=True, integer=True)


def table9(ell=None, p=None):
    """Rows of (protocol, dependence, sh rounds, sh bits, mal rounds, mal bits).

    With ``ell``/``p`` None the entries are sympy expressions; with numbers, per-element
    values (n = 1, windows of k = 4, batch norm over m = 128)."""
    n, m, k, ELL, P, a, b, c = symbols()
    ell = ELL if ell is None else ell
    p = P if p is None else p
    numeric = not isinstance(ell, sp.Basic)
    N = 1 if numeric else n
    K = 4 if numeric else k
    M = 128 if numeric else m
    rows = [
        ("MatMul (a x b)(b x c)", "a, b, c", lambda mal: matmul_cost(
            2 if numeric else a, 3 if numeric else b, 2 if numeric else c, ell, mal)),
        ("Private Compare", "n", lambda mal: pc_cost(N, ell, p, mal)),
        ("Wrap3", "n", lambda mal: wrap3_cost(N, ell, p, mal)),
        ("Derivative of ReLU", "n", lambda mal: drelu_cost(N, ell, p, mal)),
        ("ReLU", "n", lambda mal: relu_cost(N, ell, p, mal)),
        ("Maxpool + derivative (k-element windows)", "n, k", lambda mal: maxpool_cost(
            N, K, ell, p, mal)),
        ("Pow", "n", lambda mal: pow_cost(N, ell, p, mal)),
        ("Division", "n", lambda mal: division_cost(N, ell, p, mal)),
        ("Batch Norm (forward, m rows)", "m, C=n", lambda mal: batchnorm_cost(
            M, N, ell, p, mal)),
    ]
    out = []
    for name, dep, fn in rows:
        sh, ml = fn(False), fn(True)
        if not numeric:
            sh, ml = sh.simplify(), ml.simplify()
        out.append((name, dep, sh.rounds, sh.bits, ml.rounds, ml.bits))
    return out


# -- whole networks (the shape of the paper's Tables 2-5) -----------------------------------
def _layer_geometry(layer, shape):
    from ppnn.nn import ops

    k = layer.kernel
    s = layer.step if hasattr(layer, "step") else layer.stride
    c, h, w = shape
    return c, ops.out_size(h, k, s, layer.padding), ops.out_size(w, k, s, layer.padding)


def layer_cost(layer, in_shape, batch: int, ell=32, p=37, mal=False, train=False) -> Cost:
    """Forward cost of one ``ppnn.nn`` layer on a batch (a top-level protocol each)."""
    from ppnn.nn import BatchNorm, Conv2d, Dense, Flatten, MaxPool, MeanPool, ReLU

    size = 1
    for d in in_shape:
        size *= d
    n = batch * size
    if isinstance(layer, Dense):
        return matmul_cost(batch, in_shape[0], layer.out_features, ell, mal)
    if isinstance(layer, Conv2d):
        c, oh, ow = _layer_geometry(layer, in_shape)
        return matmul_cost(batch * oh * ow, c * layer.kernel ** 2, layer.out_channels, ell, mal)
    if isinstance(layer, ReLU):
        return relu_cost(n, ell, p, mal)
    if isinstance(layer, MaxPool):
        c, oh, ow = _layer_geometry(layer, in_shape)
        return maxpool_cost(batch * c * oh * ow, layer.kernel ** 2, ell, p, mal)
    if isinstance(layer, MeanPool):
        c, oh, ow = _layer_geometry(layer, in_shape)
        return ZERO if layer.scaled else _open(batch * c * oh * ow, ell, mal)
    if isinstance(layer, BatchNorm):
        ch = in_shape[0]
        rows = n // ch
        if train:
            return batchnorm_cost(rows, ch, ell, p, mal)
        return _mult(n, ell, mal, n, ch) + _open(n, ell, mal) + _check(mal)
    if isinstance(layer, Flatten):
        return ZERO
    raise ValueError(f"no cost model for layer kind {layer.kind}")


def layer_backward_cost(layer, in_shape, batch: int, first: bool, ell=32, mal=False) -> Cost:
    """Backward cost of one layer (weight gradients scaled by truncation, as implemented)."""
    from ppnn.nn import BatchNorm, Conv2d, Dense, Flatten, MaxPool, MeanPool, ReLU

    size = 1
    for d in in_shape:
        size *= d
    n = batch * size
    if isinstance(layer, Dense | Conv2d):
        pre = ZERO
        if isinstance(layer, Dense):
            rows, fan_in, out = batch, in_shape[0], layer.out_features
        else:
            c, oh, ow = _layer_geometry(layer, in_shape)
            rows, fan_in, out = batch * oh * ow, c * layer.kernel ** 2, layer.out_channels
            if oh * ow > 1:  # the error is pre-scaled before the weight gradient
                pre = _open(rows * out, ell, mal)
        # round 1: dW = x^T delta and (unless first) dx = delta W^T; round 2: truncations
        bits = _mult(fan_in * out, ell, mal, fan_in * rows, rows * out).bits
        tr = fan_in * out + (out if layer.bias else 0)
        if not first:
            bits += _mult(rows * fan_in, ell, mal, rows * out, out * fan_in).bits
            tr += rows * fan_in
        return pre + Cost(2, bits + _open(tr, ell, mal).bits) + _check(mal)
    if isinstance(layer, ReLU):
        return _mult(n, ell, mal) + _check(mal)
    if isinstance(layer, MaxPool):
        c, oh, ow = _layer_geometry(layer, in_shape)
        return maxpool_backward_cost(batch * c * oh * ow, layer.kernel ** 2, ell, mal)
    if isinstance(layer, MeanPool):
        c, oh, ow = _layer_geometry(layer, in_shape)
        return ZERO if layer.scaled else _open(batch * c * oh * ow, ell, mal)
    if isinstance(layer, BatchNorm):
        ch = in_shape[0]
        return batchnorm_backward_cost(n // ch, ch, ell, mal, top=False) + Cost(
            1, _open(2 * ch, ell, mal).bits) + _check(mal)
    if isinstance(layer, Flatten):
        return ZERO
    raise ValueError(f"no cost model for layer kind {layer.kind}")


def network_cost(net, batch: int = 1, ell=32, p=37, mal=False, train=False,
                 per_layer: bool = False):
    """Online rounds and bits of private inference (or one training iteration) of ``net``.

    Training = forward in training mode + the loss (one truncation of the output error when
    ``batch > 8``) + backward down to the first layer with parameters (the error of its input
    is not computed); the SGD update is local."""
    shapes = net.shapes()
    rows = []
    for i, (name, layer) in enumerate(zip(net.layer_names, net.layers)):
        rows.append((name, layer_cost(layer, shapes[i], batch, ell, p, mal, train)))
    if train:
        n_out = batch
        for d in shapes[-1]:
            n_out *= d
        if batch > 8:
            rows.append(("loss", _open(n_out, ell, mal)))
        from ppnn.nn.backprop import first_trainable

        first = first_trainable(net.layers)  # back-propagation stops at the first parameter
        for i in reversed(range(first, len(net.layers))):
            rows.append((f"{net.layer_names[i]}_backward",
                         layer_backward_cost(net.layers[i], shapes[i], batch, i == first, ell,
                                             mal)))
    if per_layer:
        return rows
    total = ZERO
    for _, c in rows:
        total = total + c
    return total
